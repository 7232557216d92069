"""Reads for the studio pages: the studies list, the hub's checklist, the per-rater table."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from annotation.models import Judgment, Pair, Rater
from annotation.selectors import rater_stats
from completions.access import studies_for_admin
from completions.models import (
    Completion,
    DialogueContext,
    Study,
    StudyStatus,
    System,
    SystemKind,
)
from llm.models import Run
from recruitment.selectors import RaterOutcome
from studio.models import ImportJob
from writing.models import Writing


@dataclass
class ChecklistRow:
    """One line of the hub's setup checklist; `url` is where the next step is taken."""

    key: str
    label: str
    count: int | None
    target: int | None
    done: bool
    next_step: str
    url: str
    detail: str = ""
    optional: bool = False


def _systems_count(study: Study) -> dict[str, int]:
    """Systems that can be paired (a model's or the dataset's, or a writer's with an accepted
    text), and apart from them the writers whose texts await review: every writer is a
    system of their own from the start, but not one with a reply to compare yet."""
    has_reply = Exists(Completion.objects.filter(system=OuterRef("pk")))
    pending = Exists(
        Writing.objects.filter(writer__system=OuterRef("pk"), status=Writing.Status.PENDING)
    )
    rows = System.objects.filter(study=study).annotate(has_reply=has_reply, pending=pending)
    return rows.aggregate(
        n=Count("id", filter=Q(writer__isnull=True) | Q(has_reply=True)),
        awaiting=Count("id", filter=Q(writer__isnull=False, has_reply=False, pending=True)),
    )


def studies_listed(*, user: Any) -> QuerySet[Study]:
    """The studio home's list: the studies ``user`` administers (`completions.access`), with
    the counts the list shows."""
    return (
        studies_for_admin(user)
        .annotate(
            n_contexts=Count("contexts", distinct=True),
            n_raters=Count("raters", distinct=True),
        )
        .order_by("-created_at", "-id")
    )


def study_checklist(*, study: Study) -> list[ChecklistRow]:
    """Live counts from contexts to judgments, in the order a study is set up.

    Other areas (writers, LLM runs) append rows of their own; `next_step_row` picks the
    first required row that is not done yet.
    """
    base = f"/studio/{study.slug}/"
    n_contexts = DialogueContext.objects.filter(study=study).count()
    systems = _systems_count(study)
    completions = Completion.objects.filter(context__study=study).aggregate(
        n=Count("id"), human=Count("id", filter=Q(system__kind=SystemKind.HUMAN))
    )
    pairs = Pair.objects.filter(study=study).aggregate(
        n=Count("id"),
        complete=Count("id", filter=Q(n_judgments__gte=F("quota"))),
        judgments=Coalesce(Sum("n_judgments"), 0),
        target=Coalesce(Sum("quota"), 0),
    )
    raters = rater_counts(study=study)
    # Finished raters who judged something: one told "no items" has finished too, but the
    # study has not been judged by them.
    judged = Exists(Judgment.objects.filter(rater=OuterRef("pk")))
    raters_judged = Rater.objects.filter(study=study, finished_at__isnull=False).filter(judged)
    n_raters_judged = raters_judged.count()
    writer_target = n_contexts * study.writers_per_context
    runs = Run.objects.filter(study=study).aggregate(
        n=Count("id"),
        finished=Count("id", filter=Q(status="finished")),
        running=Count("id", filter=Q(status="running")),
    )
    writings = Writing.objects.filter(study=study).aggregate(
        pending=Count("id", filter=Q(status=Writing.Status.PENDING)),
        rejected=Count("id", filter=Q(status=Writing.Status.REJECTED)),
        flagged=Count("id", filter=~Q(flags=[]) & ~Q(status=Writing.Status.DRAFT)),
    )
    return [
        ChecklistRow(
            "contexts", "Contexts", n_contexts, None, n_contexts > 0,
            "Upload an ESConv file or a contexts file", f"{base}material/",
        ),
        ChecklistRow(
            "systems", "Systems", systems["n"], 2, systems["n"] >= 2,
            "Upload completions from at least two systems", f"{base}material/",
            detail=f"+{systems['awaiting']} writer{'s' if systems['awaiting'] != 1 else ''} "
            "awaiting review" if systems["awaiting"] else "",
        ),
        ChecklistRow(
            "completions", "Completions", completions["n"], None, completions["n"] >= 2,
            "Upload a completions file", f"{base}material/",
        ),
        ChecklistRow(
            "human_completions", "Human completions written", completions["human"],
            writer_target, completions["human"] >= writer_target > 0,
            "Invite writers (optional: a study may compare models only)", f"{base}writers/",
            optional=True,
            detail=(
                f"accepted; {writings['pending']} awaiting review, "
                f"{writings['rejected']} rejected, {writings['flagged']} flagged"
            ),
        ),
        ChecklistRow(
            "llm_runs", "LLM runs", runs["finished"], None, runs["finished"] > 0,
            "Generate model completions or run LLM judges (optional)", f"{base}llm/",
            optional=True,
            detail=f"finished; {runs['running']} running, {runs['n']} in all",
        ),
        ChecklistRow(
            "pairs", "Pairs", pairs["n"], None, pairs["n"] > 0,
            "Design the pairs", f"{base}pairs/",
            detail=f"{pairs['complete']} complete",
        ),
        ChecklistRow(
            "open", "Open to raters", None, None,
            study.status in (StudyStatus.OPEN, StudyStatus.CLOSED),
            "Open the study" if pairs["n"] else "Open the study (once it has pairs)",
            f"{base}#recruit", detail=STATUS_DETAIL[study.status],
        ),
        ChecklistRow(
            "raters", "Raters who judged", n_raters_judged, None,
            pairs["n"] > 0 and n_raters_judged > 0,
            "Copy the invitation link and recruit raters", f"{base}#recruit",
            detail=(
                f"finished; {raters['active']} active, {raters['finished']} finished in all, "
                f"{raters['flagged']} flagged or excluded"
            ),
        ),
        ChecklistRow(
            "judgments", "Human judgments", pairs["judgments"], pairs["target"],
            pairs["target"] > 0 and pairs["judgments"] >= pairs["target"],
            "Wait for raters to fill every pair's quota", f"{base}raters/",
        ),
    ]  # fmt: skip


STATUS_DETAIL: dict[str, str] = {
    StudyStatus.DRAFT: "draft: raters are not let in yet",
    StudyStatus.OPEN: "open",
    StudyStatus.PAUSED: "paused: no new items are handed out",
    StudyStatus.CLOSED: "closed",
}


def checklist_rows(rows: list[ChecklistRow], *keys: str) -> list[ChecklistRow]:
    """The rows with these keys, in checklist order (pages show the part that concerns them)."""
    return [row for row in rows if row.key in keys]


def next_step_row(rows: list[ChecklistRow]) -> ChecklistRow | None:
    return next((row for row in rows if not row.done and not row.optional), None)


def rater_counts(*, study: Study) -> dict[str, int]:
    excluded = (Q(flagged=True) & ~Q(exclusion_override=False)) | Q(exclusion_override=True)
    return Rater.objects.filter(study=study).aggregate(
        total=Count("id"),
        active=Count("id", filter=Q(consented_at__isnull=False, finished_at__isnull=True)),
        finished=Count("id", filter=Q(finished_at__isnull=False)),
        flagged=Count("id", filter=excluded),
    )


def import_jobs_recent(*, study: Study, limit: int = 10) -> QuerySet[ImportJob]:
    return ImportJob.objects.filter(study=study).defer("data").order_by("-created_at")[:limit]


@dataclass
class RaterRow:
    """A rater as the payment table shows them (admin only: it holds the Prolific id)."""

    rater: Rater
    started: datetime | None
    finished: datetime | None
    items_done: int
    checks: int
    checks_passed: int
    active_ms: int
    median_ms: float | None

    outcome: RaterOutcome | None = None

    @property
    def check_result(self) -> str:
        if not self.checks:
            return "no checks answered"
        return f"{self.checks_passed} of {self.checks} passed"


def rater_rows(*, study: Study, outcomes: list[RaterOutcome] | None = None) -> list[RaterRow]:
    """The raters page's rows; `outcomes` (recruitment.selectors.rater_outcomes) joined in."""
    by_rater = {row.rater.pk: row for row in outcomes or []}
    raters = list(
        Rater.objects.filter(study=study).select_related("exclusion_by").order_by("created_at")
    )
    active = dict(
        Judgment.objects.filter(study=study, rater__in=raters, judge_kind="human")
        .values("rater_id")
        .annotate(ms=Coalesce(Sum("duration_ms"), 0))
        .values_list("rater_id", "ms")
    )
    return [
        RaterRow(
            rater=s.rater,
            started=s.rater.consented_at or s.rater.created_at,
            finished=s.rater.finished_at,
            items_done=s.n_real,
            checks=s.n_checks,
            checks_passed=s.n_passed,
            active_ms=int(active.get(s.rater.pk, 0)),
            median_ms=s.median_ms,
            outcome=by_rater.get(s.rater.pk),
        )
        for s in rater_stats(study=study, raters=raters)
    ]


@dataclass
class PairPreview:
    """What designing the pairs would add, before anything is written."""

    design: str
    new_pairs: int
    existing_pairs: int
    contexts: int
    skipped_contexts: int
    judgments_needed: int
    raters_needed: int
    per_system_pair: list[tuple[str, str, int]]
    per_context: list[tuple[str, int, int]]  # (context id, new pairs, pairs in all)


def pairs_preview(
    *, study: Study, design: str, per_context: int | None, seed: int | None, show: int = 50
) -> PairPreview:
    """Pairs per system pair and per context that `pairs_design` would create."""
    from annotation.pair_design import system_pair_counts
    from annotation.services.pairs import pairs_plan

    contexts, existing, planned = pairs_plan(
        study=study, design=design, per_context=per_context, seed=seed
    )
    new = {
        key: [p for p in pairs if p not in existing.get(key, set())]
        for key, pairs in planned.items()
    }
    n_new = sum(len(p) for p in new.values())
    counts = system_pair_counts(contexts, new)
    names = dict(
        DialogueContext.objects.filter(pk__in=list(contexts)[: show * 4]).values_list(
            "pk", "external_id"
        )
    )
    context_rows: list[tuple[str, int, int]] = []
    for key in list(contexts)[:show]:
        added = len(new.get(key, []))
        context_rows.append((names.get(key, str(key)), added, len(existing.get(key, ())) + added))
    judgments = n_new * study.judgments_per_pair
    return PairPreview(
        design=design,
        new_pairs=n_new,
        existing_pairs=sum(len(p) for p in existing.values()),
        contexts=len(contexts),
        skipped_contexts=sum(len(items) < 2 for items in contexts.values()),
        judgments_needed=judgments,
        raters_needed=-(-judgments // study.items_per_rater) if study.items_per_rater else 0,
        per_system_pair=sorted((a, b, n) for (a, b), n in counts.items()),
        per_context=context_rows,
    )


# --- Design: the planner and the stopping rule ---------------------------------------------

#: Mean weight of a 5-point verdict on the board (ties and "slightly" weigh 1, "much" 2; the
#: simulation in benchmarks/bench_adaptive_sampling.py averages about 1.35).
PLANNING_VERDICT_WEIGHT = 1.35


@dataclass
class DesignPlan:
    """What a pair design promises: the expected mean half-width of the systems' intervals
    when every pair gets its quota, and the judgments a wanted half-width needs."""

    judgments: int
    half_width: float | None
    wanted: float | None = None
    judgments_for_wanted: int | None = None
    spread_from: str = "equal systems"


def design_plan(
    *, study: Study, per_system_pair: list[tuple[str, str, int]], wanted: float | None
) -> DesignPlan:
    """The planner: Fisher half-width of the planned design (ranking.adaptive, checked against
    fitted simulations), with the systems as far apart as the latest human board says."""
    import numpy as np

    from ranking import adaptive
    from ranking.selectors import snapshot_latest

    names = sorted({a for a, _, _ in per_system_pair} | {b for _, b, _ in per_system_pair})
    index = {name: i for i, name in enumerate(names)}
    counts = np.zeros((len(names), len(names)))
    for a, b, n in per_system_pair:
        counts[index[a], index[b]] += n * study.judgments_per_pair
        counts[index[b], index[a]] += n * study.judgments_per_pair
    judgments = int(counts.sum() // 2)
    if len(names) < 2 or not judgments:
        return DesignPlan(judgments=judgments, half_width=None, wanted=wanted)
    theta, spread_from = np.zeros(len(names)), "equal systems"
    snapshot = snapshot_latest(study, judges="human", subset="all")
    if snapshot is not None and snapshot.result.get("systems"):
        elo = {row["system"]: row["elo"] for row in snapshot.result["systems"]}
        theta = np.array([(elo.get(n) or 1500.0) - 1500.0 for n in names]) / adaptive.ELO_SCALE
        spread_from = "the latest human leaderboard"
    weight = PLANNING_VERDICT_WEIGHT
    plan = DesignPlan(
        judgments=judgments,
        half_width=round(adaptive.mean_half_width(theta, counts, verdict_weight=weight), 1),
        wanted=wanted,
        spread_from=spread_from,
    )
    if wanted:
        plan.judgments_for_wanted = adaptive.judgments_for_half_width(
            theta, counts, wanted, verdict_weight=weight
        )
    return plan


def study_system_pairs(*, study: Study) -> list[tuple[str, str, int]]:
    """The study's stored pairs per system pair (names), for the planner."""

    rows = (
        Pair.objects.filter(study=study)
        .values_list("completion_a__system__name", "completion_b__system__name")
        .annotate(n=Count("id"))
    )
    return [(a, b, n) for a, b, n in rows]


def design_status(*, study: Study) -> dict[str, Any] | None:
    """The stopping rule's reading stored by the latest refit (ranking.design), for the page."""
    from ranking.models import DesignStatus

    status = DesignStatus.objects.filter(study=study).first()
    if status is None:
        return None
    open_pairs = [p for p in status.pairs if not p["separated"]]
    needed = [p["judgments_needed"] for p in open_pairs if p["judgments_needed"] is not None]
    return {
        "status": status,
        "separated": len(status.pairs) - len(open_pairs),
        "total": len(status.pairs),
        "open_pairs": open_pairs,
        "needed_most": max(needed, default=0),
        "needed_sum": sum(needed),
        "ties": sum(p["judgments_needed"] is None for p in open_pairs),
    }
