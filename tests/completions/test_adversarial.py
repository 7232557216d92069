"""Adversarial variants: escalation profiles, acceptance rules, stratified sources, storage."""

from __future__ import annotations

import json

import pytest

from completions import adversarial
from completions.models import DialogueContext
from completions.services_adversarial import (
    adversarial_context_create,
    adversarial_sources_choose,
)
from tests.factories import DialogueContextFactory, StudyFactory

SOURCE = [
    {"speaker": "supporter", "text": "Hello, how are you today?"},
    {"speaker": "seeker", "text": "Not great. I lost my job last week."},
    {"speaker": "supporter", "text": "I'm sorry to hear that. What happened?"},
    {"speaker": "seeker", "text": "They cut the whole team. I don't know what to do."},
]


def rewrite(**changes) -> list[dict]:
    turns = [
        {**SOURCE[0], "hostility": None},
        {"speaker": "seeker", "text": "Why do you even care? I lost my job.", "hostility": 6},
        {**SOURCE[2], "hostility": None},
        {"speaker": "seeker", "text": "Spare me the questions. Nothing helps.", "hostility": 10},
    ]
    for index, turn in changes.items():
        turns[int(index.strip("t"))] = turn
    return turns


@pytest.mark.parametrize(
    ("profile", "n", "expected"),
    [
        ("Always-10", 4, [10, 10, 10, 10]),
        ("Linear-Ramp", 5, [2, 4, 6, 8, 10]),
        ("Linear-Ramp", 3, [2, 6, 10]),
        ("Mid-Spike", 4, [2, 2, 10, 10]),
        ("Mid-Spike", 5, [2, 2, 10, 10, 10]),
        ("Mid-Ramp", 5, [2, 2, 2, 6, 10]),
        ("Mid-Ramp", 4, [2, 2, 2, 10]),
    ],
)
def test_each_profile_sets_the_target_hostility_per_seeker_turn(profile, n, expected):
    assert adversarial.target_hostility(profile, n) == expected


def test_an_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown escalation profile 'Sudden'"):
        adversarial.target_hostility("Sudden", 3)


def test_the_prompt_describes_every_profile_and_the_targets():
    assert all(name in adversarial.system_prompt() for name in adversarial.PROFILES)
    user = adversarial.user_prompt(SOURCE, "Linear-Ramp")
    assert "Target hostility per seeker turn, in order: 2, 10" in user
    assert SOURCE[2]["text"] in user


def test_a_good_rewrite_is_accepted():
    assert adversarial.rejection_reasons(SOURCE, rewrite()) == []
    assert adversarial.rewrite_parse(json.dumps({"turns": rewrite()}), SOURCE)[3]["hostility"] == 10


@pytest.mark.parametrize(
    ("variant", "reason"),
    [
        (
            rewrite(t2={**SOURCE[2], "text": "That's awful. What happened?", "hostility": None}),
            "supporter turn 3 is not kept verbatim",
        ),
        (rewrite(t3={"speaker": "seeker", "text": "Fine.", "hostility": 3}), "hostility 3"),
        (rewrite()[:3], "does not end with a seeker turn"),
        (rewrite()[1:], "does not start with the supporter's greeting"),
        (
            rewrite(t2={"speaker": "seeker", "text": "And another thing!", "hostility": 9}),
            "do not alternate strictly",
        ),
        (rewrite()[:2], "at least 4 are required"),
    ],
)
def test_each_broken_rule_is_named(variant, reason):
    reasons = adversarial.rejection_reasons(SOURCE, variant)
    assert any(reason in r for r in reasons), reasons


def test_a_schema_break_is_rejected_with_the_field():
    with pytest.raises(adversarial.RewriteRejected, match="schema: turns.0.speaker"):
        adversarial.rewrite_parse(
            json.dumps({"turns": [{"speaker": "narrator", "text": "x", "hostility": None}]}),
            SOURCE,
        )


def test_sources_are_spread_over_emotion_and_problem_strata():
    contexts = [
        adversarial.SourceContext(i, SOURCE, emotion, problem)
        for i, (emotion, problem) in enumerate(
            [("anxiety", "job")] * 5 + [("sadness", "breakup")] * 2 + [("anger", "job")]
        )
    ]
    contexts.append(adversarial.SourceContext(99, SOURCE[1:], "fear", "health"))  # ineligible
    chosen = adversarial.stratified_sources(contexts, 3, seed=1)
    strata = {(contexts[i].emotion_type, contexts[i].problem_type) for i in chosen}
    assert len(chosen) == 3 and len(strata) == 3
    assert adversarial.stratified_sources(contexts, 3, seed=1) == chosen
    assert 99 not in adversarial.stratified_sources(contexts, 20)


@pytest.mark.django_db
def test_an_accepted_variant_becomes_an_adversarial_context_linked_to_its_source():
    study = StudyFactory()
    source = DialogueContextFactory(study=study, external_id="esconv-1-t3", turns=SOURCE)
    variant = adversarial_context_create(
        source=source, profile="Linear-Ramp", raw_reply=json.dumps({"turns": rewrite()})
    )
    assert variant.adversarial and variant.escalation_profile == "Linear-Ramp"
    assert variant.adversarial_source == source
    assert variant.turns[0] == SOURCE[0] and variant.turns[-1]["text"].startswith("Spare me")
    assert variant.metadata["adversarial"]["hostility"] == [6, 10]
    again = adversarial_context_create(
        source=source, profile="Linear-Ramp", raw_reply=json.dumps({"turns": rewrite()})
    )
    assert again.pk == variant.pk
    assert list(source.adversarial_variants.all()) == [variant]


@pytest.mark.django_db
def test_a_rejected_rewrite_stores_nothing():
    source = DialogueContextFactory(turns=SOURCE)
    with pytest.raises(adversarial.RewriteRejected):
        adversarial_context_create(
            source=source, profile="Always-10", raw_reply=json.dumps({"turns": rewrite()[:3]})
        )
    assert DialogueContext.objects.filter(adversarial=True).count() == 0


@pytest.mark.django_db
def test_sources_are_chosen_among_regular_contexts():
    study = StudyFactory()
    for i, emotion in enumerate(["anxiety", "anxiety", "sadness"]):
        DialogueContextFactory(study=study, external_id=f"c{i}", turns=SOURCE, emotion_type=emotion)
    DialogueContextFactory(study=study, external_id="adv", turns=SOURCE, adversarial=True)
    chosen = adversarial_sources_choose(study=study, n=2)
    assert {c.emotion_type for c in chosen} == {"anxiety", "sadness"}
    assert all(not c.adversarial for c in chosen)
