"""Leaderboard and agreement: load a study's judgments, fit, analyse, store snapshots.

Definitions (also in docs/ranking.md):

- Counted: judgments on real pairs (quality-check items never count) by judges who are not
  excluded (a rater is excluded when flagged, unless an admin override says otherwise;
  LLM and imported judgments have no rater and always count).
- One judgment is one comparison of the pair's two systems, in canonical orientation.
- Ties count half a win to each side (ties="half", the paper's); "davidson" is optional.
- Weights (default "normalized"): 1 + (strength - 1) / (strength_max - 1), so a human's
  "slightly"/"significantly" and an LLM's 1..5 both map onto 1..2; ties and verdicts without
  a strength weigh 1. "raw" uses the strength itself, "none" weighs every verdict 1.
- CI (default "bootstrap"): 95% percentile interval over 1,000 resamples of dialogue
  contexts (paper 9.12), seed 0 so a refit of the same data gives the same numbers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from completions.models import Study
from labelling import selectors as label_selectors

from . import bradley_terry, humans, llm_judges, plots, selectors
from .models import JudgeFilter, LeaderboardSnapshot, RefitJob, RefitTrigger, SubsetFilter
from .report import analysis_sections, safe_agreement
from .report import strategy_section as report_strategy_section

logger = logging.getLogger(__name__)

DEFAULT_PARAMS: dict[str, Any] = {
    "ci": "bootstrap",
    "ties": "half",
    "weights": "normalized",
    "bootstrap_rounds": 1000,
    "seed": 0,
    "alpha": 0.05,
}
CACHE_SECONDS = 24 * 3600
CACHE_VERSION = "lb2"  # lb2: per-axis fits, exact small-n p-values
LIVE_MAX_AGE = 60  # seconds a live result is reused while new judgments keep arriving


@dataclass
class StudyData:
    """Everything a fit reads from the database, loaded once (a handful of queries)."""

    judgments: pd.DataFrame
    systems: pd.DataFrame
    completions: pd.DataFrame
    n_excluded_raters: int = 0
    state: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)  # which strategy labels `completions` carries

    def select(self, *, judges: str = "all", subset: str = "all") -> pd.DataFrame:
        frame = self.judgments
        if judges != "all":
            frame = frame[frame["judge_kind"] == judges]
        if subset != "all":
            frame = frame[frame["adversarial"] == (subset == "adversarial")]
        return frame


def study_data_load(study: Study, *, state: dict | None = None) -> StudyData:
    """Six queries whatever the study's size (three with a known `state`).

    Strategy labels: the latest finished label set (an LLM label run or imported labels),
    else the completions' own metadata; `labels` says which.
    """
    state = state or selectors.judgments_state(study)
    source = label_selectors.source_from_state(study, state.get("labels"))
    return StudyData(
        judgments=selectors.judgments_frame(study),
        systems=selectors.systems_frame(study),
        completions=selectors.completions_frame(study, label_set=source.label_set),
        n_excluded_raters=state["excluded"][0],
        state=state,
        labels=source.as_dict(),
    )


def params_resolve(**overrides: Any) -> dict[str, Any]:
    params = dict(DEFAULT_PARAMS)
    params.update({key: value for key, value in overrides.items() if value is not None})
    return params


# --------------------------------------------------------------------------- fitting


def comparisons_from_judgments(judgments: pd.DataFrame, *, weights: str) -> pd.DataFrame:
    """The Bradley–Terry input: one weighted comparison per judgment."""
    weight = bradley_terry.strength_weight(
        pd.to_numeric(judgments["strength"], errors="coerce").astype(float),
        pd.to_numeric(judgments["strength_max"], errors="coerce").astype(float),
        weights,
        winner=judgments["winner"],
    )
    return pd.DataFrame(
        {
            "system_a": judgments["system_a"].to_numpy(),
            "system_b": judgments["system_b"].to_numpy(),
            "winner": judgments["winner"].to_numpy(),
            "weight": weight,
            "context": judgments["context"].to_numpy(),
        }
    )


def fit_leaderboard(comparisons: pd.DataFrame, params: dict) -> tuple[pd.DataFrame, list[str]]:
    """Fit, collecting the model's warnings (disconnected graph, a system that always wins)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bradley_terry.BradleyTerryWarning)
        table = bradley_terry.fit(
            comparisons,
            ties=params["ties"],
            ci=params["ci"],
            bootstrap_rounds=params["bootstrap_rounds"],
            seed=params["seed"],
            alpha=params["alpha"],
        )
    messages = [
        str(w.message) for w in caught if issubclass(w.category, bradley_terry.BradleyTerryWarning)
    ]
    return table, messages


def _number(value: Any, digits: int) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else round(value, digits)


def _system_rows(table: pd.DataFrame, systems: pd.DataFrame) -> list[dict]:
    rows = []
    for name, row in table.iterrows():
        info = systems.loc[name] if name in systems.index else None
        rows.append(
            {
                "system": str(name),
                "kind": None if info is None else info["kind"],
                "family": None if info is None else (info["family"] or None),
                "elo": _number(row["elo"], 1),
                "ci_low": _number(row["ci_low"], 1),
                "ci_high": _number(row["ci_high"], 1),
                "se": _number(row["se"], 2),
                "win_rate": _number(row["win_rate"], 4),
                "n": int(row["n"]),
                "axes": {},
            }
        )
    return rows


def leaderboard_from_data(
    data: StudyData, *, study: Study, judges: str, subset: str, params: dict
) -> dict:
    """The leaderboard JSON (contract shape plus analysis sections) for one filter."""
    judgments = data.select(judges=judges, subset=subset)
    games = getattr(study, "llm_games", "both")
    llm_section = llm_judges.llm_judge_section(judgments, games=games)
    if games == "consistent":
        judgments = llm_judges.consistent_games(judgments)
    comparisons = comparisons_from_judgments(judgments, weights=params["weights"])
    table, fit_warnings = fit_leaderboard(comparisons, params)
    systems = _system_rows(table, data.systems)
    result = {
        "study": study.slug,
        "judges": judges,
        "subset": subset,
        "n_comparisons": len(comparisons),
        "n_judgments": len(judgments),
        "n_excluded_raters": data.n_excluded_raters,
        "params": params,
        "warnings": fit_warnings,
        "systems": systems,
        "human_rows": _human_rows(comparisons, data.systems, table, params),
        "llm_judges": llm_section,
    }
    result.update(
        analysis_sections(
            judgments=judgments,
            comparisons=comparisons,
            systems=data.systems,
            completions=data.completions,
            leaderboard=systems,
            params=params,
            split=_subset_split(data, judges=judges, params=params) if subset == "all" else None,
        )
    )
    result["strategies"]["source"] = data.labels
    return _json_safe(result)


def _human_rows(
    comparisons: pd.DataFrame, systems: pd.DataFrame, table: pd.DataFrame, params: dict
) -> list[dict]:
    """Humans (pooled) and Average Human, each fitted with the same settings (ranking.humans)."""
    writers = [] if systems.empty else list(systems.index[systems["kind"] == "human"])
    rows = humans.derived_rows(
        comparisons, writers, table, lambda derived: fit_leaderboard(derived, params)[0]
    )
    for row in rows:
        for key, digits in (("elo", 1), ("ci_low", 1), ("ci_high", 1), ("win_rate", 4)):
            row[key] = _number(row[key], digits)
    return rows


def _subset_split(data: StudyData, *, judges: str, params: dict) -> dict:
    """Elo on regular and on adversarial contexts (point estimates: a quick second look)."""
    split = {}
    quick = dict(params, ci="fisher")
    for subset in (SubsetFilter.REGULAR, SubsetFilter.ADVERSARIAL):
        judgments = data.select(judges=judges, subset=subset)
        if judgments.empty:
            split[subset.value] = {"n_comparisons": 0, "systems": []}
            continue
        table, _ = fit_leaderboard(
            comparisons_from_judgments(judgments, weights=params["weights"]), quick
        )
        split[subset.value] = {
            "n_comparisons": len(judgments),
            "systems": [
                {
                    "system": str(name),
                    "elo": _number(row["elo"], 1),
                    "ci_low": _number(row["ci_low"], 1),
                    "ci_high": _number(row["ci_high"], 1),
                    "weighted_win_rate": _number(row["win_rate"], 4),
                    "n": int(row["n"]),
                }
                for name, row in table.iterrows()
            ],
        }
    return split


def _json_safe(value: Any) -> Any:
    """Plain JSON types only (numpy scalars and NaN become floats and null)."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        value = float(value)
        return None if math.isnan(value) or math.isinf(value) else value
    return value


# --------------------------------------------------------------------------- public API


def leaderboard_compute(
    study: Study,
    *,
    judges: str = "all",
    subset: str = "all",
    data: StudyData | None = None,
    **overrides: Any,
) -> dict:
    """Fit the study's leaderboard for one judge kind and context subset (no storage)."""
    data = data or study_data_load(study)
    return leaderboard_from_data(
        data, study=study, judges=judges, subset=subset, params=params_resolve(**overrides)
    )


def agreement_compute(study: Study, *, data: StudyData | None = None, subset: str = "all") -> dict:
    """Inter-rater and human–LLM agreement over the study's counted judgments."""
    data = data or study_data_load(study)
    judgments = data.select(subset=subset)
    summary = safe_agreement(judgments)
    summary.update({"study": study.slug, "subset": subset, "n_judgments": len(judgments)})
    summary["judge_subsampling"] = llm_judges.subsampling_section(judgments)
    return _json_safe(summary)


def _fingerprint(data: StudyData, judges: str, subset: str, params: dict) -> str:
    digest = hashlib.sha256()
    ids = data.select(judges=judges, subset=subset)["id"].to_numpy(dtype=np.int64)
    digest.update(np.sort(ids).tobytes())
    digest.update(json.dumps(params, sort_keys=True).encode())
    digest.update(data.systems.to_json(orient="split", default_handler=str).encode())
    strategies = data.completions[["system", "strategies"]].astype(str)
    digest.update(pd.util.hash_pandas_object(strategies, index=False).to_numpy().tobytes())
    return digest.hexdigest()


def _snapshot_existing(
    study: Study, judges: str, subset: str, fingerprint: str
) -> LeaderboardSnapshot | None:
    return LeaderboardSnapshot.objects.filter(
        study=study, judges=judges, subset=subset, fingerprint=fingerprint
    ).first()


def snapshot_create(
    *,
    study: Study,
    judges: str = JudgeFilter.ALL,
    subset: str = SubsetFilter.ALL,
    trigger: str = RefitTrigger.COMMAND,
    data: StudyData | None = None,
    agreement: dict | None = None,
    params: dict | None = None,
) -> LeaderboardSnapshot:
    """Fit and store one snapshot; a refit over unchanged inputs returns the stored row."""
    data = data or study_data_load(study)
    params = params or params_resolve()
    fingerprint = _fingerprint(data, judges, subset, params)
    existing = _snapshot_existing(study, judges, subset, fingerprint)
    if existing is not None:
        return existing
    started = time.perf_counter()
    result = leaderboard_from_data(data, study=study, judges=judges, subset=subset, params=params)
    result["agreement"] = (
        agreement if agreement is not None else agreement_compute(study, data=data)
    )
    return _snapshot_store(
        study=study,
        judges=judges,
        subset=subset,
        trigger=trigger,
        data=data,
        params=params,
        result=result,
        fingerprint=fingerprint,
        duration_ms=round(1000 * (time.perf_counter() - started)),
    )


def _snapshot_store(
    *,
    study: Study,
    judges: str,
    subset: str,
    trigger: str,
    data: StudyData,
    params: dict,
    result: dict,
    fingerprint: str,
    duration_ms: int,
) -> LeaderboardSnapshot:
    judgments = data.select(judges=judges, subset=subset)
    try:
        with transaction.atomic():
            return LeaderboardSnapshot.objects.create(
                study=study,
                judges=judges,
                subset=subset,
                trigger=trigger,
                created_at=timezone.now(),
                fingerprint=fingerprint,
                max_judgment_id=int(judgments["id"].max()) if len(judgments) else None,
                n_judgments=len(judgments),
                n_comparisons=result["n_comparisons"],
                n_excluded_raters=data.n_excluded_raters,
                n_systems=len(result["systems"]),
                params=dict(params, state=data.state),
                result=result,
                duration_ms=duration_ms,
            )
    except IntegrityError:  # a concurrent refit stored the same inputs first
        return LeaderboardSnapshot.objects.get(
            study=study, judges=judges, subset=subset, fingerprint=fingerprint
        )


def snapshot_refit_study(*, study_id: int, trigger: str) -> list[LeaderboardSnapshot]:
    """The nightly / on-demand refit: human, LLM and all judges, all contexts."""
    study = Study.objects.get(pk=study_id)
    data = study_data_load(study)
    params = params_resolve()
    judges_kinds = (JudgeFilter.HUMAN, JudgeFilter.LLM, JudgeFilter.ALL)
    # Agreement is the slow part: compute it only when some snapshot is actually new.
    stale = [
        judges
        for judges in judges_kinds
        if _snapshot_existing(
            study,
            judges,
            SubsetFilter.ALL,
            _fingerprint(data, judges, SubsetFilter.ALL, params),
        )
        is None
    ]
    agreement = agreement_compute(study, data=data) if stale else None
    snapshots = [
        snapshot_create(
            study=study,
            judges=judges,
            subset=SubsetFilter.ALL,
            trigger=trigger,
            data=data,
            agreement=agreement,
            params=params,
        )
        for judges in judges_kinds
    ]
    logger.info("refit %s (%s): snapshots %s", study.slug, trigger, [s.pk for s in snapshots])
    return snapshots


REFIT_TASK = "ranking.tasks.refit_job_run"


def snapshot_request_refit(*, study: Study, trigger: str = RefitTrigger.MANUAL) -> RefitJob:
    """Queue a refit once the surrounding transaction commits (the button, the nightly job).

    Never fails the click: with the broker down the refit waits in the outbox (beat sends it).
    """
    from heart_site.enqueue import enqueue

    job = refit_job_create(study_id=study.pk, trigger=trigger)
    transaction.on_commit(lambda: enqueue(REFIT_TASK, job.pk))
    return job


def refit_job_create(*, study_id: int, trigger: str) -> RefitJob:
    return RefitJob.objects.create(study_id=study_id, trigger=trigger)


def refit_job_run(*, job_id: int) -> list[int] | None:
    """Run one requested refit; only the call that claims the job runs it (None otherwise).

    A refit that raises is marked failed with the reason (the history page shows it); a
    worker that dies mid-refit stops renewing the lease and the job is queued again.
    """
    from heart_site.jobs import failure_reason, job_claim, lease_kept

    if not job_claim(RefitJob, job_id):
        return None
    job = RefitJob.objects.get(pk=job_id)
    try:
        with lease_kept(RefitJob, job_id):
            ids = [s.pk for s in snapshot_refit_study(study_id=job.study_id, trigger=job.trigger)]
    except Exception as exc:
        logger.exception("refit job %s failed", job_id)
        _refit_finish(job_id, RefitJob.Status.FAILED, error=failure_reason(exc))
        return None
    _refit_finish(job_id, RefitJob.Status.DONE, snapshot_ids=ids)
    return ids


def _refit_finish(job_id: int, status: str, **fields) -> None:
    RefitJob.objects.filter(pk=job_id).update(
        status=status, finished_at=timezone.now(), lease_until=None, **fields
    )


def refit_jobs_resume() -> list[int]:
    """Queue again the refits whose worker died mid-run (their lease ran out)."""
    from heart_site.enqueue import enqueue
    from heart_site.jobs import jobs_stalled

    ids = list(jobs_stalled(RefitJob).values_list("pk", flat=True))
    for job_id in ids:
        enqueue(REFIT_TASK, job_id)
    return ids


# --------------------------------------------------------------------------- pages


def _cache_key(study: Study, judges: str, subset: str, state: dict) -> str:
    raw = json.dumps([study.pk, study.created_at.isoformat(), judges, subset, state], default=str)
    return f"{CACHE_VERSION}:leaderboard:{hashlib.sha1(raw.encode()).hexdigest()}"


def leaderboard_current(
    study: Study, *, judges: str = "all", subset: str = "all", state: dict | None = None
) -> dict:
    """The result the pages show: cached, else the latest snapshot if still current, else fit.

    "Current" means the judgments and exclusions are as they were when it was stored. While
    raters keep submitting, every judgment changes the state: a result computed in the last
    LIVE_MAX_AGE seconds is reused then, so a busy study is refitted at most once a minute
    per filter instead of on every page view.
    """
    state = state or selectors.judgments_state(study)
    key = _cache_key(study, judges, subset, state)
    recent = {"recent": True}
    if state.get("labels"):  # a new label set is not "one more judgment": it shows at once
        recent["labels"] = state["labels"]
    recent_key = _cache_key(study, judges, subset, recent)
    result = cache.get(key) or cache.get(recent_key)
    if result is None:
        result = _leaderboard_fresh(study, judges=judges, subset=subset, state=state)
        result["cache_key"] = key
        result["computed_at"] = timezone.now().isoformat()
        cache.set(key, result, CACHE_SECONDS)
        cache.set(recent_key, result, LIVE_MAX_AGE)
    return result


def _leaderboard_fresh(study: Study, *, judges: str, subset: str, state: dict) -> dict:
    snapshot = selectors.snapshot_latest(study, judges=judges, subset=subset)
    if snapshot is not None and snapshot.params.get("state") == _json_safe(state):
        return dict(
            snapshot.result,
            snapshot={
                "id": snapshot.pk,
                "created_at": snapshot.created_at.isoformat(),
                "trigger": snapshot.trigger,
            },
        )
    data = study_data_load(study, state=state)
    result = leaderboard_compute(study, judges=judges, subset=subset, data=data)
    result["agreement"] = agreement_compute(study, data=data, subset=subset)
    result["snapshot"] = None
    return result


def leaderboard_plot(
    study: Study, *, name: str, fmt: str, judges: str = "all", subset: str = "all"
) -> bytes:
    """One figure of the result the page shows, encoded; cached with that result."""
    result = leaderboard_current(study, judges=judges, subset=subset)
    key = f"{result['cache_key']}:plot:{name}.{fmt}"
    image = cache.get(key)
    if image is None:
        image = plots.render(name, result, fmt)
        cache.set(key, image, CACHE_SECONDS)
    return image


# --------------------------------------------------------------------------- strategies


def strategy_analysis(study: Study, *, labels: str = "auto") -> dict:
    """Strategy usage per family with SD, range, entropy, coverage and per-item unique count
    (Figure 6, paper 4.8 and 9.10) from the chosen labels; says which labels it used.

    ``labels``: "auto" (latest finished label set, else the completions' metadata),
    "metadata", or a label set's id (LabelSet.DoesNotExist when unknown).
    """
    source = label_selectors.label_source_resolve(study, labels)
    completions = selectors.completions_frame(study, label_set=source.label_set)
    section = report_strategy_section(completions)
    labelled = int(completions["strategies"].map(lambda v: isinstance(v, list)).sum())
    return _json_safe(
        {
            "study": study.slug,
            "labels": source.as_dict(),
            "n_completions": len(completions),
            "n_labelled": labelled,
            "strategies": dict(section, source=source.as_dict()),
        }
    )
