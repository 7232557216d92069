"""The study's raters with their outcome (recruitment.selectors.rater_outcomes), by pseudonym
only: the Prolific id stays on the raters page and in the CSV for Prolific."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from recruitment.selectors import ACTIONS, OUTCOMES, rater_outcomes

from .base import StudyAdminApi


class RaterOutcomeSerializer(serializers.Serializer[Any]):
    rater = serializers.CharField(source="rater.pseudonym", help_text="The rater's pseudonym.")
    cohort = serializers.CharField(source="rater.cohort")
    outcome = serializers.ChoiceField(
        choices=OUTCOMES, allow_null=True, help_text="null while the rater is still working."
    )
    action = serializers.ChoiceField(choices=ACTIONS, help_text="What Prolific should do.")
    excluded_from_analysis = serializers.BooleanField()
    reason = serializers.CharField()
    minutes_worked = serializers.FloatField()
    bonus = serializers.DecimalField(max_digits=10, decimal_places=2)


class RaterList(StudyAdminApi):
    """Every rater of the study with their outcome, the Prolific action and why."""

    serializer_class = RaterOutcomeSerializer

    @extend_schema(responses=RaterOutcomeSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        rows = rater_outcomes(study=self.study())
        return Response(RaterOutcomeSerializer(rows, many=True).data)
