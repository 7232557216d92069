"""REST API for study admins: the leaderboard as JSON (the `leaderboard --format json` shape)."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from completions.access import IsStudyAdmin, access_study_for_admin

from . import services
from .models import JudgeFilter, Preset, SubsetFilter


class LeaderboardQuerySerializer(serializers.Serializer[None]):
    judges = serializers.ChoiceField(choices=JudgeFilter.choices, default=JudgeFilter.ALL)
    subset = serializers.ChoiceField(choices=SubsetFilter.choices, default=SubsetFilter.ALL)
    preset = serializers.ChoiceField(choices=Preset.choices, default=Preset.DEFAULT)


class LeaderboardApi(APIView):
    """GET /studio/api/studies/<slug>/leaderboard/?judges=human|llm|all&subset=...&preset=...

    Served from the latest stored snapshot (``status``: current, updating or computing)."""

    permission_classes = [IsStudyAdmin]
    heart_role = "study_admin"

    def get(self, request: Request, slug: str) -> Response:
        study = access_study_for_admin(request.user, slug)
        query = LeaderboardQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(services.leaderboard_current(study, **query.validated_data))
