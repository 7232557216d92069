"""The 15-strategy taxonomy of paper 9.10, the label prompt and the strict reply schema.

Versioned: a label set stores TAXONOMY_VERSION, PROMPT_VERSION and their content hashes, so a
changed definition or prompt never mixes with labels made under the old one. Names are spelled
exactly as in the paper (they are keys of the strategy-labels export, a contract).

The first example of each strategy is the paper's; the second is ours, to give the classifier
and the human labellers a contrasting case.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core import structured
from core.structured import InvalidReply


@dataclass(frozen=True)
class Strategy:
    name: str
    definition: str
    examples: tuple[str, ...]


TAXONOMY_VERSION = "heart-9.10-v1"

TAXONOMY: tuple[Strategy, ...] = (
    Strategy(
        "Affirmation",
        "Acknowledging and positively reinforcing the person's strengths, feelings, or actions.",
        (
            "You've shown incredible resilience in facing these challenges.",
            "Reaching out about this took real courage.",
        ),
    ),
    Strategy(
        "Avoid Judgment and Criticism",
        "Providing support without expressing negative judgments or criticisms of the person's "
        "thoughts, feelings, or actions.",
        (
            "It's understandable that you felt that way in that situation.",
            "There's no right or wrong way to react to news like that.",
        ),
    ),
    Strategy(
        "Clarification",
        "Asking questions or restating what was said to ensure clear understanding of the "
        "person's feelings or situation.",
        (
            "Could you explain a bit more about what you mean by that?",
            "When you say things fell apart, do you mean at work or at home?",
        ),
    ),
    Strategy(
        "Collaborative Planning",
        "Working together to develop strategies or plans to address specific issues or challenges.",
        (
            "Let's brainstorm some strategies that could help you manage this stress.",
            "Shall we think through what a first step this week could look like?",
        ),
    ),
    Strategy(
        "Emotional Validation",
        "Acknowledging and accepting the person's emotions as legitimate and important.",
        (
            "It's completely normal to feel sad in a situation like this.",
            "Of course you're angry; anyone would be after being treated that way.",
        ),
    ),
    Strategy(
        "Normalize Experiences",
        "Helping the person understand that their experiences or feelings are common and not "
        "something to be ashamed of.",
        (
            "Many people go through similar challenges, and it's okay to feel this way.",
            "A lot of new parents feel exactly this exhausted in the first months.",
        ),
    ),
    Strategy(
        "Offer Hope",
        "Providing reassurance that things can improve and that there is hope for a better future.",
        (
            "I'm confident that you'll find a way through this challenge.",
            "This won't feel this heavy forever.",
        ),
    ),
    Strategy(
        "Promote Self-Care Practices",
        "Encouraging the person to engage in activities that promote physical, emotional, and "
        "mental well-being.",
        (
            "Have you considered setting aside some time for relaxation or a hobby you enjoy?",
            "Make sure you're still eating and sleeping as well as you can.",
        ),
    ),
    Strategy(
        "Provide Different Perspectives",
        "Offering new viewpoints or ways of thinking about a situation to help broaden "
        "understanding and possibly reduce distress.",
        (
            "Have you considered looking at the situation from this angle?",
            "Maybe your friend's silence says more about what she is going through than about you.",
        ),
    ),
    Strategy(
        "Reflective Statements",
        "Mirroring back what the person has said to show understanding and empathy.",
        (
            "It sounds like you're feeling really overwhelmed by your workload.",
            "So you feel stuck between your parents' hopes and what you want for yourself.",
        ),
    ),
    Strategy(
        "Reframe Negative Thoughts",
        "Helping to shift negative or unhelpful thought patterns into more positive or "
        "realistic ones.",
        (
            "Instead of thinking of it as a failure, could we see it as a learning opportunity?",
            "Not getting this job doesn't mean you're unemployable; it means this one wasn't it.",
        ),
    ),
    Strategy(
        "Share Information",
        "Providing factual information or resources that might be helpful in understanding or "
        "coping with a situation.",
        (
            "I read an article about coping strategies that might be useful for you.",
            "Many universities offer free counselling sessions to their students.",
        ),
    ),
    Strategy(
        "Stress Management",
        "Offering techniques or suggestions to help reduce or manage stress.",
        (
            "Have you tried deep breathing or mindfulness exercises to manage stress?",
            "Breaking the day into short blocks with small breaks can take the edge off.",
        ),
    ),
    Strategy(
        "Suggest Options",
        "Presenting various possibilities or alternatives that the person might consider in "
        "their situation.",
        (
            "One option might be to talk to someone you trust about what you're going through.",
            "You could ask for an extension, or drop one course this term.",
        ),
    ),
    Strategy(
        "Chit Chat",
        "Engaging in light, casual conversation to build rapport and provide a sense of "
        "normalcy and comfort.",
        (
            "How's your day going so far?",
            "Did you get to enjoy any of the sunshine this weekend?",
        ),
    ),
)

STRATEGY_NAMES: tuple[str, ...] = tuple(s.name for s in TAXONOMY)
# Built from the taxonomy: mypy cannot list the members of an enum made at run time.
StrategyName = StrEnum("StrategyName", {f"S{i}": name for i, name in enumerate(STRATEGY_NAMES)})  # type: ignore[misc]


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


TAXONOMY_HASH = _digest([[s.name, s.definition, list(s.examples)] for s in TAXONOMY])

# --------------------------------------------------------------------------- the prompt

PROMPT_VERSION = "label-v2"  # v2: schema states every rule; evidence set aside, not refused

SYSTEM_PROMPT_HEAD = """\
Your goal: label counseling/support strategies in a short response written by a supporter \
in an emotional-support conversation.

The taxonomy has 15 strategies. Each has an operational definition and examples:
"""

SYSTEM_PROMPT_TAIL = """
Read the single response you are given. For EVERY one of the 15 strategies decide whether it \
is clearly present, clearly absent, or uncertain. Output only a JSON object, nothing else."""

USER_PROMPT = """\
Response to label:
<<<
{completion}
>>>

Instructions:
(a) Reason step by step when mapping phrases of the response to strategies; write that \
reasoning, briefly, in "reasoning".
(b) Abstain (status "uncertain") when the evidence is weak.
(c) Return a JSON object {{"reasoning": "...", "labels": {{...}}}} where "labels" has exactly \
the 15 strategy names as keys, each with "status" ("present", "absent" or "uncertain"), "p" \
(your probability, 0 to 1, that the strategy is present) and "evidence": a short snippet \
copied exactly from the response that triggered the label (for example one sentence), or \
null."""


def system_prompt() -> str:
    blocks = []
    for number, strategy in enumerate(TAXONOMY, start=1):
        examples = " ".join(f'"{e}"' for e in strategy.examples)
        blocks.append(f"{number}. {strategy.name}: {strategy.definition} Examples: {examples}")
    return SYSTEM_PROMPT_HEAD + "\n".join(blocks) + "\n" + SYSTEM_PROMPT_TAIL


def user_prompt(completion: str) -> str:
    return USER_PROMPT.format(completion=completion)


# --------------------------------------------------------------------------- the reply


class LabelStatus(StrEnum):
    PRESENT = "present"
    ABSENT = "absent"
    UNCERTAIN = "uncertain"


_LABEL_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["status", "p", "evidence"],
    "properties": {
        "status": {"type": "string", "enum": [s.value for s in LabelStatus]},
        # 0 to 1: a range Anthropic's strict mode cannot state (no minimum/maximum); a p
        # outside it is clamped and flagged, not refused.
        "p": {"type": "number", "description": "probability that the strategy is present, 0-1"},
        "evidence": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
}

#: The JSON schema for native structured outputs (OpenAI strict mode, Anthropic's output
#: format): every strategy an explicit required property, so an off-taxonomy key cannot be
#: produced. A reply is accepted exactly when it conforms; see ``label_reply_read``.
REPLY_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["reasoning", "labels"],
    "properties": {
        "reasoning": {"type": "string"},
        "labels": {
            "type": "object",
            "additionalProperties": False,
            "required": list(STRATEGY_NAMES),
            "properties": {name: _LABEL_SCHEMA for name in STRATEGY_NAMES},
        },
    },
}
_CHECK = structured.validator(REPLY_JSON_SCHEMA)
PROMPT_HASH = _digest([PROMPT_VERSION, system_prompt(), USER_PROMPT, REPLY_JSON_SCHEMA])


class LabelReplyError(ValueError):
    """A reply that breaks the schema; the message is written to be sent back for a repair."""


@dataclass
class LabelRead:
    """A reply read against the completion: the export's ``labels`` object (taxonomy order),
    the classifier's reasoning, and what normalising changed (empty: nothing)."""

    labels: dict[str, dict[str, Any]]
    reasoning: str
    normalised: list[str]


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _normalised(text: str) -> str:
    # Whitespace runs and typographic quotes are not evidence of a made-up snippet.
    return re.sub(r"\s+", " ", text.translate(_QUOTES)).strip()


def _taxonomy_problems(data: object) -> list[str]:
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, dict):
        return []
    unknown = sorted(set(labels) - set(STRATEGY_NAMES))
    missing = [name for name in STRATEGY_NAMES if name not in labels]
    problems = []
    if unknown:
        problems.append(f"not in the taxonomy: {', '.join(map(repr, unknown))}")
    if missing:
        problems.append(f"missing: {', '.join(map(repr, missing))}")
    if problems:
        return ["labels must have exactly the 15 strategy names; " + "; ".join(problems)]
    return []


def _schema_problems(data: object) -> list[str]:
    problems = _taxonomy_problems(data)
    for error in structured.schema_errors(_CHECK, data):
        said = problems and list(error.absolute_path) == ["labels"]
        if said and error.validator in ("required", "additionalProperties"):
            continue  # named above with the taxonomy
        problems.append(structured.problem_text(error))
    return problems[: structured.MAX_PROBLEMS]


def label_reply_read(raw: str, completion: str) -> LabelRead:
    """Read one reply; LabelReplyError (every problem listed) exactly when it breaks the schema.

    What the schema cannot state is normalised and noted, never refused: a ``p`` outside 0-1
    is clamped (``p_reported`` keeps the reply's value); evidence not found in the completion
    (whitespace and curly quotes aside) is set aside (``evidence`` null, the quote kept as
    ``evidence_unverified``) while the label keeps its status; characters PostgreSQL cannot
    store are removed.
    """
    try:
        data = structured.reply_json(raw)
    except InvalidReply as error:
        raise LabelReplyError(f"The reply is not JSON: {error}") from None
    problems = _schema_problems(data)
    if problems:
        raise LabelReplyError("The reply does not match the schema: " + "; ".join(problems))
    notes = structured.Notes()
    text = _normalised(completion)
    labels = {name: _label(name, data["labels"][name], text, notes) for name in STRATEGY_NAMES}
    reasoning = notes.text("reasoning", data["reasoning"])
    return LabelRead(labels, reasoning, notes.items)


def _float(value: float) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float: JSON allows any length
        return math.inf if value > 0 else -math.inf


def _label(name: str, reply: dict[str, Any], text: str, notes: structured.Notes) -> dict[str, Any]:
    reported = _float(reply["p"])
    p = notes.clamp(f"{name}: p", reported, 0.0, 1.0)
    label = {"status": reply["status"], "p": p, "evidence": None}
    if p != reported:
        label["p_reported"] = reported if math.isfinite(reported) else str(reported)
    if reply["evidence"] is not None:
        evidence = notes.text(f"{name}: evidence", reply["evidence"])
        if _normalised(evidence) in text:
            label["evidence"] = evidence
        else:
            label["evidence_unverified"] = evidence
            notes.add(f"{name}: evidence not found in the response, set aside (status kept)")
    return label


def present_strategies(labels: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Strategies marked present, in taxonomy order (uncertain counts as not present)."""
    return [name for name in STRATEGY_NAMES if labels.get(name, {}).get("status") == "present"]
