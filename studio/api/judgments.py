"""Judgments in the judgments format, cursor-paginated, with filters."""

from __future__ import annotations

from django.db.models import BooleanField, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.formats import JudgmentFormat
from annotation.judgment_export import contract_row, export_values
from annotation.models import Judgment

from .base import IdCursorPagination, StudyAdminApi


class JudgmentFilters(serializers.Serializer):
    judge_kind = serializers.ChoiceField(choices=["human", "llm"], required=False)
    rater = serializers.CharField(required=False, help_text="A rater's pseudonym (judge id).")
    quality_check = serializers.BooleanField(required=False, allow_null=True, default=None)
    excluded = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="The rater's effective exclusion."
    )
    submitted_after = serializers.DateTimeField(required=False)
    submitted_before = serializers.DateTimeField(required=False)
    system = serializers.CharField(required=False, help_text="A system name, on either side.")
    cohort = serializers.CharField(
        required=False,
        max_length=40,
        help_text="The human judges of one cohort (crowd, clinician, ...).",
    )


def judgments_filtered(queryset: QuerySet, filters: dict) -> QuerySet:
    """Apply JudgmentFilters' validated values to a Judgment queryset."""
    if kind := filters.get("judge_kind"):
        queryset = queryset.filter(judge_kind=kind)
    if rater := filters.get("rater"):
        queryset = queryset.filter(judge=rater, judge_kind="human")
    if filters.get("quality_check") is not None:
        check = Q(quality_check=True) | Q(quality_item__isnull=False)
        queryset = queryset.filter(check if filters["quality_check"] else ~check)
    if filters.get("excluded") is not None:
        excluded = Coalesce(
            "rater__exclusion_override", "rater__flagged", Value(False), output_field=BooleanField()
        )
        queryset = queryset.alias(is_excluded=excluded).filter(is_excluded=filters["excluded"])
    if after := filters.get("submitted_after"):
        queryset = queryset.filter(submitted_at__gte=after)
    if before := filters.get("submitted_before"):
        queryset = queryset.filter(submitted_at__lt=before)
    if cohort := filters.get("cohort"):
        queryset = queryset.filter(rater__cohort=cohort)
    if system := filters.get("system"):
        queryset = queryset.filter(
            Q(pair__completion_a__system__name=system) | Q(pair__completion_b__system__name=system)
        )
    return queryset


class JudgmentList(StudyAdminApi, ListAPIView):
    """Every judgment of the study (quality checks included) in the judgments format.

    `judge` is always the rater's pseudonym, never a Prolific id or e-mail.
    """

    pagination_class = IdCursorPagination

    def get_queryset(self):
        filters = JudgmentFilters(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        queryset = Judgment.objects.filter(study=self.study())
        return export_values(judgments_filtered(queryset, filters.validated_data))

    @extend_schema(parameters=[JudgmentFilters], responses=JudgmentFormat)
    def get(self, request: Request, slug: str) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        assert page is not None  # pagination_class is set
        return self.get_paginated_response([contract_row(row) for row in page])
