"""The leaderboard API's query and reply shapes (the `leaderboard --format json` shape) and the
response it serves; studio/api/results.py mounts it under /api/."""

from __future__ import annotations

import re
from typing import Any

from django.utils.functional import lazy
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from . import selectors, services
from .models import JudgeFilter, Preset, SubsetFilter
from .services import cohorts as cohort_services

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,99}$")


def _style_help() -> str:
    # The style maths (numpy, pandas) loads when the schema is drawn, not when the web starts.
    from .style import FEATURES

    return (
        "Style-controlled view: the study's style features, comma-separated (e.g. "
        "'length,questions'); `systems` is then the style-controlled board, each row with its "
        "uncontrolled Elo under `uncontrolled`. The study's analysis settings choose the "
        f"features ({', '.join(FEATURES)}); other sets are fitted by the leaderboard "
        "command."
    )


class LeaderboardQuerySerializer(serializers.Serializer[None]):
    judges = serializers.ChoiceField(
        choices=JudgeFilter.choices,
        required=False,
        help_text="Whose verdicts the board counts. Default: the board the study's design makes "
        "primary (the human judges' when humans judged, else the LLM judges').",
    )
    subset = serializers.ChoiceField(choices=SubsetFilter.choices, default=SubsetFilter.ALL)
    preset = serializers.ChoiceField(choices=Preset.choices, default=Preset.DEFAULT)
    style = serializers.CharField(  # type: ignore[assignment]  # a field named like Field.style
        required=False,
        help_text=lazy(_style_help, str)(),
    )
    by = serializers.CharField(
        required=False,
        help_text="Also return one board per value of this context field: emotion_type, "
        "problem_type or a key of the contexts' metadata (under `by`).",
    )

    cohort = serializers.CharField(
        required=False,
        max_length=40,
        help_text="One cohort's board (human judges of that cohort, fitted on request with "
        "robust intervals) with its agreement and its agreement with the other cohorts.",
    )

    def validate_style(self, value: str) -> list[str]:
        from .style import parse_features  # numpy and pandas load with a style request only

        try:
            return parse_features(value)
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc

    def validate_by(self, value: str) -> str:
        if "__" in value or not _KEY.match(value):
            raise ValidationError("letters, digits, '-' and '_' only")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("cohort") and attrs.get("judges") == JudgeFilter.LLM:
            raise serializers.ValidationError({"cohort": ["A cohort board has human judges only."]})
        return attrs


class StyleCoefficientSerializer(serializers.Serializer[Any]):
    coef = serializers.FloatField(help_text="Log-odds of winning per SD of the covariate.")
    se = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    elo_per_sd = serializers.FloatField(help_text="The coefficient on the Elo scale.")
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label


class SystemRowSerializer(serializers.Serializer[Any]):
    system = serializers.CharField()
    kind = serializers.CharField(allow_null=True)
    elo = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    rank_low = serializers.IntegerField(allow_null=True)
    rank_high = serializers.IntegerField(allow_null=True)
    win_rate = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField()
    too_few = serializers.BooleanField(
        required=False,
        help_text="Fewer comparisons than the board's minimum (interval.min_comparisons), or "
        "no finite estimate: Elo, interval and ranks are null, never a prior-held number.",
    )
    uncontrolled = serializers.DictField(
        required=False,
        help_text="With `style`: the same system on the uncontrolled board (elo, ci_low, "
        "ci_high, rank_low, rank_high, se).",
    )


class StyleControlSerializer(serializers.Serializer[Any]):
    features = serializers.ListField(child=serializers.CharField())
    requested = serializers.ListField(child=serializers.CharField())
    dropped = serializers.DictField(child=serializers.CharField())
    systems = SystemRowSerializer(many=True, help_text="The style-controlled board.")
    interval = serializers.DictField()
    note = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())


class CategoryBoardSerializer(serializers.Serializer[Any]):
    n_comparisons = serializers.IntegerField()
    n_judgments = serializers.IntegerField()
    n_contexts = serializers.IntegerField()
    systems = SystemRowSerializer(many=True)
    agreement = serializers.DictField()
    strategies = serializers.DictField(allow_null=True)
    smallest_system_n = serializers.IntegerField()
    too_few = serializers.BooleanField(
        help_text="Too few judgments for a board here (fewer than two systems with the "
        "minimum number of comparisons)."
    )
    interval = serializers.DictField(required=False)
    warnings = serializers.ListField(child=serializers.CharField())


class LeaderboardResultSerializer(serializers.Serializer[Any]):
    """The main fields of a leaderboard result (the rest: see docs/ranking.md)."""

    study = serializers.CharField()
    judges = serializers.CharField()
    subset = serializers.CharField()
    preset = serializers.CharField()
    status = serializers.ChoiceField(choices=["current", "updating", "computing"])
    n_comparisons = serializers.IntegerField()
    interval = serializers.DictField(
        required=False,
        help_text="What each interval is: method, level (null when the method does not reach "
        "its nominal level), nominal_level, unit, label, min_comparisons, and for an asymptotic "
        "formula its measured coverage.",
    )
    counts = serializers.DictField(
        required=False,
        help_text="Which judges the board counts and how they are weighed: human, llm "
        "(counted judgments) and weights (scheme, each source's share).",
    )
    systems = SystemRowSerializer(many=True)
    style = serializers.DictField(  # type: ignore[assignment]  # a field named like Field.style
        child=StyleCoefficientSerializer(),
        required=False,
        help_text="Per style feature, its coefficient with interval (when the study controls "
        "for style).",
    )
    style_control = StyleControlSerializer(required=False, allow_null=True)
    uncontrolled_systems = SystemRowSerializer(many=True, required=False)
    by_key = serializers.CharField(required=False)
    by = serializers.DictField(child=CategoryBoardSerializer(), required=False)
    by_warnings = serializers.ListField(child=serializers.CharField(), required=False)
    by_threshold = serializers.DictField(required=False)


def leaderboard_response(request: Request, study: Any) -> Response:
    """Validate the query, serve the leaderboard, or one cohort's board when ``cohort`` is
    given (400 with the reason when it cannot)."""
    query = LeaderboardQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    params = dict(query.validated_data)
    cohort = params.pop("cohort", None)
    if cohort:
        try:
            board = cohort_services.cohort_board(
                study, cohort=cohort, subset=params["subset"], preset=params["preset"]
            )
        except cohort_services.UnknownCohort:
            known = ", ".join(cohort_services.cohort_labels(study))
            raise ValidationError(
                {"cohort": [f"No cohort {cohort!r} in this study; cohorts: {known}."]}
            ) from None
        return Response(board)
    params["judges"] = params.get("judges") or selectors.default_judges(study)
    try:
        return Response(services.leaderboard_served(study, **params))
    except ValueError as exc:
        raise ValidationError({"detail": str(exc)}) from exc


class CohortQuerySerializer(serializers.Serializer[Any]):
    subset = serializers.ChoiceField(choices=SubsetFilter.choices, default=SubsetFilter.ALL)
    preset = serializers.ChoiceField(choices=Preset.choices, default=Preset.DEFAULT)
