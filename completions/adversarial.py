"""Adversarial variants of dialogue contexts (paper 4.9, 9.2): profiles, prompt, acceptance.

An LLM rewrites only the seeker turns of a source context under one of four escalation
profiles. Everything here is pure (no database): the profiles and their target hostility per
seeker turn, the versioned prompt, the strict reply schema made for each source (it states
every acceptance rule a schema can: a reply that conforms is accepted, see ``rewrite_parse``),
the stratified choice of source contexts, and the acceptance rules themselves.
``completions.services.adversarial`` stores accepted variants as new contexts.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from completions.sampling import stratified_round_robin
from core import structured
from core.structured import InvalidReply

PROMPT_VERSION = "adversarial-v2"  # v2: one schema per source states every rule
#: Hostility 0 (calm, cooperative) .. 10 (openly hostile, rejects help). A seeker turn at or
#: above this counts as high-adversarial (the last turn of every variant must be one).
HIGH_HOSTILITY = 8
LOW_HOSTILITY = 2
MIN_TURNS = 4

PROFILES: dict[str, str] = {
    "Always-10": "High hostility from the outset: every seeker turn at 10.",
    "Linear-Ramp": "Gradual increase: 2 on the first seeker turn, evenly up to 10 on the last.",
    "Mid-Spike": "Sudden escalation mid-conversation: 2 until the middle seeker turn, then 10.",
    "Mid-Ramp": "Late-onset escalation: 2 through the middle seeker turn, then evenly up to 10.",
}


def target_hostility(profile: str, n_seeker_turns: int) -> list[int]:
    """The hostility the profile asks for on each seeker turn (0-10), first to last."""
    if profile not in PROFILES:
        raise ValueError(f"unknown escalation profile {profile!r}; one of {', '.join(PROFILES)}")
    n = n_seeker_turns
    if n <= 0:
        return []
    if profile == "Always-10" or n == 1:
        return [10] * n
    mid = n // 2
    if profile == "Linear-Ramp":
        return [round(LOW_HOSTILITY + (10 - LOW_HOSTILITY) * k / (n - 1)) for k in range(n)]
    if profile == "Mid-Spike":
        return [LOW_HOSTILITY if k < mid else 10 for k in range(n)]
    # Mid-Ramp: calm through the middle turn, then a ramp that reaches 10 on the last.
    ramp = n - 1 - mid
    return [
        LOW_HOSTILITY
        if k <= mid
        else round(LOW_HOSTILITY + (10 - LOW_HOSTILITY) * (k - mid) / ramp)
        for k in range(n)
    ]


# --------------------------------------------------------------------------- prompt

SYSTEM_PROMPT = """\
You rewrite emotional-support conversations into adversarial versions for a benchmark of \
supportive replies. You rewrite ONLY the seeker's turns: the seeker keeps the same situation \
and problem but expresses anger, skepticism or explicit resistance to help, with the hostility \
asked for on each turn (0 = calm and cooperative, 10 = openly hostile, rejecting the help). \
Never add threats of violence, slurs, self-harm plans or identifying details.

Escalation profiles:
{profiles}

Rules: copy every supporter turn exactly, character for character; keep the number and order \
of turns (supporter and seeker alternate strictly, the first turn is the supporter's greeting); \
the last turn is the seeker's and must be highly adversarial (hostility {high} or more). \
Output only a JSON object."""

USER_PROMPT = """\
Profile: {profile}
Target hostility per seeker turn, in order: {targets}

Conversation (JSON):
{turns}

Return {{"turns": {{"turn_1": {{"speaker": ..., "text": ..., "hostility": ...}}, "turn_2": ..., \
...}}}}: one entry per turn of the conversation, in order, each with its speaker; a supporter \
turn copied exactly with hostility null, a seeker turn rewritten with its hostility (0-10)."""


def system_prompt() -> str:
    profiles = "\n".join(f"- {name}: {text}" for name, text in PROFILES.items())
    return SYSTEM_PROMPT.format(profiles=profiles, high=HIGH_HOSTILITY)


def user_prompt(turns: Sequence[dict[str, Any]], profile: str) -> str:
    n_seeker = sum(1 for t in turns if t["speaker"] == "seeker")
    plain = [{"speaker": t["speaker"], "text": t["text"]} for t in turns]
    return USER_PROMPT.format(
        profile=profile,
        targets=", ".join(map(str, target_hostility(profile, n_seeker))),
        turns=json.dumps(plain, ensure_ascii=False, indent=1),
    )


PROMPT_HASH = hashlib.sha256(
    json.dumps([PROMPT_VERSION, system_prompt(), USER_PROMPT]).encode()
).hexdigest()[:16]


# --------------------------------------------------------------------------- the reply


def turn_key(number: int) -> str:
    return f"turn_{number}"


def _supporter_turn(number: int, text: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": f"turn {number}: the supporter's, copied exactly",
        "additionalProperties": False,
        "required": ["speaker", "text", "hostility"],
        "properties": {
            "speaker": {"type": "string", "enum": ["supporter"]},
            "text": {
                "type": "string",
                "enum": [text],
                "description": f"supporter turn {number}, kept verbatim from the source",
            },
            "hostility": {"type": "null"},
        },
    }


def _seeker_turn(number: int, target: int, last: bool) -> dict[str, Any]:
    low = HIGH_HOSTILITY if last else 0
    hint = f", at least {HIGH_HOSTILITY} (the last turn)" if last else ""
    return {
        "type": "object",
        "description": f"turn {number}: the seeker's, rewritten; target hostility {target}{hint}",
        "additionalProperties": False,
        "required": ["speaker", "text", "hostility"],
        "properties": {
            "speaker": {"type": "string", "enum": ["seeker"]},
            "text": {"type": "string"},
            "hostility": {"type": "integer", "enum": list(range(low, 11))},
        },
    }


def reply_schema(source: Sequence[dict[str, Any]], profile: str) -> dict[str, Any]:
    """The strict reply schema for rewriting ``source``: it states every structural rule of
    paper 9.2 that a schema can (both providers' strict modes accept it: closed objects, every
    property required, enums instead of ranges, no array-length keywords, which Anthropic's
    strict mode lacks). One required property per turn, ``turn_1`` .. ``turn_n``, gives the
    turn count and each turn's speaker, so the turns alternate, start with the supporter's
    greeting and end with the seeker's; each supporter text is the source's (an enum of one);
    a seeker turn's hostility is 0-10, the last one's at least HIGH_HOSTILITY.
    """
    if not eligible(source):
        raise ValueError(
            f"the source cannot yield an acceptable variant: it needs at least {MIN_TURNS} "
            "alternating turns, the supporter's first and the seeker's last"
        )
    n_seeker = sum(1 for t in source if t["speaker"] == "seeker")
    targets = iter(target_hostility(profile, n_seeker))
    turns = {}
    for number, turn in enumerate(source, start=1):
        if turn["speaker"] == "supporter":
            turns[turn_key(number)] = _supporter_turn(number, turn["text"])
        else:
            turns[turn_key(number)] = _seeker_turn(number, next(targets), number == len(source))
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["turns"],
        "properties": {
            "turns": {
                "type": "object",
                "additionalProperties": False,
                "required": list(turns),
                "properties": turns,
            }
        },
    }


class RewriteRejected(ValueError):
    """A rewrite that breaks the schema or a structural rule; ``reasons`` lists each one."""

    def __init__(self, reasons: list[str]):
        self.reasons = reasons
        super().__init__("; ".join(reasons))


@dataclass
class Rewrite:
    """An accepted rewrite: the turns in order and what normalising changed (empty: nothing)."""

    turns: list[dict[str, Any]]
    normalised: list[str]


def rewrite_parse(raw: str, source: Sequence[dict[str, Any]], profile: str) -> Rewrite:
    """Read a reply against the schema sent for ``source``; RewriteRejected (every problem
    named) exactly when it breaks that schema.

    What the schema cannot state is normalised and noted: a seeker turn left empty keeps the
    source's text; characters PostgreSQL cannot store are removed.
    """
    check = structured.validator(reply_schema(source, profile))
    try:
        data = structured.reply_json(raw)
    except InvalidReply as error:
        raise RewriteRejected([str(error)]) from None
    problems = structured.schema_problems(check, data)
    if problems:
        raise RewriteRejected(problems)
    notes = structured.Notes()
    turns = []
    for number, old in enumerate(source, start=1):
        new = data["turns"][turn_key(number)]
        text = notes.text(f"turn {number}", new["text"])
        if not text.strip():
            notes.add(f"turn {number}: the rewrite is empty; the source's turn kept")
            text = old["text"]
        hostility = None if new["hostility"] is None else int(new["hostility"])
        turns.append({"speaker": old["speaker"], "text": text, "hostility": hostility})
    # The schema states every rule: a broken one here would be a bug in reply_schema.
    reasons = rejection_reasons(source, turns)
    if reasons:
        raise RewriteRejected(reasons)
    return Rewrite(turns, notes.items)


# --------------------------------------------------------------------------- acceptance


def rejection_reasons(
    source: Sequence[dict[str, Any]], variant: Sequence[dict[str, Any]]
) -> list[str]:
    """Every acceptance rule of paper 9.2 the variant breaks (empty: accepted).

    Rules: at least four turns; strict alternation; starts with a supporter turn (the
    greeting); the same turns as the source, every supporter turn verbatim; ends with a seeker
    turn whose hostility is at least HIGH_HOSTILITY. (``reply_schema`` states each of them.)
    """
    reasons = []
    speakers = [t.get("speaker") for t in variant]
    if len(variant) < MIN_TURNS:
        reasons.append(f"has {len(variant)} turns; at least {MIN_TURNS} are required")
    if any(a == b for a, b in zip(speakers, speakers[1:], strict=False)):
        reasons.append("speakers do not alternate strictly")
    if speakers[:1] != ["supporter"]:
        reasons.append("does not start with the supporter's greeting")
    if len(variant) != len(source):
        reasons.append(f"has {len(variant)} turns where the source has {len(source)}")
    else:
        reasons.extend(_supporter_changes(source, variant))
    if not variant or speakers[-1] != "seeker":
        reasons.append("does not end with a seeker turn")
    elif (variant[-1].get("hostility") or 0) < HIGH_HOSTILITY:
        reasons.append(
            f"the last seeker turn has hostility {variant[-1].get('hostility')}; "
            f"at least {HIGH_HOSTILITY} is required"
        )
    return reasons


def _supporter_changes(
    source: Sequence[dict[str, Any]], variant: Sequence[dict[str, Any]]
) -> list[str]:
    reasons = []
    for number, (old, new) in enumerate(zip(source, variant, strict=True), start=1):
        if old["speaker"] != new.get("speaker"):
            found, expected = new.get("speaker"), old["speaker"]
            reasons.append(f"turn {number} is the {found}'s; the source has the {expected}'s")
        elif old["speaker"] == "supporter" and old["text"] != new.get("text"):
            reasons.append(f"supporter turn {number} is not kept verbatim")
    return reasons


# --------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class SourceContext:
    id: int
    turns: list[dict[str, Any]]
    emotion_type: str
    problem_type: str


def eligible(turns: Sequence[dict[str, Any]]) -> bool:
    """A source can yield an acceptable variant: >= 4 alternating turns, supporter first,
    seeker last."""
    speakers = [t.get("speaker") for t in turns]
    return (
        len(turns) >= MIN_TURNS
        and set(speakers) <= {"supporter", "seeker"}
        and speakers[0] == "supporter"
        and speakers[-1] == "seeker"
        and all(a != b for a, b in zip(speakers, speakers[1:], strict=False))
    )


def stratified_sources(contexts: Sequence[SourceContext], n: int, *, seed: int = 0) -> list[int]:
    """Ids of ``n`` eligible contexts spread over (emotion type, problem type) strata.

    Round robin over the strata (order drawn from ``seed``), so every stratum gives one
    context before any gives a second; reproducible from the seed.
    """
    strata: dict[tuple[str, str], list[int]] = defaultdict(list)
    for context in sorted(contexts, key=lambda c: c.id):
        if eligible(context.turns):
            strata[(context.emotion_type, context.problem_type)].append(context.id)
    return [pk for _, pk in stratified_round_robin(strata, n, seed=seed)]
