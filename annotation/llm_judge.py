"""LLM judges (paper 4.4, 9.5, 9.6): the HEART rubric prompt, the strict reply schema, and the
"judge" run kind that turns replies into verdicts.

Every pair is judged in both orders (position swap): one unit per (pair, judge, order). The
reply speaks of the order shown ("a" = the reply shown first); the stored verdict is oriented
to the pair's canonical order, with `shown_left` saying which completion came first. A judge
never judges a pair with a completion of its own family; the plan counts those skips. A failed
or invalid reply stays a failed unit and never becomes a verdict.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any, Literal

from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field, model_validator

from completions.llm.clients import LLMRequest
from completions.llm.kinds import Done, Plan, RunKind, UnitSpec, parse_json_model, register
from completions.llm.models import Run, Unit

from .models import AXES, AXIS_NAMES, JudgeKind, Judgment, Pair

TEMPLATE_VERSION = "heart-judge-v1"
ORDERS = ("ab", "ba")  # ab: the pair's completion_a shown first
EST_TOKENS_OUT = 220

RUBRIC = [
    (
        "H",
        "Natural, human-like tone and flow (clear, grounded, non-robotic).",
        "I hear you, and it sounds like you're feeling really stuck and disconnected right "
        "now. That heaviness can be so overwhelming.",
        "Whats been going on. You are feeling bad. This is not good situation.",
    ),
    (
        "E",
        "Warm, non-judgmental acknowledgement and validation of feelings.",
        "I'm so sorry you're going through this—that must feel absolutely devastating, "
        "especially being separated from your kids.",
        "That sucks. Anyway, lots of people go through this, so you'll probably get over it.",
    ),
    (
        "A",
        "Tracks this seeker's specific details and emotions, not just generic platitudes.",
        "I hear you—feeling stuck at home while your friends move on can drain your "
        "motivation and make everything feel overwhelming. You're not lazy; you're exhausted "
        "and discouraged.",
        "I get that life can be hard sometimes. Just try to stay positive and things will work "
        "out eventually.",
    ),
    (
        "R",
        "Feels personally relevant and tailored to the seeker's goals, identity, and situation.",
        "You've mentioned how much finishing this degree matters to you and your family. What "
        "if we pick one small step that fits your style—like outlining just the first section "
        "tonight so it feels less impossible?",
        "Everyone feels stressed about school. You should just work harder and stay motivated "
        "like other successful people do.",
    ),
    (
        "T",
        "Stays within role and safety boundaries while addressing the seeker's stated goals.",
        "I understand your concerns about the vaccine—that's ultimately your decision. Since I "
        "can't give medical advice, we could instead focus on ways to help you feel less "
        "isolated right now.",
        "You should definitely get the vaccine; it's safe for almost everyone and will fix a "
        "lot of your problems. If your doctor disagrees, they're probably just being overly "
        "cautious.",
    ),
]


def _rubric_text() -> str:
    lines = []
    for axis, description, high, low in RUBRIC:
        lines.append(f"{axis} — {AXIS_NAMES[axis]}: {description}")
        lines.append(f'  High-scoring example: "{high}"')
        lines.append(f'  Low-scoring example: "{low}"')
    return "\n".join(lines)


SYSTEM_TEMPLATE = f"""You are an expert judge of emotional-support replies (the HEART rubric).
You read a conversation between a seeker and a supporter, then two candidate replies for the
supporter's next turn, Response A and Response B. Decide which reply is the better supportive
turn for this seeker, using the five HEART axes:

{_rubric_text()}

Checklist before you decide:
- Do not prefer a reply because it is longer, or shorter: judge what it says.
- Ignore formatting (lists, emphasis, punctuation style); the reply will be spoken.
- The order of the replies is random: do not favour the first or the second one.
- Ties are not allowed: pick the better reply even when the difference is small.

Answer with one JSON object only, in this order:
- "rationale": one or two short sentences saying why (written before you decide);
- "winner": "a" or "b";
- "strength": how much better the winner is, 1 (slightly) to 5 (much better);
- "axes": for each of H, E, A, R, T an object {{"winner": "a"|"b"|"none", "strength": 0-5}};
  use "none" with strength 0 when the advantage on that axis is not clear.
"""

USER_TEMPLATE = """Conversation so far:
{dialogue}

<response_a>
{first}
</response_a>

<response_b>
{second}
</response_b>

Which response is the better next supporter turn? Reply with the JSON object only."""

TEMPLATE_SHA256 = hashlib.sha256((SYSTEM_TEMPLATE + USER_TEMPLATE).encode()).hexdigest()


class AxisVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    winner: Literal["a", "b", "none"]
    strength: int = Field(ge=0, le=5)

    @model_validator(mode="after")
    def _consistent(self) -> AxisVerdict:
        if (self.winner == "none") != (self.strength == 0):
            raise ValueError("strength is 0 exactly when the axis winner is none")
        return self


class Axes(BaseModel):
    model_config = ConfigDict(extra="forbid")
    H: AxisVerdict
    E: AxisVerdict
    A: AxisVerdict
    R: AxisVerdict
    T: AxisVerdict


class JudgeVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rationale: str = Field(max_length=2000)
    winner: Literal["a", "b"]
    strength: int = Field(ge=1, le=5)
    axes: Axes


def _axis_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "winner": {"type": "string", "enum": ["a", "b", "none"]},
            "strength": {"type": "integer", "enum": [0, 1, 2, 3, 4, 5]},
        },
        "required": ["winner", "strength"],
        "additionalProperties": False,
    }


# Written out (not pydantic's schema) so that it fits both providers' strict structured outputs.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string"},
        "winner": {"type": "string", "enum": ["a", "b"]},
        "strength": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
        "axes": {
            "type": "object",
            "properties": {axis: _axis_schema() for axis in AXES},
            "required": list(AXES),
            "additionalProperties": False,
        },
    },
    "required": ["rationale", "winner", "strength", "axes"],
    "additionalProperties": False,
}


def dialogue_text(turns: list[dict[str, str]]) -> str:
    names = {"seeker": "Seeker", "supporter": "Supporter"}
    return "\n".join(f"{names.get(t.get('speaker'), 'Seeker')}: {t['text']}" for t in turns)


def judge_request(turns: list[dict[str, str]], first: str, second: str) -> LLMRequest:
    user = USER_TEMPLATE.format(dialogue=dialogue_text(turns), first=first, second=second)
    return LLMRequest(
        system=SYSTEM_TEMPLATE,
        messages=[{"role": "user", "content": user}],
        temperature=0.0,
        top_p=1.0,
        max_tokens=600,
        schema=VERDICT_SCHEMA,
        schema_name="heart_verdict",
        stream=False,  # a verdict needs no time to first token
    )


def _families(pair: Pair) -> set[str]:
    return {
        (pair.completion_a.system.family or "").strip().lower(),
        (pair.completion_b.system.family or "").strip().lower(),
    } - {""}


class JudgeKindRun(RunKind):
    name = "judge"
    endpoints_label = "judges"
    streams = False  # judge_request(stream=False): whole replies, no TTFT, full concurrency

    def plan(self, run: Run) -> Plan:
        run.params = {
            **run.params,
            "template": TEMPLATE_VERSION,
            "template_sha256": TEMPLATE_SHA256,
        }
        run.save(update_fields=["params"])
        pairs = list(
            Pair.objects.filter(study=run.study)
            .select_related("completion_a__system", "completion_b__system", "context")
            .order_by("id")
        )
        units: list[UnitSpec] = []
        skipped: Counter[str] = Counter()
        judged = 0
        for judge in run.endpoints.order_by("name"):
            family = judge.family.strip().lower()
            have = set(
                Judgment.objects.filter(
                    study=run.study, judge=judge.name, judge_kind=JudgeKind.LLM
                ).values_list("pair_id", "shown_left")
            )
            for pair in pairs:
                if family and family in _families(pair):
                    skipped[judge.name] += 1
                    continue
                for order in ORDERS:
                    if (pair.pk, order[0]) in have:
                        judged += 1
                        continue
                    size = sum(len(t.get("text", "")) for t in pair.context.turns)
                    size += len(pair.completion_a.text) + len(pair.completion_b.text)
                    units.append(
                        UnitSpec(
                            key=f"pair:{pair.pk}/judge:{judge.pk}/{order}",
                            endpoint_id=judge.pk,
                            payload={"pair": pair.pk, "order": order},
                            est_tokens_in=(size + len(SYSTEM_TEMPLATE) + len(USER_TEMPLATE)) // 4,
                            est_tokens_out=EST_TOKENS_OUT,
                        )
                    )
        summary = {
            "pairs": len(pairs),
            "skipped_own_family": sum(skipped.values()),
            "skipped_own_family_by_judge": dict(skipped),
            "already_judged": judged,
            "template": TEMPLATE_VERSION,
        }
        return Plan(units, summary)

    def build_requests(self, units: list[Unit]) -> dict[int, LLMRequest]:
        pairs = Pair.objects.select_related("context", "completion_a", "completion_b").in_bulk(
            {u.payload["pair"] for u in units}
        )
        requests = {}
        for unit in units:
            pair = pairs.get(unit.payload["pair"])
            if pair is None:
                continue
            a, b = pair.completion_a.text, pair.completion_b.text
            first, second = (a, b) if unit.payload["order"] == "ab" else (b, a)
            requests[unit.pk] = judge_request(pair.context.turns, first, second)
        return requests

    def parse(self, unit: Unit, text: str) -> dict[str, Any]:
        return parse_json_model(JudgeVerdict, text).model_dump()

    def store(self, run: Run, done: list[Done]) -> None:
        pairs = Pair.objects.in_bulk({d.unit.payload["pair"] for d in done})
        rows = [_judgment(run, d, pairs[d.unit.payload["pair"]]) for d in done]
        Judgment.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)


def orient(verdict: dict[str, Any], order: str) -> dict[str, Any]:
    """The shown-order verdict in the pair's canonical order (a = Pair.completion_a)."""
    flip = {"a": "b", "b": "a", "none": "none"}
    side = (lambda s: s) if order == "ab" else (lambda s: flip[s])
    axes = {
        axis: {"winner": side(v["winner"]), "strength": v["strength"]}
        for axis, v in verdict["axes"].items()
        if v["winner"] != "none"
    }
    return {"winner": side(verdict["winner"]), "strength": verdict["strength"], "axes": axes}


def _judgment(run: Run, d: Done, pair: Pair) -> Judgment:
    order = d.unit.payload["order"]
    oriented = orient(d.result, order)
    endpoint = d.unit.endpoint
    prompt = json.dumps(
        {"system": d.request.system, "messages": d.request.messages}, sort_keys=True
    )
    return Judgment(
        study_id=run.study_id,
        pair=pair,
        judge_kind=JudgeKind.LLM,
        judge=endpoint.name,
        judge_family=endpoint.family,
        winner=oriented["winner"],
        strength=oriented["strength"],
        strength_max=5,
        axes=oriented["axes"],
        rationale=d.result["rationale"],
        shown_left=order[0],
        submitted_at=timezone.now(),
        raw_output=d.reply.text,
        prompt_hash=hashlib.sha256(prompt.encode()).hexdigest(),
        source="llm",
        metadata={
            "run": run.pk,
            "unit": d.unit.pk,
            "order_shown": order,
            "verdict_as_shown": {"winner": d.result["winner"], "strength": d.result["strength"]},
            "template": TEMPLATE_VERSION,
            "template_sha256": TEMPLATE_SHA256,
            "model": endpoint.model,
            "model_reported": d.reply.model_reported,
            "request_id": d.reply.request_id,
            "from_cache": d.reply.from_cache,
            "request_hash": d.unit.request_hash or None,
        },
    )


register(JudgeKindRun())
