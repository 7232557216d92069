"""REST API for study admins: the leaderboard as JSON (the `leaderboard --format json` shape)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from completions.access import IsStudyAdmin, access_study_for_admin

from . import cohort_services, services
from .models import JudgeFilter, Preset, SubsetFilter


class LeaderboardQuerySerializer(serializers.Serializer):
    judges = serializers.ChoiceField(choices=JudgeFilter.choices, default=JudgeFilter.ALL)
    subset = serializers.ChoiceField(choices=SubsetFilter.choices, default=SubsetFilter.ALL)
    preset = serializers.ChoiceField(choices=Preset.choices, default=Preset.DEFAULT)
    cohort = serializers.CharField(
        required=False,
        max_length=40,
        help_text="One cohort's board (human judges of that cohort, fitted on request with "
        "Fisher intervals) with its agreement and its agreement with the other cohorts.",
    )

    def validate(self, attrs: dict) -> dict:
        if attrs.get("cohort") and attrs["judges"] == JudgeFilter.LLM:
            raise serializers.ValidationError({"cohort": ["A cohort board has human judges only."]})
        return attrs


def leaderboard_response(study, query: dict) -> Response:
    """The snapshot-served board, or one cohort's board when ``cohort`` is given."""
    cohort = query.pop("cohort", None)
    if not cohort:
        return Response(services.leaderboard_current(study, **query))
    try:
        board = cohort_services.cohort_board(
            study, cohort=cohort, subset=query["subset"], preset=query["preset"]
        )
    except cohort_services.UnknownCohort:
        known = ", ".join(cohort_services.cohort_labels(study))
        raise serializers.ValidationError(
            {"cohort": [f"No cohort {cohort!r} in this study; cohorts: {known}."]}
        ) from None
    return Response(board)


class CohortQuerySerializer(serializers.Serializer):
    subset = serializers.ChoiceField(choices=SubsetFilter.choices, default=SubsetFilter.ALL)
    preset = serializers.ChoiceField(choices=Preset.choices, default=Preset.DEFAULT)


class LeaderboardApi(APIView):
    """GET /studio/api/studies/<slug>/leaderboard/?judges=human|llm|all&subset=...&preset=...
    (&cohort=clinician: that cohort's board)

    Served from the latest stored snapshot (``status``: current, updating or computing)."""

    permission_classes = [IsStudyAdmin]
    heart_role = "study_admin"

    def get(self, request: Request, slug: str) -> Response:
        study = access_study_for_admin(request.user, slug)
        query = LeaderboardQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return leaderboard_response(study, dict(query.validated_data))


class LeaderboardCohortsApi(APIView):
    """GET /studio/api/studies/<slug>/leaderboard/cohorts/?subset=...&preset=...: every
    cohort's board and agreement, and agreement between each pair of cohorts."""

    permission_classes = [IsStudyAdmin]
    heart_role = "study_admin"

    @extend_schema(parameters=[CohortQuerySerializer], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        study = access_study_for_admin(request.user, slug)
        query = CohortQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(cohort_services.cohort_analysis(study, **query.validated_data))
