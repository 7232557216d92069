"""Run kinds: how a kind of run builds its units and requests, reads replies, stores results.

A new kind (generate, judge, label, adversarial, ...) is one object registered with
`register()`, usually from its app's `AppConfig.ready()`. The engine calls, in order:

- `plan(run)`: the units to create (`UnitSpec`: a key unique in the run, the endpoint, a JSON
  payload, estimated tokens) and a summary for the plan page (e.g. skipped_own_family);
- `build_requests(units)`: the `LLMRequest` of each unit, batch-loaded;
- `parse(unit, text)`: the result dict, or raise `InvalidReply` (one repair retry follows, with
  `repair_request`, then the unit is marked invalid with the raw reply kept);
- `store(run, done)`: write the results, inside the transaction that marks the units done, so a
  result exists exactly when its unit is done (use unique keys: the store must be idempotent);
- `on_finish(run)`: anything to refresh when the run has no unit left (e.g. median TTFT).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import pydantic

from core.structured import InvalidReply

if TYPE_CHECKING:
    from .clients import LLMReply, LLMRequest
    from .models import Run, Unit


@dataclass
class UnitSpec:
    key: str
    endpoint_id: int
    payload: dict[str, Any]
    est_tokens_in: int = 0
    est_tokens_out: int = 0


@dataclass
class Plan:
    units: list[UnitSpec]
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass
class Done:
    """A unit whose reply parsed: what `store` receives."""

    unit: Unit
    result: dict[str, Any]
    reply: LLMReply
    request: LLMRequest
    call_id: int | None


class RunKind:
    """Base class with the defaults; subclasses set `name` and implement the four hooks."""

    name: ClassVar[str] = ""
    # Endpoints are "judges" or "endpoints" in `llm_run status --format json`.
    endpoints_label: ClassVar[str] = "endpoints"
    # Its calls are streamed to record their time to first token: then an executor keeps at
    # most LLM_STREAMS_PER_PROCESS of them in flight, so its event loop reads every first
    # token as it arrives (a busy loop would add its backlog to the recorded TTFT).
    streams: ClassVar[bool] = True

    def plan(self, run: Run) -> Plan:
        raise NotImplementedError

    def build_requests(self, units: list[Unit]) -> dict[int, LLMRequest]:
        raise NotImplementedError

    def parse(self, unit: Unit, text: str) -> dict[str, Any]:
        return {"text": text}

    def store(self, run: Run, done: list[Done]) -> None:
        raise NotImplementedError

    def on_finish(self, run: Run) -> None:
        return None

    def repair_request(self, request: LLMRequest, text: str, error: str) -> LLMRequest:
        """The same conversation plus the broken reply and what was wrong with it."""
        from .clients import LLMRequest

        note = (
            f"Your reply did not match the required JSON schema ({error}). "
            "Reply again with only the JSON object, exactly as the schema says."
        )
        messages = [
            *request.messages,
            {"role": "assistant", "content": text or "(empty)"},
            {"role": "user", "content": note},
        ]
        return LLMRequest(**{**request.to_json(), "messages": messages})


def parse_json_model(model: type[pydantic.BaseModel], text: str) -> pydantic.BaseModel:
    """Validate a JSON reply against a pydantic model; InvalidReply with a short reason."""
    try:
        return model.model_validate_json(text.strip())
    except pydantic.ValidationError as exc:
        reasons = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise InvalidReply(reasons) from exc
    except json.JSONDecodeError as exc:
        raise InvalidReply(f"not JSON: {exc}") from exc


KINDS: dict[str, RunKind] = {}


def register(kind: RunKind) -> RunKind:
    KINDS[kind.name] = kind
    return kind


def get_kind(name: str) -> RunKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown run kind {name!r}; known: {', '.join(sorted(KINDS))}") from None
