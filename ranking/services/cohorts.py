"""Leaderboards and agreement per cohort of raters, and between cohorts (ranking.cohorts).

The counted human judgments are the main board's (study_data_load: excluded raters left out,
a rater's latest verdict per pair); each keeps its rater's cohort. Judgments without a rater
(LLM judges) belong to no cohort. Per-cohort boards (robust, sandwich, intervals) are fitted by
the refit with the human board and stored with its snapshot; pages and the API read them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annotation.models import Judgment
from completions import cohorts as study_cohorts
from completions.models import Study

from .. import selectors
from ..models import RefitTrigger
from . import (
    StudyData,
    json_safe,
    leaderboard_current,
    params_resolve,
    refit_pending,
    snapshot_request_refit,
)

if TYPE_CHECKING:
    import pandas as pd


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
    study: Study, *, subset: str = "all", preset: str = "default"
) -> dict[str, Any]:
    """Every cohort's board and agreement, and agreement between each pair of cohorts, as the
    refit stored them with the human board (``sections_compute``): no fit here. Until they are
    stored (or while the study's cohorts changed since) a refit is asked for and the result
    says "computing" or "updating", as the leaderboard does."""
    served = leaderboard_current(study, judges="human", subset=subset, preset=preset)
    snapshot = served["snapshot"]
    analysis = _stored(snapshot)
    status = served["status"]
    if snapshot is not None and not _fits_study(analysis, study):
        snapshot_request_refit(
            study=study,
            trigger=RefitTrigger.STALE,
            boards=[["human", subset, preset]],
            read_after=True,
        )
        analysis = _stored(snapshot)  # outside a request the refit has run by now
        if not _fits_study(analysis, study):
            status = "updating" if analysis is not None else "computing"
    pending = refit_pending(study) if status != "current" else None
    served_fields = {
        "status": status,
        "snapshot": snapshot,
        "refit": {"since": pending["since"]} if pending else None,
    }
    return dict(analysis or _placeholder(study, subset=subset, preset=preset), **served_fields)


def _stored(snapshot: dict[str, Any] | None) -> dict[str, Any] | None:
    if snapshot is None:
        return None
    analysis: dict[str, Any] | None = selectors.snapshot_sections(snapshot["id"]).get("cohorts")
    return analysis


def _fits_study(analysis: dict[str, Any] | None, study: Study) -> bool:
    """Whether a stored analysis has the study's cohorts as they are now."""
    return analysis is not None and analysis.get("labels") == cohort_labels(study)


def _placeholder(study: Study, *, subset: str, preset: str) -> dict[str, Any]:
    """The shape of a cohort analysis before the refit has stored one."""
    return {
        "study": study.slug,
        "judges": "human",
        "subset": subset,
        "preset": preset,
        "interval": _interval(params_resolve(preset)),
        "min_verdicts": study.human_majority_min,
        "cohorts": [],
        "between": [],
        "labels": cohort_labels(study),
        "n_judgments_without_cohort": 0,
    }


def cohort_analysis_compute(
    study: Study, *, data: StudyData, subset: str = "all", preset: str = "default"
) -> dict[str, Any]:
    """Fit every cohort's board (the refit calls this; pages read what it stored)."""
    from .. import cohorts

    labels = cohort_labels(study)
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
        labels=labels,
        n_judgments_without_cohort=int(frame["cohort"].isna().sum()),
    )
    return dict(json_safe(result))


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
