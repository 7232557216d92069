"""The 9.10 taxonomy, the label prompt and the strict reply schema."""

from __future__ import annotations

import json

import pytest

from completions import strategies
from ranking.analysis import STRATEGIES as ANALYSIS_STRATEGIES

COMPLETION = (
    "It sounds like you're feeling really overwhelmed by your workload. "
    "Have you tried deep breathing to manage stress?"
)


def reply(**overrides) -> dict:
    labels = {
        name: {"status": "absent", "p": 0.05, "evidence": None}
        for name in strategies.STRATEGY_NAMES
    }
    labels["Reflective Statements"] = {
        "status": "present",
        "p": 0.95,
        "evidence": "It sounds like you're feeling really overwhelmed by your workload.",
    }
    labels["Stress Management"] = {
        "status": "present",
        "p": 0.8,
        "evidence": "deep breathing",
    }
    labels["Offer Hope"] = {"status": "uncertain", "p": 0.4, "evidence": None}
    labels.update(overrides)
    return {"reasoning": "Mirrors the workload; suggests breathing.", "labels": labels}


def test_the_taxonomy_is_the_papers_fifteen_strategies_in_order():
    assert strategies.STRATEGY_NAMES == (
        "Affirmation",
        "Avoid Judgment and Criticism",
        "Clarification",
        "Collaborative Planning",
        "Emotional Validation",
        "Normalize Experiences",
        "Offer Hope",
        "Promote Self-Care Practices",
        "Provide Different Perspectives",
        "Reflective Statements",
        "Reframe Negative Thoughts",
        "Share Information",
        "Stress Management",
        "Suggest Options",
        "Chit Chat",
    )
    assert list(strategies.STRATEGY_NAMES) == ANALYSIS_STRATEGIES
    assert all(len(s.examples) >= 2 and s.definition for s in strategies.TAXONOMY)


def test_the_prompt_names_every_strategy_with_its_definition_and_is_versioned():
    system = strategies.system_prompt()
    for strategy in strategies.TAXONOMY:
        assert strategy.name in system and strategy.definition in system
    assert "uncertain" in strategies.user_prompt("Hello") and "Hello" in strategies.user_prompt(
        "Hello"
    )
    assert strategies.PROMPT_VERSION and len(strategies.PROMPT_HASH) == 16
    assert strategies.TAXONOMY_VERSION and len(strategies.TAXONOMY_HASH) == 16


def test_a_valid_reply_is_read_in_taxonomy_order():
    read = strategies.label_reply_read(json.dumps(reply()), COMPLETION)
    assert list(read.labels) == list(strategies.STRATEGY_NAMES)
    assert read.labels["Stress Management"] == {
        "status": "present",
        "p": 0.8,
        "evidence": "deep breathing",
    }
    assert read.normalised == [] and read.reasoning.startswith("Mirrors")
    # Uncertain is not present.
    assert strategies.present_strategies(read.labels) == [
        "Reflective Statements",
        "Stress Management",
    ]


def test_evidence_may_differ_in_whitespace_and_quote_style():
    curly = "It sounds like you\u2019re  feeling really overwhelmed"
    labels = reply(**{"Reflective Statements": {"status": "present", "p": 0.9, "evidence": curly}})
    read = strategies.label_reply_read(json.dumps(labels), COMPLETION)
    assert read.labels["Reflective Statements"]["evidence"] == curly and not read.normalised


def test_evidence_not_in_the_completion_is_set_aside_and_flagged_keeping_the_status():
    made_up = {"status": "present", "p": 0.9, "evidence": "You are so brave."}
    read = strategies.label_reply_read(json.dumps(reply(Affirmation=made_up)), COMPLETION)
    assert read.labels["Affirmation"] == {
        "status": "present",
        "p": 0.9,
        "evidence": None,
        "evidence_unverified": "You are so brave.",
    }
    assert read.normalised == [
        "Affirmation: evidence not found in the response, set aside (status kept)"
    ]
    assert "Affirmation" in strategies.present_strategies(read.labels)


def test_a_p_outside_0_1_is_clamped_with_the_reported_value_kept():
    body = reply(Affirmation={"status": "present", "p": 1.5, "evidence": None})
    body["labels"]["Chit Chat"] = {"status": "absent", "p": -3, "evidence": None}
    body["labels"]["Offer Hope"] = {"status": "absent", "p": int("9" * 400), "evidence": None}
    read = strategies.label_reply_read(json.dumps(body), COMPLETION)
    assert read.labels["Affirmation"]["p"] == 1.0
    assert read.labels["Affirmation"]["p_reported"] == 1.5
    assert read.labels["Chit Chat"]["p"] == 0.0 and read.labels["Chit Chat"]["p_reported"] == -3
    assert read.labels["Offer Hope"] == {
        "status": "absent",
        "p": 1.0,
        "evidence": None,
        "p_reported": "inf",
    }
    assert len(read.normalised) == 3 and "Affirmation: p: 1.5 is outside 0-1" in read.normalised[0]


def test_text_postgresql_cannot_store_is_removed_and_noted():
    body = reply(Affirmation={"status": "present", "p": 0.5, "evidence": "deep\u0000 breathing"})
    body["reasoning"] = "half a pair \ud800 here"
    read = strategies.label_reply_read(json.dumps(body), COMPLETION)
    assert read.labels["Affirmation"]["evidence"] == "deep breathing"
    assert read.reasoning == "half a pair  here"
    assert any(n.startswith("reasoning: 1 character") for n in read.normalised)


def test_an_off_taxonomy_strategy_is_refused():
    body = reply()
    body["labels"]["Self-disclosure"] = {"status": "present", "p": 0.7, "evidence": None}
    with pytest.raises(strategies.LabelReplyError, match="not in the taxonomy: 'Self-disclosure'"):
        strategies.label_reply_read(json.dumps(body), COMPLETION)


def test_a_missing_strategy_is_refused():
    body = reply()
    del body["labels"]["Chit Chat"]
    with pytest.raises(strategies.LabelReplyError, match="missing: 'Chit Chat'"):
        strategies.label_reply_read(json.dumps(body), COMPLETION)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("not json at all", "is not JSON"),
        (json.dumps(reply(Affirmation={"status": "maybe", "p": 0.5})), "labels.Affirmation"),
        (json.dumps(reply(Affirmation={"status": "present", "p": "high", "evidence": None})), "p"),
        (json.dumps({**reply(), "winner": "a"}), "'winner' was unexpected"),
        (json.dumps(reply(Affirmation={"status": "present", "p": 0.5, "evidence": 3})), "3"),
        ('{"reasoning": "", "labels": NaN}', "NaN is not a JSON number"),
    ],
)
def test_schema_breaks_give_a_message_fit_for_a_repair_prompt(raw, message):
    with pytest.raises(strategies.LabelReplyError, match="reply") as error:
        strategies.label_reply_read(raw, COMPLETION)
    assert message in str(error.value)


def test_the_json_schema_lists_exactly_the_taxonomy():
    labels = strategies.REPLY_JSON_SCHEMA["properties"]["labels"]
    assert labels["required"] == list(strategies.STRATEGY_NAMES)
    assert labels["additionalProperties"] is False
    assert labels["properties"]["Affirmation"]["properties"]["status"]["enum"] == [
        "present",
        "absent",
        "uncertain",
    ]
