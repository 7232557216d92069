"""The contract with a provider: every reply the schema we send allows is stored.

The schemas are read back from the request bodies the SDKs sent to the fake server (never from
our own Python objects), checked against what both providers' strict structured outputs
accept, and then filled with hypothesis-jsonschema (`sent_schemas.replies`): at least 1,000
drawn replies per run kind, each parsed and stored exactly as the engine does, and checked
against what was drawn.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from anthropic.lib._parse._transform import transform_schema
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from openai.lib._pydantic import _ensure_strict_json_schema

from annotation.models import Judgment
from completions import adversarial, strategies
from completions.models import DialogueContext
from labelling.models import CompletionLabels
from llm.clients import LLMReply
from llm.kinds import Done, get_kind
from llm.models import UnitStatus
from llm.selectors import run_counts
from tests.llm.sent_schemas import KINDS, SOURCE, replies, sent

pytestmark = pytest.mark.django_db

DRAWS = 1000
PROPERTY = settings(
    max_examples=DRAWS,
    deadline=None,
    database=None,
    derandomize=True,  # the same 1,000 replies every run: a failure is reproducible
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
# The keywords both strict modes accept (OpenAI: root an object, every property required,
# closed objects, anyOf below the root; Anthropic: no numeric or length ranges, minItems 0/1
# only): a schema using only these fits both.
STRICT_KEYWORDS = {"type", "properties", "required", "additionalProperties", "enum", "anyOf"}
STRICT_KEYWORDS |= {"items", "description"}
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def subschemas(schema: dict):
    yield schema
    for sub in schema.get("properties", {}).values():
        yield from subschemas(sub)
    for sub in schema.get("anyOf", []):
        yield from subschemas(sub)
    if isinstance(schema.get("items"), dict):
        yield from subschemas(schema["items"])


def strict_problems(schema: dict) -> list[str]:
    problems = []
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("the root must be an object, not anyOf")
    for sub in subschemas(schema):
        if extra := set(sub) - STRICT_KEYWORDS:
            problems.append(f"keywords outside both strict modes: {sorted(extra)}")
        if "type" in sub and not isinstance(sub["type"], str):
            problems.append(f"a list of types: {sub['type']}")
        if sub.get("type") == "object":
            if sub.get("additionalProperties") is not False:
                problems.append("an object not closed (additionalProperties false)")
            if sub.get("required") != list(sub.get("properties", {})):
                problems.append("an object whose properties are not all required, in order")
        branches = [b for b in sub.get("anyOf", []) if b.get("type") == "object"]
        if branches:  # OpenAI: object branches must not share identical first keys
            firsts = [next(iter(b["properties"].items())) for b in branches]
            values = [set(first["enum"]) for _, first in firsts]
            if len({k for k, _ in firsts}) == 1 and sum(map(len, values)) != len(
                set().union(*values)
            ):
                problems.append("anyOf object branches share a first-key value")
    return problems


def descriptions(schema: dict) -> list[str]:
    return [s["description"] for s in subschemas(schema) if "description" in s]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("kind", KINDS)
def test_each_schema_sent_fits_both_providers_strict_modes(fake_llm, kind, provider):
    run, schemas = sent(fake_llm, kind, provider)
    assert run_counts(run)["done"] == run_counts(run)["units"] > 0
    assert schemas, "the requests carried no schema"
    for schema in schemas:
        assert strict_problems(schema) == []
        # The SDKs' own strict-mode helpers have nothing to add or move: OpenAI's would make
        # every property required and close every object; Anthropic's moves what its strict
        # mode cannot enforce (ranges, lengths, patterns) into descriptions.
        assert _ensure_strict_json_schema(copy.deepcopy(schema), path=(), root={}) == schema
        assert descriptions(transform_schema(schema)) == descriptions(schema)


def stored_verdict_matches(reply: dict, verdict: Judgment, order: str) -> None:
    flip = (lambda s: s) if order == "ab" else {"a": "b", "b": "a", "none": "none"}.get
    assert (verdict.winner, verdict.strength) == (flip(reply["winner"]), reply["strength"])
    assert verdict.axes == {
        axis: {"winner": flip(v["winner"]), "strength": v["strength"]}
        for axis, v in reply["axes"].items()
        if v["winner"] != "none"
    }
    rationale = UNSTORABLE.sub("", reply["rationale"])
    assert verdict.rationale == rationale[:2000]
    changed = rationale != reply["rationale"] or len(rationale) > 2000
    assert bool(verdict.metadata.get("normalised")) == changed


def test_every_verdict_the_judge_schema_allows_is_stored(fake_llm):
    run, [schema] = sent(fake_llm, "judge", "openai")
    _, [anthropic_schema] = sent(fake_llm, "judge", "anthropic")
    assert anthropic_schema == schema  # one schema for both providers
    kind, unit = get_kind("judge"), run.units.get(key__endswith="/ba")  # the swapped order
    request = kind.build_requests([unit])[unit.pk]
    Judgment.objects.filter(study=run.study).delete()
    stored = []

    @PROPERTY
    @given(replies(schema))
    def store(reply):
        text = json.dumps(reply)
        with transaction.atomic():
            kind.store(
                run, [Done(unit, kind.parse(unit, text), LLMReply(text=text), request, None)]
            )
            verdict = Judgment.objects.get(study=run.study, shown_left="b")
            stored_verdict_matches(reply, verdict, "ba")
            stored.append(reply)
            transaction.set_rollback(True)

    store()
    assert len(stored) >= DRAWS
    assert {r["axes"]["H"]["winner"] for r in stored} == {"a", "b", "none"}


TYPOGRAPHIC_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


def stored_labels_match(reply: dict, row: CompletionLabels, completion: str) -> None:
    assert set(row.labels) == set(strategies.STRATEGY_NAMES)
    for name, drawn in reply["labels"].items():
        label = row.labels[name]
        assert label["status"] == drawn["status"]
        assert label["p"] == min(1.0, max(0.0, float(drawn["p"])))
        evidence = None if drawn["evidence"] is None else UNSTORABLE.sub("", drawn["evidence"])
        if label["evidence"] is not None:  # kept: it is quoted from the completion
            # Found in the completion, whitespace runs and typographic quotes aside (documented).
            plain = evidence.translate(TYPOGRAPHIC_QUOTES)
            assert label["evidence"] == evidence and " ".join(plain.split()) in completion
        else:
            assert label.get("evidence_unverified") == evidence
    assert row.present == strategies.present_strategies(row.labels)


def test_every_label_set_the_label_schema_allows_is_stored(fake_llm):
    run, [schema] = sent(fake_llm, "label", "openai")
    _, [anthropic_schema] = sent(fake_llm, "label", "anthropic")
    assert anthropic_schema == schema
    kind, unit = get_kind("label"), run.units.order_by("id").first()
    request = kind.build_requests([unit])[unit.pk]
    CompletionLabels.objects.filter(label_set__run=run).delete()
    stored = []

    @PROPERTY
    @given(replies(schema))
    def store(reply):
        text = json.dumps(reply)
        with transaction.atomic():
            kind.store(
                run, [Done(unit, kind.parse(unit, text), LLMReply(text=text), request, None)]
            )
            row = CompletionLabels.objects.get(label_set__run=run)
            stored_labels_match(reply, row, unit.payload["text"])
            stored.append(reply)
            transaction.set_rollback(True)

    store()
    assert len(stored) >= DRAWS


def test_every_rewrite_the_adversarial_schema_allows_is_stored_and_keeps_the_papers_rules(
    fake_llm,
):
    run, schemas = sent(fake_llm, "adversarial", "openai")
    assert len(schemas) == 1  # the sources share their turns; their targets too
    schema = schemas[0]
    kind, unit = get_kind("adversarial"), run.units.order_by("id").first()
    request = kind.build_requests([unit])[unit.pk]
    DialogueContext.objects.filter(study=run.study, adversarial=True).delete()
    stored = []

    @PROPERTY
    @given(replies(schema))
    def store(reply):
        text = json.dumps(reply)
        with transaction.atomic():
            kind.store(
                run, [Done(unit, kind.parse(unit, text), LLMReply(text=text), request, None)]
            )
            variant = DialogueContext.objects.get(study=run.study, adversarial=True)
            hostility = iter(variant.metadata["adversarial"]["hostility"])
            turns = [
                {**t, "hostility": next(hostility) if t["speaker"] == "seeker" else None}
                for t in variant.turns
            ]
            assert adversarial.rejection_reasons(SOURCE, turns) == []  # paper 9.2, independently
            drawn = [reply["turns"][f"turn_{i}"] for i in range(1, len(SOURCE) + 1)]
            for old, new, got in zip(SOURCE, drawn, variant.turns, strict=True):
                text_kept = UNSTORABLE.sub("", new["text"])
                expected = text_kept if text_kept.strip() else old["text"]
                assert got == {"speaker": old["speaker"], "text": expected}
            assert variant.metadata["adversarial"]["hostility"] == [
                t["hostility"] for t in drawn if t["speaker"] == "seeker"
            ]
            assert variant.metadata["adversarial"]["hostility"][-1] >= adversarial.HIGH_HOSTILITY
            stored.append(reply)
            transaction.set_rollback(True)

    store()
    assert len(stored) >= DRAWS


def test_a_unit_whose_reply_breaks_the_sent_schema_is_never_stored(fake_llm):
    run, _ = sent(fake_llm, "judge", "openai", model="judge-openai@bad=schema")
    assert {u.status for u in run.units.all()} == {UnitStatus.INVALID}
    assert not Judgment.objects.filter(study=run.study).exists()
