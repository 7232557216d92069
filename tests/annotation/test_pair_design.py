"""Pair design: all pairs, balanced sampling, reproducibility, canonical order, DB guards."""

from __future__ import annotations

from itertools import combinations

import pytest
from django.db import IntegrityError, transaction

from annotation import pair_design
from annotation.models import Pair
from annotation.services.pairs import pairs_design
from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    PairFactory,
    StudyFactory,
    SystemFactory,
)

SYSTEMS = [f"s{i}" for i in range(6)]


def grid(n_contexts: int, systems=SYSTEMS) -> dict[int, list[tuple[int, str]]]:
    """Every system on every context; completion ids interleaved so order is not by system."""
    return {
        c: [(1000 * c + (7 * i) % len(systems), s) for i, s in enumerate(systems)]
        for c in range(n_contexts)
    }


def test_all_pairs_are_every_canonical_pair():
    items = [(9, "x"), (3, "y"), (5, "z")]
    assert pair_design.all_pairs(items) == [(3, 5), (3, 9), (5, 9)]


@pytest.mark.parametrize(
    ("n_contexts", "per_context", "seed"), [(40, 3, 0), (25, 4, 7), (100, 1, 3), (13, 5, 11)]
)
def test_balanced_design_uses_every_system_pair_about_equally(n_contexts, per_context, seed):
    contexts = grid(n_contexts)
    design = pair_design.design_balanced(contexts, per_context=per_context, seed=seed)
    assert all(len(p) == per_context for p in design.values())
    counts = pair_design.system_pair_counts(contexts, design)
    every = list(combinations(sorted(SYSTEMS), 2))
    used = [counts[p] for p in every]
    assert sum(used) == n_contexts * per_context
    assert max(used) - min(used) <= 1


def test_balanced_design_is_reproducible_from_the_seed():
    contexts = grid(30)
    one = pair_design.design_balanced(contexts, per_context=3, seed=42)
    assert one == pair_design.design_balanced(contexts, per_context=3, seed=42)
    assert one != pair_design.design_balanced(contexts, per_context=3, seed=43)


def test_balanced_design_counts_existing_pairs_and_tops_up():
    contexts = grid(3)
    first = pair_design.design_balanced(contexts, per_context=2, seed=1)
    more = pair_design.design_balanced(contexts, per_context=3, seed=1, existing=first)
    assert all(len(p) == 1 and not set(p) & set(first[c]) for c, p in more.items())
    assert pair_design.design_balanced(contexts, per_context=2, seed=1, existing=first) == {
        c: [] for c in contexts
    }


def make_study(n_contexts: int, n_systems: int, **study_fields):
    study = StudyFactory(**study_fields)
    systems = [SystemFactory(study=study, name=f"m{i}") for i in range(n_systems)]
    for _ in range(n_contexts):
        context = DialogueContextFactory(study=study)
        for system in reversed(systems):
            CompletionFactory(context=context, system=system)
    return study, systems


@pytest.mark.django_db
def test_pairs_design_all_stores_canonical_pairs_with_the_study_quota():
    study, _ = make_study(3, 4, judgments_per_pair=7)
    report = pairs_design(study=study, design="all")
    pairs = Pair.objects.filter(study=study)
    assert report.created == pairs.count() == 3 * 6
    for pair in pairs:
        assert pair.completion_a_id < pair.completion_b_id
        assert pair.quota == 7
        assert pair.completion_a.context_id == pair.completion_b.context_id == pair.context_id


@pytest.mark.django_db
def test_pairs_design_is_idempotent_and_adds_only_new_pairs():
    study, systems = make_study(2, 3)
    pairs_design(study=study, design="all")
    again = pairs_design(study=study, design="all")
    assert (again.created, again.already_present) == (0, 6)
    newcomer = SystemFactory(study=study, name="late")
    for context in study.contexts.all():
        CompletionFactory(context=context, system=newcomer)
    later = pairs_design(study=study, design="all")
    assert later.created == 2 * 3
    assert Pair.objects.filter(study=study).count() == 2 * 6


@pytest.mark.django_db
def test_pairs_design_balanced_uses_the_study_settings_and_is_reproducible():
    study, _ = make_study(12, 4, pair_design="balanced", pairs_per_context=2, pair_seed=5)
    pairs_design(study=study)
    first = set(Pair.objects.filter(study=study).values_list("completion_a", "completion_b"))
    assert len(first) == 24
    Pair.objects.filter(study=study).delete()
    pairs_design(study=study)
    assert first == set(
        Pair.objects.filter(study=study).values_list("completion_a", "completion_b")
    )
    assert pairs_design(study=study).created == 0
    names = Pair.objects.filter(study=study).values_list(
        "completion_a__system__name", "completion_b__system__name"
    )
    usage = {}
    for a, b in names:
        usage[tuple(sorted((a, b)))] = usage.get(tuple(sorted((a, b))), 0) + 1
    assert len(usage) == 6 and max(usage.values()) - min(usage.values()) <= 1


@pytest.mark.django_db(transaction=True)
def test_the_database_refuses_a_pair_across_contexts():
    study, _ = make_study(2, 2)
    one, two = study.contexts.order_by("id")
    a = one.completions.order_by("id").first()
    b = two.completions.order_by("id").first()
    with pytest.raises(IntegrityError), transaction.atomic():
        # PostgreSQL checks the deferred composite foreign key at commit; SQLite's trigger at once.
        PairFactory(study=study, context=one, completion_a=a, completion_b=b)
    assert not Pair.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_database_refuses_a_pair_in_reverse_order():
    study, _ = make_study(1, 2)
    a, b = study.contexts.get().completions.order_by("id")
    with pytest.raises(IntegrityError), transaction.atomic():
        PairFactory(study=study, context=a.context, completion_a=b, completion_b=a)


@pytest.mark.django_db
def test_the_design_pairs_command_prints_a_summary():
    from io import StringIO

    from django.core.management import CommandError, call_command

    study, _ = make_study(4, 3)
    out = StringIO()
    call_command(
        "design_pairs",
        "--study",
        study.slug,
        "--design",
        "balanced",
        "--per-context",
        "2",
        "--seed",
        "9",
        stdout=out,
    )
    assert "pairs created: 8" in out.getvalue()
    assert Pair.objects.filter(study=study).count() == 8
    with pytest.raises(CommandError, match="needs pairs per context"):
        call_command("design_pairs", "--study", study.slug, "--design", "balanced")
    with pytest.raises(CommandError, match="no study"):
        call_command("design_pairs", "--study", "missing")
