"""Judgments in the judgments format, cursor-paginated, with filters (django-filter, documented
in the OpenAPI schema by drf-spectacular)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django import forms
from django.db.models import BooleanField, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from django_filters import rest_framework as filters
from django_filters.fields import IsoDateTimeField
from drf_spectacular.utils import extend_schema
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.formats import JudgmentFormat
from annotation.judgment_export import contract_row, export_values
from annotation.models import JudgeKind, Judgment

from .base import IdCursorPagination, StudyAdminApi


class _StrictBooleanField(forms.NullBooleanField):
    """true/false (1/0), or nothing; anything else is refused, never read as no filter."""

    widget = forms.TextInput
    WORDS = {"true": True, "1": True, "false": False, "0": False}

    def to_python(self, value: Any) -> bool | None:  # type: ignore[override]  # None: no filter
        if value in (None, ""):
            return None
        try:
            return self.WORDS[str(value).lower()]
        except KeyError:
            raise forms.ValidationError("Must be true or false.", code="invalid") from None

    def validate(self, value: Any) -> None:
        pass


class StrictBooleanFilter(filters.BooleanFilter):
    field_class = _StrictBooleanField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.TextInput)
        super().__init__(*args, **kwargs)


class _UtcIsoDateTimeField(IsoDateTimeField):
    """ISO 8601 allows offsets PostgreSQL refuses (beyond ±15:59): compare in UTC."""

    def to_python(self, value: Any) -> datetime | None:
        parsed = super().to_python(value)
        if parsed is None or parsed.tzinfo is None:
            return parsed
        try:
            return parsed.astimezone(UTC)
        except OverflowError:
            raise forms.ValidationError("Out of range.", code="invalid") from None


class UtcIsoDateTimeFilter(filters.IsoDateTimeFilter):
    field_class = _UtcIsoDateTimeField


class JudgmentFilter(filters.FilterSet):
    """The judgment list's filters (query parameters, each optional; together they all apply)."""

    judge_kind = filters.ChoiceFilter(choices=JudgeKind.choices)
    rater = filters.CharFilter(method="filter_rater", help_text="A rater's pseudonym (judge id).")
    quality_check = StrictBooleanFilter(
        method="filter_quality_check", help_text="Quality-check items only (true) or none (false)."
    )
    excluded = StrictBooleanFilter(
        method="filter_excluded", help_text="The rater's effective exclusion."
    )
    submitted_after = UtcIsoDateTimeFilter(
        field_name="submitted_at", lookup_expr="gte", help_text="Submitted at or after (ISO 8601)."
    )
    submitted_before = UtcIsoDateTimeFilter(
        field_name="submitted_at", lookup_expr="lt", help_text="Submitted before (ISO 8601)."
    )
    system = filters.CharFilter(method="filter_system", help_text="A system name, on either side.")
    cohort = filters.CharFilter(
        field_name="rater__cohort",
        max_length=40,
        help_text="The human judges of one cohort (crowd, clinician, ...).",
    )

    class Meta:
        model = Judgment
        fields: list[str] = []  # every filter is declared above

    def filter_rater(
        self, queryset: QuerySet[Judgment], name: str, value: str
    ) -> QuerySet[Judgment]:
        return queryset.filter(judge=value, judge_kind="human")

    def filter_quality_check(
        self, queryset: QuerySet[Judgment], name: str, value: bool
    ) -> QuerySet[Judgment]:
        check = Q(quality_check=True) | Q(quality_item__isnull=False)
        return queryset.filter(check if value else ~check)

    def filter_excluded(
        self, queryset: QuerySet[Judgment], name: str, value: bool
    ) -> QuerySet[Judgment]:
        excluded = Coalesce(
            "rater__exclusion_override", "rater__flagged", Value(False), output_field=BooleanField()
        )
        return queryset.alias(is_excluded=excluded).filter(is_excluded=value)

    def filter_system(
        self, queryset: QuerySet[Judgment], name: str, value: str
    ) -> QuerySet[Judgment]:
        return queryset.filter(
            Q(pair__completion_a__system__name=value) | Q(pair__completion_b__system__name=value)
        )


class JudgmentList(StudyAdminApi[Judgment], ListAPIView[Judgment]):
    """Every judgment of the study (quality checks included) in the judgments format.

    `judge` is always the rater's pseudonym, never a Prolific id or e-mail.
    """

    pagination_class = IdCursorPagination
    filter_backends = [filters.DjangoFilterBackend]  # a bad value answers 400, saying which
    filterset_class = JudgmentFilter

    def get_queryset(self) -> QuerySet[Judgment]:
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular reads the filters' model
            return Judgment.objects.none()
        return Judgment.objects.filter(study=self.study())

    @extend_schema(responses=JudgmentFormat)
    def get(self, request: Request, slug: str) -> Response:
        page = self.paginate_queryset(export_values(self.filter_queryset(self.get_queryset())))
        assert page is not None  # pagination_class is set
        return self.get_paginated_response([contract_row(row) for row in page])
