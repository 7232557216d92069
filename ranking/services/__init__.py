"""Leaderboard and agreement: load a study's judgments, fit, store snapshots, serve them.

What is counted (docs/ranking.md says the same to users):

- Judgments on real pairs (quality-check items never count) by judges who are not excluded (a
  rater is excluded when flagged, unless an admin override says otherwise; LLM and imported
  judgments have no rater and always count), under the study's verdict rule
  (`ranking.verdicts`: LLM position swaps as two votes or one consistent verdict, the human
  majority's minimum, the weight of each source on the combined board).
- One verdict is one comparison of the pair's two systems, in canonical orientation; its
  cluster for the bootstrap is the source conversation of its context.
- The fit and its sections are `ranking.board`; its choices come from a preset ("default" or
  "paper") and the study's anchor.

Reading is instant: pages, the API and `leaderboard --from-snapshot` serve the latest stored
snapshot. When the judgments changed since, a refit is queued in the background (through the
outbox, `core.enqueue`) and the page says it is updating.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from completions.families import aliases_merged
from completions.models import Study
from labelling import selectors as label_selectors

from .. import selectors
from ..models import (
    JudgeFilter,
    LeaderboardSnapshot,
    Preset,
    RefitJob,
    RefitTrigger,
    SubsetFilter,
)

if TYPE_CHECKING:  # the maths and its libraries load in the functions that use them (workers)
    import pandas as pd

    from .. import verdicts

logger = logging.getLogger(__name__)

CACHE_SECONDS = 24 * 3600
#: How long a queued refit is shown as "updating" at most (a refit that died is retried then).
REFIT_PENDING_SECONDS = 15 * 60
REFIT_TASK = "ranking.tasks.refit_job_run"
#: While judgments keep arriving, a study's boards are refitted at most once in this long.
REFIT_MIN_SECONDS = 60
#: What a full refit stores: every judge kind on all contexts, the default preset.
FULL_REFIT = [
    (JudgeFilter.HUMAN.value, SubsetFilter.ALL.value, Preset.DEFAULT.value),
    (JudgeFilter.LLM.value, SubsetFilter.ALL.value, Preset.DEFAULT.value),
    (JudgeFilter.ALL.value, SubsetFilter.ALL.value, Preset.DEFAULT.value),
]


def full_refit_boards() -> list[list[str]]:
    """The boards a full refit stores, as [judges, subset, preset] lists (JSON for tasks)."""
    return [list(board_key) for board_key in FULL_REFIT]


@dataclass
class StudyData:
    """Everything a fit reads from the database, loaded once (a handful of queries); the
    judgments already counted under the study's verdict rule, each with its cluster."""

    judgments: pd.DataFrame
    systems: pd.DataFrame
    completions: pd.DataFrame
    raw: pd.DataFrame | None = None  # every verdict as judged (position statistics read these)
    n_excluded_raters: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, Any] = field(
        default_factory=dict
    )  # which strategy labels `completions` carries
    rule: verdicts.VerdictRule = field(default_factory=lambda: verdict_rule_default())
    aliases: dict[str, Any] = field(default_factory=dict)
    anchor: str | None = None
    style_features: list[str] = field(default_factory=list)
    pair_texts: pd.DataFrame | None = None  # per pair, its two texts (style features read them)
    rater_weights: str = "none"  # the study's setting (ranking.raters.RATER_WEIGHTS)
    rater_quality: pd.DataFrame | None = None  # the rater model, fitted once when first needed
    # Every human verdict on a real pair, excluded raters' included (the rater model's input).
    rater_verdicts: pd.DataFrame | None = None
    # What the boards of one refit share (ranking.categories: a category's agreement of every
    # judge and its strategy use), keyed by what it depends on besides this load.
    shared: dict[Any, Any] = field(default_factory=dict)

    def select(
        self, *, judges: str = "all", subset: str = "all", raw: bool = False
    ) -> pd.DataFrame:
        frame = self.raw if raw and self.raw is not None else self.judgments
        if judges != "all":
            frame = frame[frame["judge_kind"] == judges]
        if subset != "all":
            frame = frame[frame["adversarial"] == (subset == "adversarial")]
        return frame


def verdict_rule_default() -> verdicts.VerdictRule:
    from .. import verdicts

    return verdicts.VerdictRule()


def verdict_rule(study: Study) -> verdicts.VerdictRule:
    """The study's rule for which verdicts count (its analysis settings)."""
    from .. import verdicts

    return verdicts.VerdictRule(
        llm_games=cast(verdicts.LlmGames, study.llm_games),  # VerdictRule checks the value
        human_min_verdicts=study.human_majority_min,
        human_share=study.human_weight_share,
    )


def study_data_load(study: Study, *, state: dict[str, Any] | None = None) -> StudyData:
    """A dozen queries whatever the study's size; the judgments table is read once, for the
    boards and for the raters' quality (``rater_verdicts``, excluded raters included).

    Strategy labels: the latest finished label set (an LLM label run or imported labels),
    else the completions' own metadata; `labels` says which.
    """
    from .. import verdicts

    state = state or selectors.judgments_state(study)
    source = label_selectors.source_from_state(study, state.get("labels"))
    rule = verdict_rule(study)
    # One read of the judgments for every section: the raters' quality measures the excluded
    # raters' verdicts too (and those on systems taken off the board), the boards never.
    everyone = selectors.judgments_frame(study, everyone=True)
    everyone["cluster"] = everyone["context"].map(selectors.context_clusters(study))
    human = everyone["judge_kind"] == "human"
    rater_verdicts = everyone[human.to_numpy()].drop(columns="excluded")
    raw = everyone[~everyone["excluded"].to_numpy()].drop(columns="excluded")
    systems = selectors.systems_frame(study)
    gone = selectors.off_board(study)
    if gone:  # systems taken off the board: on record, out of the boards fitted from now on
        raw = raw[~(raw["system_a"].isin(gone) | raw["system_b"].isin(gone))]
        systems = systems[~systems.index.isin(gone)]
    return StudyData(
        judgments=verdicts.counted(raw, rule),
        raw=raw,
        systems=systems,
        completions=selectors.completions_frame(study, label_set=source.label_set),
        n_excluded_raters=state["excluded"][0],
        state=state,
        labels=source.as_dict(),
        rule=rule,
        aliases=aliases_merged(study.family_aliases),
        anchor=study.leaderboard_anchor or None,
        style_features=list(study.style_features or []),
        # Texts are read only when a style-controlled board is fitted.
        pair_texts=selectors.pair_texts_frame(study) if study.style_features else None,
        rater_weights=study.rater_weights,
        rater_verdicts=rater_verdicts,
    )


def pair_texts_ensure(data: StudyData, study: Study) -> StudyData:
    """Load the pairs' texts into ``data`` if they are not there yet (a style fit reads them)."""
    if data.pair_texts is None:
        data.pair_texts = selectors.pair_texts_frame(study)
    return data


def params_resolve(preset: str = "default", **overrides: Any) -> dict[str, Any]:
    from .. import board

    return board.params_resolve(preset, **overrides)


# --------------------------------------------------------------------------- fitting


def leaderboard_from_data(
    data: StudyData, *, study: Study, judges: str, subset: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The leaderboard JSON (contract shape plus human rows and sections) for one filter."""
    from .. import board, llm_judges, measures, style_board

    params = _with_study_settings(data, params)
    judgments = measures.weighted_judgments(
        data.select(judges=judges, subset=subset),
        data=data,
        study=study,
        mode=params["rater_weights"],
    )
    split = None
    if subset == "all":
        split = {
            s.value: data.select(judges=judges, subset=s.value)
            for s in (SubsetFilter.REGULAR, SubsetFilter.ADVERSARIAL)
        }
    result = {
        "study": study.slug,
        "judges": judges,
        "subset": subset,
        "preset": params.get("preset", "default"),
        "n_excluded_raters": data.n_excluded_raters,
        "llm_judges": llm_judges.llm_judge_section(
            data.select(judges=judges, subset=subset, raw=True), games=data.rule.llm_games
        ),
    }
    result.update(
        board.board(
            judgments,
            systems=data.systems,
            completions=data.completions,
            params=params,
            rule=data.rule,
            judges=judges,
            split=split,
            aliases=data.aliases,
        )
    )
    result["strategies"]["source"] = data.labels
    if params.get("style") and data.pair_texts is not None:
        result.update(
            style_board.style_section(
                judgments,
                pair_texts=data.pair_texts,
                names=params["style"],
                systems=data.systems,
                params=params,
                rule=data.rule,
                judges=judges,
                anchor=result.get("anchor"),
            )
        )
        style_board.attach_uncontrolled(result)
        result["llm_judges"]["length_audit"] = style_board.length_audit(
            data.select(subset=subset), pair_texts=data.pair_texts, params=params
        )
    safe: dict[str, Any] = json_safe(result)
    return safe


def _with_study_settings(data: StudyData, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the study's anchor and style features where the caller set none (an
    explicit empty style list turns style control off)."""
    params = dict(params)
    if params.get("anchor") is None:
        params["anchor"] = data.anchor
    if params.get("style") is None and data.style_features:
        params["style"] = list(data.style_features)
    if params.get("rater_weights") is None:
        params["rater_weights"] = data.rater_weights
    return params


def json_safe(value: Any) -> Any:
    """Plain JSON types only (numpy scalars and NaN become floats and null)."""
    # A numpy value exists only where numpy is loaded: a page read (plain JSON) never loads it.
    np = sys.modules.get("numpy")
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return bool(value)
    if np is not None and isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float) or (np is not None and isinstance(value, np.floating)):
        value = float(value)
        return None if math.isnan(value) or math.isinf(value) else value
    return value


def leaderboard_compute(
    study: Study,
    *,
    judges: str = "all",
    subset: str = "all",
    data: StudyData | None = None,
    preset: str = "default",
    **overrides: Any,
) -> dict[str, Any]:
    """Fit the study's leaderboard for one judge kind and context subset (no storage)."""
    data = data or study_data_load(study)
    return leaderboard_from_data(
        data, study=study, judges=judges, subset=subset, params=params_resolve(preset, **overrides)
    )


def agreement_compute(
    study: Study, *, data: StudyData | None = None, subset: str = "all"
) -> dict[str, Any]:
    """Inter-rater and human–LLM agreement over the study's counted judgments."""
    from .. import llm_judges
    from ..report import safe_agreement

    data = data or study_data_load(study)
    judgments = data.select(subset=subset)
    summary = safe_agreement(
        judgments,
        min_human=data.rule.human_min_verdicts,
        aliases=data.aliases,
        raw=data.select(subset=subset, raw=True),
    )
    summary.update(
        {
            "study": study.slug,
            "subset": subset,
            "n_judgments": len(judgments),
            "verdicts": data.rule.as_dict(),
        }
    )
    summary["judge_subsampling"] = llm_judges.subsampling_section(
        judgments, min_human=data.rule.human_min_verdicts
    )
    safe: dict[str, Any] = json_safe(summary)
    return safe


# --------------------------------------------------------------------------- categories


def by_compute(
    data: StudyData, *, study: Study, key: str, judges: str, subset: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The boards of each value of a context field (``ranking.categories``), for one filter."""
    from .. import categories

    params = _with_study_settings(data, params)
    section = categories.category_boards(
        data.select(judges=judges, subset=subset),
        categories=selectors.context_categories(study, key),
        systems=data.systems,
        completions=data.completions,
        params=params,
        rule=data.rule,
        judges=judges,
        everyone=data.select(subset=subset),
        aliases=data.aliases,
        shared=data.shared.setdefault(("by", key, subset), {}),
    )
    safe: dict[str, Any] = json_safe(dict(section, by_key=key))
    return safe


def category_key_check(study: Study, key: str) -> str:
    """``key`` if boards can be split by it (an ESConv field or a metadata key of the study's
    contexts); ValueError naming the choices otherwise."""
    keys = selectors.context_category_keys(study)
    if key not in keys:
        raise ValueError(f"contexts cannot be split by {key!r}; choose from {', '.join(keys)}")
    return key


def leaderboard_by(
    study: Study,
    *,
    key: str,
    judges: str = "all",
    subset: str = "all",
    preset: str = "default",
    result: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The served leaderboard (``leaderboard_current``) with its boards by ``key``, read from
    the snapshot (the refit fits them). A snapshot without them (stored before the key
    existed) asks for a refit and the result says "updating" with ``by_pending``."""
    result = result or leaderboard_current(study, judges=judges, subset=subset, preset=preset)
    section = _stored_by(result, key)
    if section is None and result["snapshot"] is not None:
        snapshot_request_refit(
            study=study,
            trigger=RefitTrigger.STALE,
            boards=[[judges, subset, preset]],
            read_after=True,
        )
        section = _stored_by(result, key)  # outside a request the refit has run by now
    if section is not None:
        return dict(result, **section)
    pending = refit_pending(study)
    waiting = "computing" if result["snapshot"] is None else "updating"
    result = dict(result, status=waiting, refit={"since": pending["since"]} if pending else None)
    return dict(result, by_key=key, by={}, by_warnings=[], by_pending=True)


def _stored_by(result: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The boards by ``key`` stored with the served snapshot, if any."""
    if result["snapshot"] is None:
        return None
    section: dict[str, Any] | None = (
        selectors.snapshot_sections(result["snapshot"]["id"]).get("by", {}).get(key)
    )
    return section


def sections_compute(
    data: StudyData, *, study: Study, judges: str, subset: str, preset: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The boards of a snapshot that pages of their own show: by each context field the study
    can be split by, and (for a human board) by rater cohort."""
    from .cohorts import cohort_analysis_compute

    sections: dict[str, Any] = {
        "by": {
            key: by_compute(data, study=study, key=key, judges=judges, subset=subset, params=params)
            for key in selectors.context_category_keys(study)
        }
    }
    if judges == JudgeFilter.HUMAN:
        sections["cohorts"] = cohort_analysis_compute(
            study, data=data, subset=subset, preset=preset
        )
    return sections


def _sections_outdated(study: Study, judges: str, sections: dict[str, Any]) -> bool:
    """Whether stored sections miss a context field or cohorts the study has now."""
    from .cohorts import cohort_labels

    if set(sections.get("by", {})) != set(selectors.context_category_keys(study)):
        return True
    if judges != JudgeFilter.HUMAN:
        return False
    return bool(sections.get("cohorts", {}).get("labels") != cohort_labels(study))


# --------------------------------------------------------------------------- snapshots


def _fingerprint(data: StudyData, judges: str, subset: str, params: dict[str, Any]) -> str:
    import numpy as np
    import pandas as pd

    digest = hashlib.sha256()
    ids = data.select(judges=judges, subset=subset)["id"].to_numpy(dtype=np.int64)
    digest.update(np.sort(ids).tobytes())
    inputs = {"params": params, "rule": data.rule.as_dict(), "aliases": data.aliases}
    digest.update(json.dumps(inputs, sort_keys=True, default=str).encode())
    digest.update(data.systems.to_json(orient="split", default_handler=str).encode())
    strategies = data.completions[["system", "strategies"]].astype(str)
    digest.update(pd.util.hash_pandas_object(strategies, index=False).to_numpy().tobytes())
    return digest.hexdigest()


def _board_params(data: StudyData, preset: str, params: dict[str, Any] | None) -> dict[str, Any]:
    return _with_study_settings(data, params or params_resolve(preset))


def snapshot_create(
    *,
    study: Study,
    judges: str = JudgeFilter.ALL,
    subset: str = SubsetFilter.ALL,
    preset: str = Preset.DEFAULT,
    trigger: str = RefitTrigger.COMMAND,
    data: StudyData | None = None,
    agreement: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> LeaderboardSnapshot:
    """Fit and store one snapshot; a refit over unchanged inputs returns the stored row."""
    data = data or study_data_load(study)
    params = _board_params(data, preset, params)
    preset = params.get("preset", preset)
    fingerprint = _fingerprint(data, judges, subset, params)
    existing = _snapshot_confirmed(study, judges, subset, preset, fingerprint, data.state)
    if existing is not None:
        return existing
    started = time.perf_counter()
    result = leaderboard_from_data(data, study=study, judges=judges, subset=subset, params=params)
    result["agreement"] = (
        agreement if agreement is not None else agreement_compute(study, data=data, subset=subset)
    )
    sections = sections_compute(
        data, study=study, judges=judges, subset=subset, preset=preset, params=params
    )
    judgments = data.select(judges=judges, subset=subset)
    from ..record import sampling_section

    result["sampling"] = json_safe(
        sampling_section(judgments, study, [str(name) for name in data.systems.index])
    )
    fields = {
        "trigger": trigger,
        "created_at": timezone.now(),
        "max_judgment_id": int(judgments["id"].max()) if len(judgments) else None,
        "n_judgments": len(judgments),
        "n_comparisons": result["n_comparisons"],
        "n_excluded_raters": data.n_excluded_raters,
        "n_systems": len(result["systems"]),
        "params": json_safe(dict(params, state=data.state)),
        "result": result,
        "sections": sections,
        "duration_ms": round(1000 * (time.perf_counter() - started)),
    }
    keys = {"study": study, "judges": judges, "subset": subset, "preset": preset}
    try:
        with transaction.atomic():
            return LeaderboardSnapshot.objects.create(**keys, fingerprint=fingerprint, **fields)
    except IntegrityError:  # a concurrent refit stored the same inputs first
        return LeaderboardSnapshot.objects.get(**keys, fingerprint=fingerprint)


def _snapshot_confirmed(
    study: Study, judges: str, subset: str, preset: str, fingerprint: str, state: dict[str, Any]
) -> LeaderboardSnapshot | None:
    """The snapshot of these exact inputs, if stored, marked current for ``state`` (a new
    quality-check verdict changes the state, not the inputs: nothing is refitted for it)."""
    existing = LeaderboardSnapshot.objects.filter(
        study=study, judges=judges, subset=subset, preset=preset, fingerprint=fingerprint
    ).first()
    state = json_safe(state)
    if existing is not None and existing.params.get("state") != state:
        existing.params = dict(existing.params, state=state)
        existing.save(update_fields=["params"])
    return existing


def snapshot_refit_study(
    *, study_id: int, trigger: str, boards: list[Any] | None = None
) -> list[LeaderboardSnapshot]:
    """Refit a study's boards (default: human, LLM and all judges, all contexts, the default
    preset) from one load, agreement computed once per context subset. Unchanged inputs
    store nothing new."""
    from ..record import systems_added_sync

    study = Study.objects.get(pk=study_id)
    systems_added_sync(study)
    data = study_data_load(study)
    agreements: dict[str, dict[str, Any]] = {}
    snapshots = []
    for judges, subset, preset in [tuple(b) for b in boards or FULL_REFIT]:
        params = _board_params(data, preset, None)
        fingerprint = _fingerprint(data, judges, subset, params)
        stored = _snapshot_confirmed(study, judges, subset, preset, fingerprint, data.state)
        if stored is not None:
            _sections_ensure(stored, data=data, study=study, params=params)
        if stored is None and subset not in agreements:
            agreements[subset] = agreement_compute(study, data=data, subset=subset)
        snapshots.append(
            stored
            or snapshot_create(
                study=study,
                judges=judges,
                subset=subset,
                preset=preset,
                trigger=trigger,
                data=data,
                agreement=agreements.get(subset),
                params=params,
            )
        )
    from .. import measures

    measures.measures_attach(
        study=study, data=data, snapshots=snapshots, params=_board_params(data, "default", None)
    )
    logger.info("refit %s (%s): snapshots %s", study.slug, trigger, [s.pk for s in snapshots])
    _design_refresh(study, data)
    return snapshots


def _sections_ensure(
    snapshot: LeaderboardSnapshot, *, data: StudyData, study: Study, params: dict[str, Any]
) -> None:
    """Fit the sections a stored snapshot of unchanged inputs lacks (a context field or a
    cohort added since, or a snapshot stored before sections were)."""
    stored = selectors.snapshot_sections(snapshot.pk)
    if not _sections_outdated(study, snapshot.judges, stored):
        return
    snapshot.sections = sections_compute(
        data,
        study=study,
        judges=snapshot.judges,
        subset=snapshot.subset,
        preset=snapshot.preset,
        params=params,
    )
    snapshot.save(update_fields=["sections"])


def _design_refresh(study: Study, data: StudyData) -> None:
    """The stopping rule and adaptive assignment's weights (ranking.design) follow each refit;
    a failure there is logged and never fails the boards already stored."""
    from ..design import design_refresh

    try:
        design_refresh(study=study, data=data, params=params_resolve(Preset.DEFAULT))
    except Exception:
        logger.exception("design refresh of %s failed", study.slug)


# --------------------------------------------------------------------------- background refits


def refit_pending(study: Study) -> dict[str, Any] | None:
    """The study's queued or running refits: {"since": ISO time, "boards": [...]}, or None.

    A queued job older than REFIT_PENDING_SECONDS no longer counts (its task was lost: the next
    request queues a new one); a running job whose worker died is queued again by
    `refit_jobs_resume` once its lease lapses."""
    fresh = timezone.now() - timedelta(seconds=REFIT_PENDING_SECONDS)
    jobs = list(
        RefitJob.objects.filter(study=study, created_at__gte=fresh)
        .filter(status__in=[RefitJob.Status.QUEUED, RefitJob.Status.RUNNING])
        .order_by("created_at")
        .values_list("created_at", "boards")
    )
    if not jobs:
        return None
    boards: list[Any] = []
    for _created, job_boards in jobs:
        boards += [b for b in (job_boards or full_refit_boards()) if b not in boards]
    return {"since": jobs[0][0].isoformat(), "boards": boards}


def snapshot_request_refit(
    *,
    study: Study,
    trigger: str = RefitTrigger.MANUAL,
    boards: list[Any] | None = None,
    read_after: bool = False,
) -> bool:
    """Queue a background refit (a `RefitJob`) once the surrounding transaction commits, unless
    one for the same boards is already pending. True when one was queued. Never fails the
    request: with the broker down the refit waits in the outbox (beat sends it).

    With in-process Celery (the demo, tests) there is no worker to wait for: inside a request
    the refit runs once the response has been sent (`core.after_response`), so no page waits
    for a fit; outside one (a command, a test) with ``read_after`` (the caller reads the
    result next) it runs at once."""
    from celery import current_app

    from core.after_response import after_response, in_request
    from core.enqueue import enqueue

    wanted = [list(b) for b in boards] if boards else full_refit_boards()
    eager = current_app.conf.task_always_eager
    inline = eager and read_after and not in_request()
    pending = refit_pending(study)
    if pending and all(b in pending["boards"] for b in wanted) and not inline:
        return False
    job = RefitJob.objects.create(study=study, trigger=trigger, boards=wanted)
    if eager and in_request():
        after_response(lambda: enqueue(REFIT_TASK, job.pk))
    elif inline:
        enqueue(REFIT_TASK, job.pk)
    else:
        transaction.on_commit(lambda: enqueue(REFIT_TASK, job.pk))
    return True


def adaptive_plans_refresh() -> list[int]:
    """Beat: every open study with adaptive assignment whose judgments changed since its latest
    human board gets a background refit (which writes the new draw order), so its raters follow
    a plan minutes old instead of last night's. At most one refit per study per
    REFIT_MIN_SECONDS, none while one is pending. Returns the ids of the studies queued."""
    from completions.models import StudyStatus

    queued = []
    for study in Study.objects.filter(adaptive_assignment=True, status=StudyStatus.OPEN):
        snapshot = selectors.snapshot_latest(
            study, judges=JudgeFilter.HUMAN.value, subset=SubsetFilter.ALL.value, preset="default"
        )
        state = selectors.judgments_state(study)
        if snapshot is not None and snapshot_is_current(snapshot, state):
            continue
        if _refitted_recently(snapshot):
            continue
        if snapshot_request_refit(study=study, trigger=RefitTrigger.STALE):
            queued.append(study.pk)
    return queued


def refit_job_create(*, study_id: int, trigger: str, boards: list[Any] | None = None) -> RefitJob:
    return RefitJob.objects.create(study_id=study_id, trigger=trigger, boards=boards or [])


def refit_job_run(*, job_id: int) -> list[int] | None:
    """Run one requested refit; only the call that claims the job runs it (None otherwise).

    A refit that raises is marked failed with the reason (the history page shows it); a
    worker that dies mid-refit stops renewing the lease and the job is queued again.
    """
    from core.jobs import failure_reason, job_claim, lease_kept

    if not job_claim(RefitJob, job_id):
        return None
    job = RefitJob.objects.get(pk=job_id)
    try:
        with lease_kept(RefitJob, job_id):
            snapshots = snapshot_refit_study(
                study_id=job.study_id, trigger=job.trigger, boards=job.boards or None
            )
    except Exception as exc:
        logger.exception("refit job %s failed", job_id)
        _refit_finish(job_id, RefitJob.Status.FAILED, error=failure_reason(exc))
        return None
    ids = [s.pk for s in snapshots]
    _refit_finish(job_id, RefitJob.Status.DONE, snapshot_ids=ids)
    return ids


def _refit_finish(job_id: int, status: str, **fields: Any) -> None:
    RefitJob.objects.filter(pk=job_id).update(
        status=status, finished_at=timezone.now(), lease_until=None, **fields
    )


def refit_jobs_resume() -> list[int]:
    """Queue again the refits whose worker died mid-run (their lease ran out)."""
    from core.enqueue import enqueue
    from core.jobs import jobs_stalled

    ids = list(jobs_stalled(RefitJob).values_list("pk", flat=True))
    for job_id in ids:
        enqueue(REFIT_TASK, job_id)
    return ids


# --------------------------------------------------------------------------- reading


def snapshot_is_current(snapshot: LeaderboardSnapshot, state: dict[str, Any]) -> bool:
    """Whether a snapshot was fitted on the inputs ``state`` describes (judgments_state)."""
    return bool(snapshot.params.get("state") == json_safe(state))


def leaderboard_current(
    study: Study,
    *,
    judges: str = "all",
    subset: str = "all",
    preset: str = "default",
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the pages and the API show: the latest stored snapshot for the filter, never a fit
    in the request. When its inputs are out of date (or there is none yet) a background refit
    is queued and the result says so: ``status`` "current", "updating" or "computing",
    ``snapshot`` {id, created_at, trigger} and ``refit`` {since} while one is pending."""
    state = state or selectors.judgments_state(study)
    board_key = [judges, subset, preset]
    snapshot = selectors.snapshot_latest(study, judges=judges, subset=subset, preset=preset)
    current = snapshot is not None and snapshot_is_current(snapshot, state)
    if not current and not _refitted_recently(snapshot):
        boards = full_refit_boards()
        if board_key not in boards:
            boards = [board_key]
        snapshot_request_refit(
            study=study, trigger=RefitTrigger.STALE, boards=boards, read_after=True
        )
        # With eager Celery outside a request (a command, a test) the refit has run by now.
        fresh = selectors.snapshot_latest(study, judges=judges, subset=subset, preset=preset)
        if fresh is not None and snapshot_is_current(fresh, state):
            snapshot, current = fresh, True
    return _served(study, snapshot, current, judges=judges, subset=subset, preset=preset)


def leaderboard_served(
    study: Study,
    *,
    judges: str = "all",
    subset: str = "all",
    preset: str = "default",
    style: list[str] | None = None,
    by: str | None = None,
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the page and the API show (``leaderboard_current``), optionally as the
    style-controlled view (``style``: the study's features, as stored with the snapshot) and
    with boards by ``by``. ValueError says why a request cannot be served."""
    result = leaderboard_current(study, judges=judges, subset=subset, preset=preset, state=state)
    if style:
        from .. import style_board

        chosen = list(study.style_features or [])
        if sorted(style) != sorted(chosen):
            raise ValueError(
                f"this study's analysis settings control for {', '.join(chosen) or 'no style'}; "
                "change them in the study's settings, or fit another set with "
                "`manage.py leaderboard --style`"
            )
        result = style_board.controlled_view(result)
    if by:
        category_key_check(study, by)
        result = leaderboard_by(
            study, key=by, judges=judges, subset=subset, preset=preset, result=result
        )
    return result


def _refitted_recently(snapshot: LeaderboardSnapshot | None) -> bool:
    """A busy study is refitted at most once every REFIT_MIN_SECONDS (the page keeps showing
    its snapshot as updating meanwhile); in-process Celery refits at once."""
    from celery import current_app

    if snapshot is None or current_app.conf.task_always_eager:
        return False
    return (timezone.now() - snapshot.created_at).total_seconds() < REFIT_MIN_SECONDS


def _served(
    study: Study,
    snapshot: LeaderboardSnapshot | None,
    current: bool,
    *,
    judges: str,
    subset: str,
    preset: str,
) -> dict[str, Any]:
    pending = refit_pending(study)
    if snapshot is None:
        result = _placeholder(study, judges=judges, subset=subset, preset=preset)
        status = "computing"
    else:
        result = dict(snapshot.result)
        result["snapshot"] = {
            "id": snapshot.pk,
            "created_at": snapshot.created_at.isoformat(),
            "trigger": snapshot.trigger,
            "duration_ms": snapshot.duration_ms,
        }
        result["cache_key"] = f"snapshot:{snapshot.pk}"
        status = "current" if current else "updating"
    result["status"] = status
    result["refit"] = {"since": pending["since"]} if pending and status != "current" else None
    return result


def _placeholder(study: Study, *, judges: str, subset: str, preset: str) -> dict[str, Any]:
    """The shape of a result before the first snapshot exists (nothing to show yet)."""
    from .. import board

    return {
        "study": study.slug,
        "judges": judges,
        "subset": subset,
        "preset": preset,
        "n_comparisons": 0,
        "n_judgments": 0,
        "n_excluded_raters": 0,
        "params": params_resolve(preset),
        "preset_note": board.PRESET_NOTES.get(preset, ""),
        "warnings": [],
        "systems": [],
        "human_rows": [],
        "snapshot": None,
        "cache_key": None,
    }


def leaderboard_plot(
    study: Study,
    *,
    name: str,
    fmt: str,
    judges: str = "all",
    subset: str = "all",
    preset: str = "default",
) -> bytes:
    """One figure of the result the page shows, encoded; cached with its snapshot."""
    from .. import plots

    result = leaderboard_current(study, judges=judges, subset=subset, preset=preset)
    if result["cache_key"] is None:
        return plots.render(name, result, fmt)
    key = f"ranking:{result['cache_key']}:plot:{name}.{fmt}"
    image: bytes | None = cache.get(key)
    if image is None:
        image = plots.render(name, result, fmt)
        cache.set(key, image, CACHE_SECONDS)
    return image


# --------------------------------------------------------------------------- strategies


def strategy_analysis(study: Study, *, labels: str = "auto") -> dict[str, Any]:
    """Strategy usage per family with SD, range, entropy, coverage and per-item unique count
    (Figure 6, paper 4.8 and 9.10) from the chosen labels; says which labels it used.

    ``labels``: "auto" (latest finished label set, else the completions' metadata),
    "metadata", or a label set's id (LabelSet.DoesNotExist when unknown).
    """
    from ..report import strategy_section as report_strategy_section

    source = label_selectors.label_source_resolve(study, labels)
    completions = selectors.completions_frame(study, label_set=source.label_set)
    section = report_strategy_section(completions, aliases_merged(study.family_aliases))
    labelled = int(completions["strategies"].map(lambda v: isinstance(v, list)).sum())
    analysis: dict[str, Any] = json_safe(
        {
            "study": study.slug,
            "labels": source.as_dict(),
            "n_completions": len(completions),
            "n_labelled": labelled,
            "strategies": dict(section, source=source.as_dict()),
        }
    )
    return analysis
