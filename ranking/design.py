"""The design's side of a refit: the stopping rule's reading and adaptive assignment's weights.

Runs after the boards are fitted (`ranking.services.snapshot_refit_study`), on the human
board's verdicts: human raters are the ones the assignment engine serves. A quick Fisher fit
(no bootstrap) gives the log-strengths; `ranking.adaptive` and `ranking.goals` do the maths;
this module loads and stores: `DesignStatus` (what the studio's pairs page shows) and, for a
study with adaptive assignment on, one `annotation.PairPriority` row per pair (what the claim
reads), weighted for the study's goal (`Study.adaptive_goal`).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import Any

import numpy as np
from django.db.models import F, Sum
from django.utils import timezone

from annotation.models import Pair, PairPriority
from completions.models import Study

from . import adaptive, board, bradley_terry, goals
from .models import DesignStatus

#: Judgments planned ahead at each refit: the study's open places, within these bounds.
BATCH_MIN, BATCH_MAX = 50, 2000
WRITE_BATCH = 2000


def design_refresh(*, study: Study, data: Any, params: dict[str, Any]) -> DesignStatus:
    """Store the stopping rule's reading and, when the study is adaptive, the pairs' order."""
    judgments = data.select(judges="human")
    systems = [str(name) for name in data.systems.index]
    comparisons = board.comparisons_from_judgments(
        judgments, weights=params["weights"], ties=params["ties"]
    )
    theta, counts, weight = _fit_inputs(comparisons, systems)
    open_places = _open_places(study)
    status = _status_store(study, systems, theta, counts, weight, params, len(judgments))
    status.judgments_open = open_places
    status.goal_plan = _goal_plan(study, systems, theta, counts, weight, comparisons, params)
    status.save(update_fields=["judgments_open", "goal_plan"])
    if study.adaptive_assignment and systems:
        batch = int(np.clip(open_places, BATCH_MIN, BATCH_MAX))
        goal = study_goal(study, systems)
        weights = goals.goal_pair_weights(
            theta, counts, goal, batch=batch, alpha=params["alpha"], verdict_weight=weight
        )
        priorities_write(study=study, systems=systems, weights=weights)
    return status


def _goal_plan(
    study: Study,
    systems: list[str],
    theta: np.ndarray,
    counts: np.ndarray,
    weight: float,
    comparisons: Any,
    params: dict[str, Any],
) -> dict[str, Any]:
    """The planner for the study's goal at the latest human board: judgments the uniform and
    the adaptive design need in all, and whether the goal is reached already."""
    if len(systems) < 2 or not counts.any():
        return {}
    goal = study_goal(study, systems)
    ties = float((comparisons["winner"] == "tie").mean()) if len(comparisons) else 0.0
    plan = goals.goal_plan(theta, goal, alpha=params["alpha"], verdict_weight=weight, tie_rate=ties)
    cov = adaptive.covariance(counts, adaptive.comparison_information(theta, weight), prior=1e-6)
    reached = goals.goal_status(theta, cov, goal, alpha=params["alpha"]).reached
    return {
        "goal": goal.kind,
        "k": goal.top() if goal.kind in ("best", "top_k") else None,
        "anchor": systems[goal.anchor] if goal.anchor is not None else None,
        "uniform": plan.uniform,
        "adaptive": plan.adaptive,
        "saving": None if plan.saving is None else round(plan.saving, 3),
        "tie_rate": round(ties, 3),
        "reached": reached,
        "judged": int(counts.sum() // 2),
    }


def study_goal(study: Study, systems: list[str]) -> goals.Goal:
    """The study's adaptive goal over ``systems`` (the board's order). An anchor goal whose
    anchor is not on the board (none set, or taken off) serves the whole order instead."""
    kind = study.adaptive_goal
    if kind == "top_k":
        return goals.Goal("top_k", k=max(1, min(study.adaptive_k, len(systems) - 1)))
    if kind == "anchor":
        anchor = study.adaptive_anchor or study.leaderboard_anchor
        if anchor in systems:
            return goals.Goal("anchor", anchor=systems.index(anchor))
        return goals.Goal("order")
    return goals.Goal(kind)


def _fit_inputs(comparisons: Any, systems: list[str]) -> tuple[np.ndarray, np.ndarray, float]:
    if not len(comparisons) or not systems:
        k = len(systems)
        return np.zeros(k), np.zeros((k, k)), 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bradley_terry.BradleyTerryWarning)
        table = bradley_terry.fit(comparisons, ci=None)
    return adaptive.fit_inputs(comparisons, table, systems)


def _open_places(study: Study) -> int:
    left = Pair.objects.filter(study=study).aggregate(n=Sum(F("quota") - F("n_judgments")))
    return max(int(left["n"] or 0), 0)


def _status_store(
    study: Study,
    systems: list[str],
    theta: np.ndarray,
    counts: np.ndarray,
    weight: Any,
    params: dict[str, Any],
    n_judgments: int,
) -> DesignStatus:
    statuses = (
        adaptive.pair_statuses(theta, counts, alpha=params["alpha"], verdict_weight=weight)
        if len(systems) > 1
        else []
    )
    rows = [
        {
            "a": systems[s.a],
            "b": systems[s.b],
            "difference": round(s.difference, 1),
            "half_width": round(s.half_width, 1),
            "separated": s.separated,
            "judgments_needed": s.judgments_needed,
            "judged": int(counts[s.a, s.b]),
        }
        for s in statuses
        if counts[s.a, s.b] or s.separated
    ]
    rows.sort(key=lambda r: (bool(r["separated"]), -float(r["half_width"] or 0.0)))
    status, _ = DesignStatus.objects.update_or_create(
        study=study,
        defaults={
            "computed_at": timezone.now(),
            "n_judgments": n_judgments,
            "level": round(100 * (1 - params["alpha"])),
            "pairs": rows,
        },
    )
    return status


def priorities_write(*, study: Study, systems: list[str], weights: np.ndarray) -> int:
    """One `PairPriority` per open pair of the study: rate = its system pair's weight shared by
    that system pair's open pairs, rank = Exp(1) / rate. Full pairs are left out (the claim
    reads only the best-ranked few, annotation.services.adaptive). Written in batches of their
    own transactions, so a lease's rank update never waits long for the refit."""
    index = {name: i for i, name in enumerate(systems)}
    rows = list(
        Pair.objects.filter(study=study).values_list(
            "id", "completion_a__system__name", "completion_b__system__name", "n_judgments", "quota"
        )
    )
    open_rows: dict[tuple[int, int], int] = defaultdict(int)
    keyed = []
    for pair_id, a, b, judged, quota in rows:
        if judged >= quota:
            continue
        key = (index.get(a, -1), index.get(b, -1))
        keyed.append((pair_id, key))
        open_rows[key] += 1
    PairPriority.objects.filter(study=study, pair__n_judgments__gte=F("pair__quota")).delete()
    rng = np.random.default_rng()
    draws = rng.exponential(size=len(keyed))
    floor = 1e-9
    objects = []
    for (pair_id, (i, j)), draw in zip(keyed, draws, strict=True):
        share = weights[i, j] if i >= 0 and j >= 0 else 0.0
        rate = max(share / max(open_rows[(i, j)], 1), floor)
        objects.append(PairPriority(pair_id=pair_id, study=study, rank=draw / rate, rate=rate))
    for start in range(0, len(objects), WRITE_BATCH):
        PairPriority.objects.bulk_create(
            objects[start : start + WRITE_BATCH],
            update_conflicts=True,
            unique_fields=["pair"],
            update_fields=["rank", "rate"],
        )
    return len(objects)
