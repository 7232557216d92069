"""The "label" LLM run kind (paper 9.10): one classifier call per completion of a study.

The run owns one label set (created with the plan); every reply that conforms to the schema
the request sends (`strategies.REPLY_JSON_SCHEMA`: exactly the 15 strategies, each with its
status, p and evidence) becomes that set's labels for the completion. What the schema cannot
state is normalised and flagged on the labels, never refused (`strategies.label_reply_read`):
evidence not quoted from the completion is set aside while the label keeps its status, a p
outside 0-1 is clamped. A reply that breaks the schema gets the engine's one repair retry (the
error says exactly what was wrong), then the unit is invalid with its raw reply kept.
"""

from __future__ import annotations

from typing import Any

from completions import strategies
from completions.models import Completion
from core import structured
from core.structured import InvalidReply
from llm.clients import LLMRequest
from llm.kinds import Done, Plan, RunKind, UnitSpec, register
from llm.models import Run, Unit

from . import services
from .models import CompletionLabels, LabelSet

MAX_TOKENS = 2000
EST_TOKENS_OUT = 900  # 15 labels with short evidence and a little reasoning


class LabelKind(RunKind):
    name = "label"
    endpoints_label = "judges"

    def plan(self, run: Run) -> Plan:
        endpoints = list(run.endpoints.order_by("name"))
        if len(endpoints) != 1:
            raise ValueError("a label run has exactly one classifier endpoint (--judge NAME)")
        endpoint = endpoints[0]
        label_set = services.label_set_create(
            study=run.study, name=f"{endpoint.name} (run {run.pk})", labeller=endpoint.name, run=run
        )
        run.params = {**run.params, **_versions(), "label_set": label_set.pk}
        run.save(update_fields=["params"])
        system_size = len(strategies.system_prompt()) // 4
        units = [
            UnitSpec(
                key=f"completion:{pk}",
                endpoint_id=endpoint.pk,
                payload={"completion": pk, "text": text},
                est_tokens_in=system_size + len(text) // 4 + 150,
                est_tokens_out=EST_TOKENS_OUT,
            )
            for pk, text in Completion.objects.filter(system__study=run.study)
            .exclude(text="")
            .order_by("id")
            .values_list("id", "text")
        ]
        return Plan(units, {"completions": len(units), "label_set": label_set.pk})

    def build_requests(self, units: list[Unit]) -> dict[int, LLMRequest]:
        system = strategies.system_prompt()
        return {
            unit.pk: LLMRequest(
                system=system,
                messages=[
                    {"role": "user", "content": strategies.user_prompt(unit.payload["text"])}
                ],
                max_tokens=MAX_TOKENS,
                schema=strategies.REPLY_JSON_SCHEMA,
                schema_name="strategy_labels",
            )
            for unit in units
        }

    def parse(self, unit: Unit, text: str) -> dict[str, Any]:
        try:
            read = strategies.label_reply_read(text, unit.payload["text"])
        except strategies.LabelReplyError as error:
            raise InvalidReply(str(error)) from error
        return {"labels": read.labels, "reasoning": read.reasoning, "normalised": read.normalised}

    def store(self, run: Run, done: list[Done]) -> None:
        label_set_id = run.params["label_set"]
        CompletionLabels.objects.bulk_create(
            [
                CompletionLabels(
                    label_set_id=label_set_id,
                    completion_id=d.unit.payload["completion"],
                    labels=d.result["labels"],
                    present=strategies.present_strategies(d.result["labels"]),
                    raw_reply=structured.storable(d.reply.text)[0],
                )
                for d in done
            ],
            ignore_conflicts=True,
        )

    def on_finish(self, run: Run) -> None:
        label_set = LabelSet.objects.filter(pk=run.params.get("label_set")).first()
        if label_set is not None:
            services.label_set_finish(label_set=label_set)


def _versions() -> dict[str, str]:
    return {
        "taxonomy_version": strategies.TAXONOMY_VERSION,
        "taxonomy_hash": strategies.TAXONOMY_HASH,
        "prompt_version": strategies.PROMPT_VERSION,
        "prompt_hash": strategies.PROMPT_HASH,
    }


register(LabelKind())
