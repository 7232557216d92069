"""The "adversarial" LLM run kind (paper 9.2): rewrite the seeker turns of chosen contexts.

Params: ``profile`` (one of the four escalation profiles), ``contexts`` (how many sources),
``seed``. Sources are regular contexts stratified by emotion and problem type; a source that
already has a variant for the profile is skipped. Each request sends the schema made for its
source (`adversarial.reply_schema`), which states every structural rule of the paper: a reply
that conforms is accepted (an empty seeker turn keeps the source's text, noted in the
variant's metadata); one that does not gets the engine's one repair retry (the reasons are
sent back), then the unit is invalid with the raw reply kept. Accepted variants become
adversarial contexts linked to their source.
"""

from __future__ import annotations

import json
from typing import Any

from completions import adversarial
from completions.models import DialogueContext
from completions.services.adversarial import (
    adversarial_sources_choose,
    adversarial_turns_store,
    variant_external_id,
)
from core import structured
from core.structured import InvalidReply

from .clients import LLMRequest
from .kinds import Done, Plan, RunKind, UnitSpec, register
from .models import Run, Unit

MAX_TOKENS = 2500


class AdversarialKind(RunKind):
    name = "adversarial"
    endpoints_label = "endpoints"

    def plan(self, run: Run) -> Plan:
        profile = run.params.get("profile", "")
        adversarial.target_hostility(profile, 1)  # ValueError for an unknown profile
        endpoints = list(run.endpoints.order_by("name"))
        if len(endpoints) != 1:
            raise ValueError("an adversarial run has exactly one rewriting endpoint")
        sources = adversarial_sources_choose(
            study=run.study, n=int(run.params.get("contexts", 20)), seed=run.params.get("seed", 0)
        )
        existing = set(
            DialogueContext.objects.filter(
                study=run.study, external_id__in=[variant_external_id(s, profile) for s in sources]
            ).values_list("external_id", flat=True)
        )
        todo = [s for s in sources if variant_external_id(s, profile) not in existing]
        run.params = {
            **run.params,
            "prompt_version": adversarial.PROMPT_VERSION,
            "prompt_hash": adversarial.PROMPT_HASH,
        }
        run.save(update_fields=["params"])
        units = [
            UnitSpec(
                key=f"ctx:{source.pk}/profile:{profile}",
                endpoint_id=endpoints[0].pk,
                payload={"context": source.pk, "profile": profile},
                est_tokens_in=len(json.dumps(source.turns)) // 4 + 400,
                est_tokens_out=len(json.dumps(source.turns)) // 3 + 50,
            )
            for source in todo
        ]
        summary = {"sources": len(sources), "already_rewritten": len(sources) - len(todo)}
        return Plan(units, summary)

    def build_requests(self, units: list[Unit]) -> dict[int, LLMRequest]:
        contexts = DialogueContext.objects.in_bulk({u.payload["context"] for u in units})
        system = adversarial.system_prompt()
        requests = {}
        for unit in units:
            context = contexts.get(unit.payload["context"])
            if context is None:
                continue
            profile = unit.payload["profile"]
            prompt = adversarial.user_prompt(context.turns, profile)
            requests[unit.pk] = LLMRequest(
                system=system,
                messages=[{"role": "user", "content": prompt}],
                max_tokens=MAX_TOKENS,
                schema=adversarial.reply_schema(context.turns, profile),
                schema_name="adversarial_rewrite",
            )
        return requests

    def parse(self, unit: Unit, text: str) -> dict[str, Any]:
        source = DialogueContext.objects.only("turns").get(pk=unit.payload["context"])
        try:
            rewrite = adversarial.rewrite_parse(text, source.turns, unit.payload["profile"])
        except adversarial.RewriteRejected as error:
            raise InvalidReply("rejected: " + "; ".join(error.reasons)) from error
        return {"turns": rewrite.turns, "normalised": rewrite.normalised}

    def store(self, run: Run, done: list[Done]) -> None:
        sources = DialogueContext.objects.in_bulk({d.unit.payload["context"] for d in done})
        for d in done:
            adversarial_turns_store(
                source=sources[d.unit.payload["context"]],
                profile=d.unit.payload["profile"],
                turns=d.result["turns"],
                provenance={
                    "run": run.pk,
                    "endpoint": d.unit.endpoint.name,
                    "model_reported": d.reply.model_reported,
                    "request_hash": d.unit.request_hash or None,
                    "raw_reply": structured.storable(d.reply.text)[0],
                    **({"normalised": notes} if (notes := d.result.get("normalised")) else {}),
                },
            )


register(AdversarialKind())
