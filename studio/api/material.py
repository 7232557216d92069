"""Studies, contexts, systems and completions (contexts and completions in their contract form)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet
from drf_spectacular.utils import extend_schema
from pydantic import Field
from rest_framework import serializers
from rest_framework.generics import ListAPIView, RetrieveAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from completions.access import studies_for_admin
from completions.exports import completion_row, completion_values, context_row, context_values
from completions.formats import CompletionFormat, ContextFormat
from completions.models import Completion, DialogueContext, Study, System

from .base import IdCursorPagination, StudyAdminApi


class StudySerializer(serializers.ModelSerializer[Study]):
    n_contexts = serializers.IntegerField(read_only=True)
    n_systems = serializers.IntegerField(read_only=True)

    class Meta:
        model = Study
        exclude = ["id", "admins", "invite_token", "completion_code"]


class StudyList(StudyAdminApi[Study], ListAPIView[Study]):
    """The studies you administer."""

    serializer_class = StudySerializer

    def get_queryset(self) -> QuerySet[Study]:
        return (
            studies_for_admin(self.request.user)
            .annotate(
                n_contexts=Count("contexts", distinct=True),
                n_systems=Count("systems", distinct=True),
            )
            .order_by("slug")
        )


class StudyDetail(StudyAdminApi[Study], RetrieveAPIView[Study]):
    """One study: its settings (the invitation token and completion code stay in the studio)."""

    serializer_class = StudySerializer

    def get_object(self) -> Study:
        study = self.study()
        # The counts the serializer reads, as the list's annotations give them.
        study.n_contexts = study.contexts.count()  # type: ignore[attr-defined]
        study.n_systems = study.systems.count()  # type: ignore[attr-defined]
        return study


class ContextList(StudyAdminApi[DialogueContext], ListAPIView[DialogueContext]):
    """The study's contexts in the contexts format (a context made by a judgments import and
    not filled in yet has no turns)."""

    pagination_class = IdCursorPagination

    # values() rows, not instances: get() pages them itself (no serializer reads them).
    def get_queryset(self) -> QuerySet[DialogueContext, dict[str, Any]]:  # type: ignore[override]
        return context_values(self.study())

    @extend_schema(responses=ContextFormat)
    def get(self, request: Request, slug: str) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        assert page is not None  # pagination_class is set
        return self.get_paginated_response([context_row(row) for row in page])


class SystemSerializer(serializers.ModelSerializer[System]):
    n_completions = serializers.IntegerField(read_only=True)

    class Meta:
        model = System
        fields = [
            "name",
            "kind",
            "family",
            "ttft_ms",
            "external_score",
            "metadata",
            "n_completions",
        ]


class SystemList(StudyAdminApi[System], ListAPIView[System]):
    """The study's systems (models, human writers, the dataset) with their completion counts."""

    serializer_class = SystemSerializer

    def get_queryset(self) -> QuerySet[System]:
        from completions.selectors import system_list

        return system_list(study=self.study())


class CompletionOut(CompletionFormat):
    """A completion in the completions format; `text_unknown` marks a placeholder made by a
    judgments import whose file had no text (its `text` is then null)."""

    # Narrower in the import format (text required), nullable here: placeholders have none.
    text: str | None = Field(None, description="null when the text is unknown.")  # type: ignore[assignment]
    text_unknown: bool = Field(False, description="Placeholder: never served to raters.")


class CompletionList(StudyAdminApi[Completion], ListAPIView[Completion]):
    """The study's completions in the completions format, with the text-unknown mark."""

    pagination_class = IdCursorPagination

    # values() rows, not instances: get() pages them itself (no serializer reads them).
    def get_queryset(self) -> QuerySet[Completion, dict[str, Any]]:  # type: ignore[override]
        return completion_values(self.study())

    @extend_schema(responses=CompletionOut)
    def get(self, request: Request, slug: str) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        assert page is not None  # pagination_class is set
        return self.get_paginated_response([completion_row(row) for row in page])
