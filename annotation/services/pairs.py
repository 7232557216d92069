"""Writes the pair design of a study (annotation.pair_design decides, this stores Pair rows)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Greatest, Least
from django.utils import timezone

from annotation import pair_design
from annotation.models import Assignment, Pair
from completions.models import Completion, Study


@dataclass
class PairDesignReport:
    design: str
    contexts: int = 0
    created: int = 0
    already_present: int = 0
    skipped_contexts: int = 0  # fewer than two completions

    def lines(self) -> list[str]:
        return [
            f"design: {self.design}",
            f"contexts: {self.contexts}",
            f"pairs created: {self.created}",
            f"pairs already present: {self.already_present}",
            f"contexts with fewer than two completions: {self.skipped_contexts}",
        ]


@transaction.atomic
def pairs_design(
    *,
    study: Study,
    design: str | None = None,
    per_context: int | None = None,
    seed: int | None = None,
) -> PairDesignReport:
    """Create the study's missing pairs; idempotent (re-running adds nothing new).

    Defaults come from the study (pair_design, pairs_per_context, pair_seed). "all" adds every
    missing pair (new completions -> only their new pairs); "balanced" tops every context up to
    `per_context` pairs. Pairs are canonical with quota = study.judgments_per_pair.
    """
    design = design or study.pair_design
    contexts, existing, planned = pairs_plan(
        study=study, design=design, per_context=per_context, seed=seed
    )
    report = PairDesignReport(
        design=design,
        contexts=len(contexts),
        already_present=sum(len(p) for p in existing.values()),
    )
    report.skipped_contexts = sum(len(items) < 2 for items in contexts.values())
    new = [
        Pair(
            study=study,
            context_id=context,
            completion_a_id=a,
            completion_b_id=b,
            quota=study.judgments_per_pair,
        )
        for context, pairs in planned.items()
        for a, b in pairs
        if (a, b) not in existing.get(context, set())
    ]
    Pair.objects.bulk_create(new, batch_size=2000)
    report.created = len(new)
    return report


def pairs_plan(
    *,
    study: Study,
    design: str | None = None,
    per_context: int | None = None,
    seed: int | None = None,
) -> tuple[
    dict[int, list[tuple[int, str]]],
    dict[int, set[tuple[int, int]]],
    dict[int, list[pair_design.PairIds]],
]:
    """(completions per context, stored pairs per context, planned pairs per context).

    Writes nothing: the studio previews this before `pairs_design` stores the new pairs.
    """
    design = design or study.pair_design
    contexts = _completions_by_context(study)
    existing = _existing_pairs(study)
    if design == "all":
        planned = pair_design.design_all(contexts)
    elif design == "balanced":
        per_context = per_context or study.pairs_per_context
        if not per_context:
            raise ValueError("a balanced design needs pairs per context (study or argument)")
        planned = pair_design.design_balanced(
            contexts,
            per_context=per_context,
            seed=study.pair_seed if seed is None else seed,
            existing=existing,
        )
    else:
        raise ValueError(f"unknown pair design {design!r} (all or balanced)")
    return contexts, existing, planned


def _completions_by_context(study: Study) -> dict[int, list[tuple[int, str]]]:
    contexts: dict[int, list[tuple[int, str]]] = defaultdict(list)
    rows = (
        Completion.objects.filter(context__study=study)
        .order_by("id")
        .values_list("context_id", "id", "system__name")
    )
    for context, pk, system in rows.iterator(chunk_size=5000):
        contexts[context].append((pk, system))
    return dict(contexts)


def _existing_pairs(study: Study) -> dict[int, set[tuple[int, int]]]:
    existing: dict[int, set[tuple[int, int]]] = defaultdict(set)
    rows = Pair.objects.filter(study=study).values_list(
        "context_id", "completion_a_id", "completion_b_id"
    )
    for context, a, b in rows.iterator(chunk_size=5000):
        existing[context].add((a, b))
    return dict(existing)


def _system_pairs(study: Study, system: str) -> QuerySet[Pair]:
    return Pair.objects.filter(study=study).filter(
        Q(completion_a__system__name=system) | Q(completion_b__system__name=system)
    )


@transaction.atomic
def pairs_close_for_system(*, study: Study, system: str) -> int:
    """Offer raters none of ``system``'s pairs from now on (a system taken off the board): each
    pair's quota comes down to its judgments plus the items raters hold on it now, which they
    may still answer. Returns how many pairs closed.

    The pairs are locked first (in id order; a claim skips locked pairs and never waits), so
    no new item is leased on them meanwhile and the count below sees every lease committed."""
    pairs = _system_pairs(study, system).filter(n_judgments__lt=F("quota"))
    ids = list(pairs.select_for_update(no_key=True).order_by("pk").values_list("pk", flat=True))
    running = (
        Assignment.objects.filter(
            pair=OuterRef("pk"),
            status=Assignment.Status.LEASED,
            lease_expires_at__gt=timezone.now(),
        )
        .order_by()
        .values("pair")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Pair.objects.filter(pk__in=ids).update(
        quota=Least(F("quota"), F("n_judgments") + Coalesce(Subquery(running), 0))
    )


@transaction.atomic
def pairs_reopen_for_system(*, study: Study, system: str, still_off: Iterable[str] = ()) -> int:
    """Offer ``system``'s pairs again (put back on the board): their quota goes back to the
    study's judgments per pair (or what they hold, if more), except pairs with a system in
    ``still_off``. Returns how many pairs reopened."""
    off = set(still_off) - {system}
    pairs = _system_pairs(study, system).exclude(
        Q(completion_a__system__name__in=off) | Q(completion_b__system__name__in=off)
    )
    pairs = pairs.filter(quota__lt=study.judgments_per_pair)
    return Pair.objects.filter(pk__in=list(pairs.values_list("pk", flat=True))).update(
        quota=Greatest(F("n_judgments"), study.judgments_per_pair)
    )
