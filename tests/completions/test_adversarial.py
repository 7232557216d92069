"""Adversarial variants: escalation profiles, acceptance rules, stratified sources, storage."""

from __future__ import annotations

import json

import pytest

from completions import adversarial
from completions.models import DialogueContext
from completions.services.adversarial import (
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


def as_reply(turns: list[dict]) -> str:
    """A reply in the shape the schema asks for: one entry per turn, turn_1 .. turn_n."""
    return json.dumps({"turns": {f"turn_{i}": t for i, t in enumerate(turns, start=1)}})


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
    accepted = adversarial.rewrite_parse(as_reply(rewrite()), SOURCE, "Linear-Ramp")
    assert accepted.turns == rewrite() and accepted.normalised == []


def test_the_schema_states_the_turns_speakers_verbatim_supporters_and_the_last_hostility():
    schema = adversarial.reply_schema(SOURCE, "Linear-Ramp")
    turns = schema["properties"]["turns"]
    assert turns["required"] == ["turn_1", "turn_2", "turn_3", "turn_4"]
    assert turns["additionalProperties"] is False
    speakers = [t["properties"]["speaker"]["enum"] for t in turns["properties"].values()]
    assert speakers == [["supporter"], ["seeker"], ["supporter"], ["seeker"]]
    assert turns["properties"]["turn_3"]["properties"]["text"]["enum"] == [SOURCE[2]["text"]]
    assert turns["properties"]["turn_2"]["properties"]["hostility"]["enum"] == list(range(11))
    assert turns["properties"]["turn_4"]["properties"]["hostility"]["enum"] == [8, 9, 10]
    assert "target hostility 2" in turns["properties"]["turn_2"]["description"]


def test_a_source_that_cannot_yield_a_variant_has_no_schema():
    with pytest.raises(ValueError, match="at least 4 alternating turns"):
        adversarial.reply_schema(SOURCE[1:], "Always-10")


def test_an_empty_seeker_turn_keeps_the_sources_text_and_says_so():
    accepted = adversarial.rewrite_parse(
        as_reply(rewrite(t1={"speaker": "seeker", "text": "  ", "hostility": 7})),
        SOURCE,
        "Always-10",
    )
    assert accepted.turns[1] == {"speaker": "seeker", "text": SOURCE[1]["text"], "hostility": 7}
    assert accepted.normalised == ["turn 2: the rewrite is empty; the source's turn kept"]


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


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (as_reply(rewrite(t0={**SOURCE[0], "speaker": "narrator", "hostility": None})), "turn_1"),
        (
            as_reply(rewrite(t2={**SOURCE[2], "text": "That's awful.", "hostility": None})),
            "supporter turn 3, kept verbatim",
        ),
        (as_reply(rewrite(t3={"speaker": "seeker", "text": "Fine.", "hostility": 3})), "turn_4"),
        (as_reply(rewrite()[:3]), "'turn_4' is a required property"),
        (json.dumps({"turns": rewrite()}), "is not of type 'object'"),
        ("{not json", "not JSON"),
    ],
)
def test_a_schema_break_is_rejected_with_the_field(reply, reason):
    with pytest.raises(adversarial.RewriteRejected) as error:
        adversarial.rewrite_parse(reply, SOURCE, "Always-10")
    assert any(reason in r for r in error.value.reasons), error.value.reasons


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
        source=source, profile="Linear-Ramp", raw_reply=as_reply(rewrite())
    )
    assert variant.adversarial and variant.escalation_profile == "Linear-Ramp"
    assert variant.adversarial_source == source
    assert variant.turns[0] == SOURCE[0] and variant.turns[-1]["text"].startswith("Spare me")
    assert variant.metadata["adversarial"]["hostility"] == [6, 10]
    again = adversarial_context_create(
        source=source, profile="Linear-Ramp", raw_reply=as_reply(rewrite())
    )
    assert again.pk == variant.pk
    assert list(source.adversarial_variants.all()) == [variant]


@pytest.mark.django_db
def test_a_rejected_rewrite_stores_nothing():
    source = DialogueContextFactory(turns=SOURCE)
    with pytest.raises(adversarial.RewriteRejected):
        adversarial_context_create(
            source=source, profile="Always-10", raw_reply=as_reply(rewrite()[:3])
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
