"""Quality checks cut from a study's own material: they look like its items, and neither the
length nor the side of the expected reply gives the answer away."""

from __future__ import annotations

import random
import statistics
from itertools import combinations

import pytest

from annotation.bots import GOLD_BAR, GateItem, bots_score
from annotation.models import QualityCheckItem
from annotation.services.checks import (
    quality_checks_ensure,
    quality_checks_wanted,
    quality_items_seed_from_study,
)
from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    PairFactory,
    StudyFactory,
    SystemFactory,
)

pytestmark = pytest.mark.django_db
TOPICS = [
    "exam", "breakup", "layoff", "landlord", "sister", "insomnia", "debt", "move",
    "wedding", "diagnosis", "promotion", "roommate", "thesis", "divorce", "puppy", "visa",
]  # fmt: skip


def _study(n_contexts=16, seed=3, **fields):
    """Contexts of 4 to 30 turns, three systems whose replies name the context's topic and
    run from 8 to 70 words."""
    rng = random.Random(seed)
    study = StudyFactory(slug=f"own-{seed}-{n_contexts}", **fields)
    systems = [SystemFactory(study=study, name=f"sys-{i}") for i in range(3)]
    for c in range(n_contexts):
        topic = TOPICS[c % len(TOPICS)]
        n_turns = rng.randrange(4, 31, 2)
        turns = [
            {
                "speaker": "supporter" if t % 2 == 0 else "seeker",
                "text": f"turn {t} about the {topic} " + "and more " * rng.randrange(1, 12),
            }
            for t in range(n_turns)
        ]
        context = DialogueContextFactory(study=study, external_id=f"ctx-{c}", turns=turns)
        replies = [
            CompletionFactory(
                context=context,
                system=system,
                text=f"The {topic} sounds hard. " + "I hear you. " * rng.randrange(2, 22),
            )
            for system in systems
        ]
        for a, b in combinations(sorted(replies, key=lambda r: r.pk), 2):
            PairFactory(study=study, context=context, completion_a=a, completion_b=b)
    return study


def _gate_items(items):
    return [
        GateItem(i.text_a, i.text_b, i.expected, i.expected_choice, order="drawn")
        for i in items
        if i.kind == "gold"
    ]


def test_a_study_gets_checks_from_its_own_conversations_with_the_expected_reply_not_predictable():
    study = _study(quality_check_rate=0.2, items_per_rater=20)
    items = quality_items_seed_from_study(study=study, n=40)
    assert len(items) == 40
    gold = [i for i in items if i.kind == "gold"]
    attention = [i for i in items if i.kind == "attention"]
    assert len(attention) == 13 and len(gold) == 27
    # The conversations are the study's own, whole, as its items show them.
    contexts = {c.external_id: c for c in study.contexts.all()}
    own_turns = [c.turns for c in contexts.values()]
    assert all(item.turns in own_turns for item in items)
    lengths = sorted(len(t) for t in own_turns)
    check_lengths = [len(item.turns) for item in items]
    assert min(check_lengths) >= lengths[0] and max(check_lengths) <= lengths[-1]
    assert abs(statistics.mean(check_lengths) - statistics.mean(lengths)) < 3
    # Gold: the reply written for this conversation against one written for another.
    for item in gold:
        better = item.text_a if item.expected == "a" else item.text_b
        weaker = item.text_b if item.expected == "a" else item.text_a
        topic = next(t for t in TOPICS if f"the {t}" in item.turns[0]["text"])
        assert f"The {topic} " in better and f"The {topic} " not in weaker
    # Side and length balanced: neither predicts the expected reply.
    sides = [i.expected for i in gold]
    assert abs(sides.count("a") - sides.count("b")) <= 2
    longer = [
        len((i.text_a if i.expected == "a" else i.text_b).split())
        > len((i.text_b if i.expected == "a" else i.text_a).split())
        for i in gold
    ]
    assert 0.4 <= sum(longer) / len(longer) <= 0.6
    scores = bots_score(_gate_items(items))
    assert max(s.share for s in scores) <= GOLD_BAR
    # Attention checks: never the middle; the instruction on both sides; the side asked for
    # and the longer reply balanced, so no bot passes more than about half of them.
    assert {i.expected for i in attention} == {"a", "b"}
    assert all(i.expected_choice in (1, 2, 4, 5) for i in attention)
    instruction_sides = {"a" if "please choose" in i.text_a else "b" for i in attention}
    assert instruction_sides == {"a", "b"}
    stored = [GateItem(i.text_a, i.text_b, i.expected, i.expected_choice) for i in attention]
    assert max(s.share for s in bots_score(stored)) <= 7 / 13


def test_a_study_with_one_conversation_falls_back_to_written_weaker_replies():
    study = _study(n_contexts=1, quality_check_rate=0.1, items_per_rater=10)
    items = quality_items_seed_from_study(study=study)
    assert len(items) == quality_checks_wanted(study=study) == 6
    gold = [i for i in items if i.kind == "gold"]
    assert all(i.note.endswith("against a written weaker one") for i in gold)
    assert max(s.share for s in bots_score(_gate_items(items))) <= GOLD_BAR


def test_checks_are_made_once_when_needed_and_never_without_a_rate():
    study = _study(n_contexts=4, quality_check_rate=0)
    assert quality_checks_ensure(study=study) == []
    study.quality_check_rate = 0.25
    made = quality_checks_ensure(study=study)
    assert len(made) == quality_checks_wanted(study=study)
    assert quality_checks_ensure(study=study) == []  # it has checks in use now
    QualityCheckItem.objects.filter(study=study).update(retired_at="2026-01-01T00:00Z")
    assert len(quality_checks_ensure(study=study)) == len(made)  # all retired: new ones


def test_no_check_can_be_made_from_replies_whose_text_is_unknown():
    study = _study(n_contexts=2, quality_check_rate=0.2)
    study.contexts.first().completions.update(text_unknown=True)
    study.contexts.last().completions.update(text="  ")
    assert quality_items_seed_from_study(study=study) == []
