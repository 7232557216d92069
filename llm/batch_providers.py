"""The providers' batch APIs over the official (sync) SDKs: submit, look, read the results.

OpenAI Batch: the requests as a JSONL file (`files.create(purpose="batch")`), then
`batches.create(endpoint="/v1/chat/completions")`; results in the output and error files.
Anthropic Message Batches: `messages.batches.create(requests=...)`, `retrieve`, `results`.
Each request's `custom_id` is the unit's request hash (the call-cache key).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

import anthropic
import openai

from .clients import (
    EndpointConfig,
    LLMReply,
    LLMRequest,
    anthropic_params,
    openai_params,
    sync_client,
)
from .transport import storable

OPENAI_ENDED = {"completed", "expired", "failed", "cancelled"}


@dataclass
class BatchLook:
    status: str  # the provider's own word
    ended: bool


@dataclass
class BatchResult:
    custom_id: str
    reply: LLMReply | None  # None: errored or expired, with `error` saying which
    error: str = ""


def _openai(config: EndpointConfig) -> openai.OpenAI:
    client = sync_client(config)  # the same host policy as the streaming calls
    assert isinstance(client, openai.OpenAI)
    return client


def _anthropic(config: EndpointConfig) -> anthropic.Anthropic:
    client = sync_client(config)
    assert isinstance(client, anthropic.Anthropic)
    return client


def submit(config: EndpointConfig, requests: dict[str, LLMRequest]) -> tuple[str, str]:
    """Send the requests (custom_id -> request); returns (batch id, input file id or "")."""
    if config.provider == "anthropic":
        with _anthropic(config) as client:
            message_batch = client.messages.batches.create(
                requests=[
                    # anthropic_params builds the SDK's MessageCreateParams as a plain dict.
                    {"custom_id": key, "params": anthropic_params(config.model, request)}  # type: ignore[typeddict-item]
                    for key, request in requests.items()
                ]
            )
        return message_batch.id, ""
    lines = [
        json.dumps(
            {
                "custom_id": key,
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": openai_params(config.model, request),
            }
        )
        for key, request in requests.items()
    ]
    with _openai(config) as client:
        upload = client.files.create(
            file=("requests.jsonl", io.BytesIO(("\n".join(lines) + "\n").encode())),
            purpose="batch",
        )
        batch = client.batches.create(
            input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
    return batch.id, upload.id


def look(config: EndpointConfig, batch_id: str) -> BatchLook:
    if config.provider == "anthropic":
        with _anthropic(config) as client:
            message_batch = client.messages.batches.retrieve(batch_id)
        ended = message_batch.processing_status == "ended"
        return BatchLook(message_batch.processing_status, ended)
    with _openai(config) as client:
        batch = client.batches.retrieve(batch_id)
    return BatchLook(batch.status, batch.status in OPENAI_ENDED)


def results(config: EndpointConfig, batch_id: str) -> list[BatchResult]:
    # The client lives until the streamed results are read (a collected client closes them).
    if config.provider == "anthropic":
        with _anthropic(config) as client:
            return [_anthropic_result(e) for e in client.messages.batches.results(batch_id)]
    with _openai(config) as client:
        batch = client.batches.retrieve(batch_id)
        found: list[BatchResult] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                text = client.files.content(file_id).text
                found.extend(_openai_result(json.loads(line)) for line in text.splitlines() if line)
        return found


def _openai_result(line: dict[str, Any]) -> BatchResult:
    response, error = line.get("response") or {}, line.get("error")
    custom_id = line.get("custom_id", "")
    if error or response.get("status_code") != 200:
        detail = (error or {}).get("code") or f"HTTP {response.get('status_code')}"
        return BatchResult(custom_id, None, f"batch request {detail}")
    body = response["body"]
    usage = body.get("usage") or {}
    reply = LLMReply(
        text=storable(body["choices"][0]["message"].get("content") or ""),
        tokens_in=usage.get("prompt_tokens", 0),
        tokens_out=usage.get("completion_tokens", 0),
        model_reported=body.get("model", ""),
        request_id=response.get("request_id") or body.get("id", ""),
        finish_reason=body["choices"][0].get("finish_reason") or "stop",
    )
    return BatchResult(custom_id, reply)


def _anthropic_result(entry: Any) -> BatchResult:
    result = entry.result
    if result.type != "succeeded":
        return BatchResult(entry.custom_id, None, f"batch request {result.type}")
    message = result.message
    text = "".join(block.text for block in message.content if block.type == "text")
    reply = LLMReply(
        text=storable(text),
        tokens_in=message.usage.input_tokens or 0,
        tokens_out=message.usage.output_tokens or 0,
        model_reported=message.model,
        request_id=message.id,
        finish_reason=message.stop_reason or "end_turn",
    )
    return BatchResult(entry.custom_id, reply)
