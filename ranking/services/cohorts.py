"""Leaderboards and agreement per cohort of raters, and between cohorts (ranking.cohorts).

The counted human judgments are the main board's (study_data_load: excluded raters left out,
a rater's latest verdict per pair); each keeps its rater's cohort. Judgments without a rater
(LLM judges) belong to no cohort. Per-cohort boards are fitted on request with robust
(sandwich) intervals and cached until the judgments, exclusions, settings or cohorts change.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from django.core.cache import cache

from annotation.models import Judgment
from completions import cohorts as study_cohorts
from completions.models import Study

from .. import selectors
from . import StudyData, json_safe, params_resolve, study_data_load

if TYPE_CHECKING:
    import pandas as pd

CACHE_SECONDS = 600


class UnknownCohort(ValueError):
    """A cohort the study neither defines nor has raters in."""


def cohort_labels(study: Study) -> list[str]:
    """The study's cohorts, then any label its raters still carry after a settings change."""
    defined = study_cohorts.study_cohorts(study)
    carried = set(study.raters.values_list("cohort", flat=True).distinct()) - set(defined)
    return [*defined, *sorted(carried)]


def human_judgments_with_cohort(data: StudyData, study: Study, *, subset: str) -> pd.DataFrame:
    """The counted human judgments of ``subset`` with a ``cohort`` column (their rater's)."""
    human = data.select(judges="human", subset=subset)
    by_id = dict(
        Judgment.objects.filter(study=study, rater__isnull=False).values_list("id", "rater__cohort")
    )
    return human.assign(cohort=human["id"].map(by_id))


def cohort_analysis(
    study: Study, *, subset: str = "all", preset: str = "default", data: StudyData | None = None
) -> dict[str, Any]:
    """Every cohort's board and agreement, and agreement between each pair of cohorts."""
    from .. import cohorts

    labels = cohort_labels(study)
    state = selectors.judgments_state(study)
    key = _cache_key(study, state, labels, subset, preset)
    if data is None and (cached := cache.get(key)) is not None:
        return cached  # type: ignore[no-any-return]  # the cache holds what this function stored
    data = data or study_data_load(study, state=state)
    params = params_resolve(preset)
    params["anchor"] = data.anchor
    frame = human_judgments_with_cohort(data, study, subset=subset)
    result = cohorts.cohort_section(
        frame, params, cohorts=labels, min_verdicts=data.rule.human_min_verdicts
    )
    result.update(
        study=study.slug,
        judges="human",
        subset=subset,
        preset=preset,
        interval=_interval(params),
        n_judgments_without_cohort=int(frame["cohort"].isna().sum()),
    )
    result = dict(json_safe(result))
    cache.set(key, result, CACHE_SECONDS)
    return result


def _interval(params: dict[str, Any]) -> dict[str, Any]:
    """What each cohort board's interval is (`board.quick_params`), with the row minimum."""
    from .. import board

    quick = board.quick_params(params)
    level = round(100 * (1 - params["alpha"]))
    note = {
        "method": quick["ci"],
        "level": level,
        "nominal_level": level,
        "unit": None,
        "min_comparisons": board.min_rows(params),
    }
    return dict(note, label=board.interval_label(note))


def cohort_board(
    study: Study, *, cohort: str, subset: str = "all", preset: str = "default"
) -> dict[str, Any]:
    """One cohort's board with its agreement and its agreement with every other cohort."""
    analysis = cohort_analysis(study, subset=subset, preset=preset)
    entries = {entry["cohort"]: entry for entry in analysis["cohorts"]}
    if cohort not in entries:
        raise UnknownCohort(cohort)
    between = [row for row in analysis["between"] if cohort in (row["left"], row["right"])]
    keep = ("study", "judges", "subset", "preset", "interval", "min_verdicts")
    return {**{k: analysis[k] for k in keep}, **entries[cohort], "between": between}


def _cache_key(
    study: Study, state: dict[str, Any], labels: list[str], subset: str, preset: str
) -> str:
    inputs = json.dumps([state, labels, subset, preset], sort_keys=True, default=str)
    return f"ranking:cohorts:{study.pk}:{hashlib.sha256(inputs.encode()).hexdigest()[:32]}"
