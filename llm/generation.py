"""Model completions (paper 9.4): one final supporter turn per context and model system.

Each endpoint of a generate run becomes a model system named after it (family from it). Calls
are deterministic (temperature 0, top-p 1, no tools) and streamed, so the engine records the
time to first content token; the system's median TTFT feeds the Elo-vs-latency plot.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from completions.models import (
    DEFAULT_SUPPORTER_PROMPT,
    Completion,
    DialogueContext,
    Study,
    SupporterPrompt,
    System,
    SystemKind,
)
from core.structured import InvalidReply

from .clients import LLMRequest
from .kinds import Done, Plan, RunKind, UnitSpec, register
from .models import Endpoint, Run, Unit

MAX_TOKENS = 200
EST_TOKENS_OUT = 60


def supporter_prompt_current(study: Study) -> SupporterPrompt:
    """The study's latest prompt version (version 1, the default text, on first use)."""
    prompt = study.supporter_prompts.order_by("-version").first()
    if prompt is None:
        prompt, _ = SupporterPrompt.objects.get_or_create(
            study=study, version=1, defaults={"text": DEFAULT_SUPPORTER_PROMPT}
        )
    return prompt


@transaction.atomic
def supporter_prompt_edit(*, study: Study, text: str) -> SupporterPrompt:
    """A new version when the text changes (old completions keep naming theirs)."""
    current = supporter_prompt_current(study)
    text = text.strip()
    if not text:
        raise ValueError("the prompt cannot be empty")
    if text == current.text:
        return current
    return SupporterPrompt.objects.create(study=study, version=current.version + 1, text=text)


def dialogue_messages(turns: list[dict[str, str]]) -> list[dict[str, str]]:
    """Seeker turns as user messages, supporter turns as assistant ones (merged when two
    follow each other); the chat starts with the user, as both APIs want."""
    messages: list[dict[str, str]] = []
    for turn in turns:
        role = "assistant" if turn.get("speaker") == "supporter" else "user"
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += "\n" + turn["text"]
        else:
            messages.append({"role": role, "content": turn["text"]})
    if messages and messages[0]["role"] == "assistant":
        messages.insert(0, {"role": "user", "content": "(The conversation begins.)"})
    return messages


def system_for_endpoint(study: Study, endpoint: Endpoint) -> System:
    system, _ = System.objects.get_or_create(
        study=study,
        name=endpoint.name,
        defaults={"kind": SystemKind.MODEL, "family": endpoint.family},
    )
    return system


class GenerateKind(RunKind):
    name = "generate"
    endpoints_label = "endpoints"

    def plan(self, run: Run) -> Plan:
        prompt = supporter_prompt_current(run.study)
        run.params = {**run.params, "prompt_version": prompt.version, "system_prompt": prompt.text}
        run.save(update_fields=["params"])
        contexts = list(DialogueContext.objects.filter(study=run.study).order_by("id"))
        units, existing = [], 0
        for endpoint in run.endpoints.order_by("name"):
            system = system_for_endpoint(run.study, endpoint)
            done = set(
                Completion.objects.filter(system=system).values_list("context_id", flat=True)
            )
            for context in contexts:
                if context.pk in done:
                    existing += 1
                    continue
                size = sum(len(t.get("text", "")) for t in context.turns) + len(prompt.text)
                units.append(
                    UnitSpec(
                        key=f"ctx:{context.pk}/sys:{system.pk}",
                        endpoint_id=endpoint.pk,
                        payload={"context": context.pk, "system": system.pk},
                        est_tokens_in=size // 4 + 10,
                        est_tokens_out=EST_TOKENS_OUT,
                    )
                )
        return Plan(units, {"contexts": len(contexts), "already_generated": existing})

    def build_requests(self, units: list[Unit]) -> dict[int, LLMRequest]:
        run = units[0].run
        contexts = DialogueContext.objects.in_bulk({u.payload["context"] for u in units})
        requests = {}
        for unit in units:
            context = contexts.get(unit.payload["context"])
            if context is None:
                continue
            requests[unit.pk] = LLMRequest(
                system=run.params["system_prompt"],
                messages=dialogue_messages(context.turns),
                temperature=0.0,
                top_p=1.0,
                max_tokens=MAX_TOKENS,
            )
        return requests

    def parse(self, unit: Unit, text: str) -> dict[str, Any]:
        if not text.strip():
            raise InvalidReply("the reply is empty")
        return {"text": text.strip()}

    def store(self, run: Run, done: list[Done]) -> None:
        Completion.objects.bulk_create(
            [_completion(run, d) for d in done], ignore_conflicts=True, batch_size=500
        )

    def on_finish(self, run: Run) -> None:
        for system_id in {u["payload__system"] for u in run.units.values("payload__system")}:
            system_ttft_refresh(system_id)


def _completion(run: Run, d: Done) -> Completion:
    prompt = {"system": d.request.system, "messages": d.request.messages}
    prompt_hash = hashlib.sha256(json.dumps(prompt, sort_keys=True).encode()).hexdigest()
    endpoint = d.unit.endpoint
    return Completion(
        context_id=d.unit.payload["context"],
        system_id=d.unit.payload["system"],
        text=d.result["text"],
        ttft_ms=d.reply.ttft_ms,
        latency_ms=d.reply.latency_ms,
        provenance={
            "source": "llm_run",
            "run": run.pk,
            "endpoint": endpoint.name,
            "provider": endpoint.provider,
            "model": endpoint.model,
            "model_reported": d.reply.model_reported,
            "parameters": {
                "temperature": d.request.temperature,
                "top_p": d.request.top_p,
                "max_tokens": d.request.max_tokens,
                "tools": None,
            },
            "prompt_version": run.params.get("prompt_version"),
            "prompt": prompt,
            "prompt_hash": prompt_hash,
            "request_hash": d.unit.request_hash or None,
            "raw_reply": d.reply.text,
            "request_id": d.reply.request_id,
            "from_cache": d.reply.from_cache,
            "tokens_in": d.reply.tokens_in,
            "tokens_out": d.reply.tokens_out,
        },
    )


def generated_completions(run: Run) -> QuerySet[Completion]:
    """The replies a generate run wrote (its provenance names the run), in context order."""
    return (
        Completion.objects.filter(context__study=run.study, provenance__run=run.pk)
        .select_related("context", "system")
        .order_by("context_id", "system_id")
    )


def system_ttft_refresh(system_id: int) -> float | None:
    """System.ttft_ms = the median TTFT of its measured completions (cache hits have none)."""
    values = [
        v
        for v in Completion.objects.filter(system_id=system_id, ttft_ms__isnull=False).values_list(
            "ttft_ms", flat=True
        )
        if v is not None
    ]
    median = statistics.median(values) if values else None
    if median is not None:
        System.objects.filter(pk=system_id).update(ttft_ms=median)
    return median


register(GenerateKind())
