"""The live leaderboard, stored snapshots and agreement (the shapes of the CLI's --format json)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from ranking import services
from ranking.models import LeaderboardSnapshot, SubsetFilter
from ranking.serializers import (
    CohortQuerySerializer,
    LeaderboardQuerySerializer,
    LeaderboardResultSerializer,
    leaderboard_response,
)
from ranking.services import cohorts as cohort_services

from .base import IdCursorPagination, StudyAdminApi


class LeaderboardLive(StudyAdminApi):
    """The leaderboard from its latest stored snapshot (`leaderboard --format json`); when the
    judgments changed since, `status` is "updating" and a refit runs in the background.
    `style` gives the style-controlled view, `by` one board per value of a context field, and
    `cohort` that cohort's board (fitted on request) and its agreement with the others."""

    @extend_schema(parameters=[LeaderboardQuerySerializer], responses=LeaderboardResultSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return leaderboard_response(request, self.study())


class LeaderboardCohorts(StudyAdminApi):
    """Every cohort's board and agreement, and agreement between each pair of cohorts (do
    clinicians and the crowd prefer the same replies?)."""

    @extend_schema(parameters=[CohortQuerySerializer], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        query = CohortQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(cohort_services.cohort_analysis(self.study(), **query.validated_data))


class SnapshotSerializer(serializers.ModelSerializer[LeaderboardSnapshot]):
    class Meta:
        model = LeaderboardSnapshot
        fields = [
            "id",
            "judges",
            "subset",
            "created_at",
            "trigger",
            "n_judgments",
            "n_comparisons",
            "n_excluded_raters",
            "n_systems",
            "params",
            "result",
            "duration_ms",
        ]


class SnapshotList(StudyAdminApi[LeaderboardSnapshot], ListAPIView[LeaderboardSnapshot]):
    """Stored leaderboard snapshots (nightly and on-demand refits), newest first."""

    serializer_class = SnapshotSerializer

    class Pages(IdCursorPagination):
        ordering = "-id"
        page_size = 20

    pagination_class = Pages

    def get_queryset(self) -> QuerySet[LeaderboardSnapshot]:
        return LeaderboardSnapshot.objects.filter(study=self.study())


class AgreementQuery(serializers.Serializer[None]):
    subset = serializers.ChoiceField(choices=SubsetFilter.choices, default=SubsetFilter.ALL)


class Agreement(StudyAdminApi):
    """Agreement statistics (`agreement --format json`)."""

    @extend_schema(parameters=[AgreementQuery], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        study = self.study()
        query = AgreementQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(services.agreement_compute(study, **query.validated_data))
