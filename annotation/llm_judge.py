"""LLM judges (paper 4.4, 9.5, 9.6): the strict reply schema, how a reply becomes a verdict,
and the "judge" run kind. The prompt and its versions are in `annotation.judge_prompt`.

Every pair is judged in both orders (position swap): one unit per (pair, judge, order). The
reply speaks of the order shown ("a" = the reply shown first); the stored verdict is oriented
to the pair's canonical order, with `shown_left` saying which completion came first. A judge
never judges a pair with a completion of its own family; the plan counts those skips.

The contract with a provider: a reply is accepted exactly when it conforms to `VERDICT_SCHEMA`,
the schema the request sends (each rule the verdict must keep is stated there, within what the
strict modes of both providers accept). What a schema cannot state is normalised, never
refused, and the verdict's metadata lists each change (`normalised`): characters PostgreSQL
cannot store are removed from the rationale, and a rationale longer than `RATIONALE_MAX` is cut
(the raw reply keeps it whole). A reply that breaks the schema gets the engine's one repair
request, then its unit is invalid and never a verdict.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from django.utils import timezone

from completions.families import canonical_family
from core import structured
from llm.clients import LLMRequest
from llm.kinds import Done, Plan, RunKind, UnitSpec, register
from llm.models import Run, Unit

from . import judge_prompt
from .models import AXES, JudgeKind, Judgment, Pair

# The current template; every older one stays readable in judge_prompt.TEMPLATES.
TEMPLATE_VERSION = judge_prompt.CURRENT.version
TEMPLATE_SHA256 = judge_prompt.CURRENT.sha256
SYSTEM_TEMPLATE = judge_prompt.CURRENT.system
USER_TEMPLATE = judge_prompt.CURRENT.user
ORDERS = ("ab", "ba")  # ab: the pair's completion_a shown first
EST_TOKENS_OUT = 220
RATIONALE_MAX = 2000  # characters kept on the verdict; the raw reply keeps the whole text

STRENGTHS = [1, 2, 3, 4, 5]


def _axis_branch(winners: list[str], strengths: list[int], description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {
            "winner": {"type": "string", "enum": winners},
            "strength": {"type": "integer", "enum": strengths},
        },
        "required": ["winner", "strength"],
        "additionalProperties": False,
    }


# Written out (not generated) to fit both providers' strict structured outputs: the root is an
# object, every property is required, every object closed (additionalProperties false), ranges
# are enums (Anthropic's strict mode takes no minimum/maximum), and each axis is an anyOf whose
# branches start with the same key, "winner", with values no two branches share.
AXIS_SCHEMA: dict[str, Any] = {
    "anyOf": [
        _axis_branch(["a", "b"], STRENGTHS, "a or b is better on this axis, by 1 to 5"),
        _axis_branch(["none"], [0], "no clear advantage on this axis: winner none, strength 0"),
    ]
}

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string"},
        "winner": {"type": "string", "enum": ["a", "b"]},
        "strength": {"type": "integer", "enum": STRENGTHS},
        "axes": {
            "type": "object",
            "properties": {axis: AXIS_SCHEMA for axis in AXES},
            "required": list(AXES),
            "additionalProperties": False,
        },
    },
    "required": ["rationale", "winner", "strength", "axes"],
    "additionalProperties": False,
}
_CHECK = structured.validator(VERDICT_SCHEMA)


def verdict_read(text: str) -> dict[str, Any]:
    """The verdict in a reply, in the order shown, with `normalised` listing what changed.

    Raises InvalidReply (naming each problem) exactly when the reply breaks VERDICT_SCHEMA.
    """
    reply = structured.read_reply(_CHECK, text)
    notes = structured.Notes()
    rationale = notes.text("rationale", reply["rationale"], limit=RATIONALE_MAX)
    axes = {
        axis: {"winner": v["winner"], "strength": int(v["strength"])}
        for axis, v in reply["axes"].items()
    }
    return {
        "rationale": rationale,
        "winner": reply["winner"],
        "strength": int(reply["strength"]),
        "axes": axes,
        "normalised": notes.items,
    }


def judge_request(turns: list[dict[str, str]], first: str, second: str) -> LLMRequest:
    return LLMRequest(
        system=SYSTEM_TEMPLATE,
        messages=[{"role": "user", "content": judge_prompt.user_prompt(turns, first, second)}],
        temperature=0.0,
        top_p=1.0,
        max_tokens=600,
        schema=VERDICT_SCHEMA,
        schema_name="heart_verdict",
        stream=False,  # a verdict needs no time to first token
    )


def _families(pair: Pair, aliases: dict[str, str]) -> set[str]:
    """The canonical families (study aliases applied) of the pair's two systems."""
    return {
        canonical_family(pair.completion_a.system.family, aliases),
        canonical_family(pair.completion_b.system.family, aliases),
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
        aliases = run.study.family_aliases or {}
        units: list[UnitSpec] = []
        skipped: Counter[str] = Counter()
        judged = 0
        for judge in run.endpoints.order_by("name"):
            # Through the alias table: an "openai" judge never judges a "gpt" reply.
            family = canonical_family(judge.family, aliases)
            have = set(
                Judgment.objects.filter(
                    study=run.study, judge=judge.name, judge_kind=JudgeKind.LLM
                ).values_list("pair_id", "shown_left")
            )
            for pair in pairs:
                if family and family in _families(pair, aliases):
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
        return verdict_read(text)

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
        raw_output=structured.storable(d.reply.text)[0],
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
            **({"normalised": notes} if (notes := d.result.get("normalised")) else {}),
        },
    )


register(JudgeKindRun())
