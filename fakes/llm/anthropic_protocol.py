"""The Anthropic messages protocol (POST /v1/messages), streaming and structured outputs."""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

from . import core, flood


def message(ex: core.Exchange, text: str) -> dict[str, Any]:
    """A whole (not streamed) Message object: the reply body, also inside batch results."""
    return {
        "id": f"msg_{ex.prompt_hash}",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": ex.model,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": ex.tokens_in, "output_tokens": max(1, len(text) // 4)},
    }


def _error(code: int) -> dict[str, Any]:
    kinds = {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
    error = {"type": kinds.get(code, "invalid_request_error"), "message": f"fake error {code}"}
    return {"type": "error", "error": error}


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = (body.get("output_config") or {}).get("format") or body.get("output_format") or {}
    return fmt.get("schema") if fmt.get("type") == "json_schema" else None


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"


async def messages(request: web.Request) -> web.StreamResponse:
    arrived = time.perf_counter()
    body = await request.json()
    prompt = [body.get("system", ""), *body.get("messages", [])]
    ex = core.start(request, body, prompt, _schema(body), arrived)
    failure = await core.misbehave(ex, _error)
    if failure is not None:
        return failure
    if special := flood.wanted(ex.behaviour, ex.attempt):
        return await _flood(request, ex, special)
    bad = ex.behaviour.bad
    bad_http = bool(bad and bad.value == "http" and bad.applies(ex.attempt))
    if not ex.stream:
        return await _whole(ex, bad_http)
    pieces = ex.pieces()
    message: dict[str, Any] = {
        "id": f"msg_{ex.prompt_hash}",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": ex.model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": ex.tokens_in, "output_tokens": 1},
    }
    head = [
        _event("message_start", {"message": message}),
        _event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
    ]
    frames = [
        _event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}})
        for p in pieces
    ]
    if bad_http:
        frames = ["event: content_block_delta\ndata: {not json\n\n"]
    out_tokens = max(1, sum(len(p) for p in pieces) // 4)
    tail = [
        _event("content_block_stop", {"index": 0}),
        _event(
            "message_delta",
            {
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": out_tokens},
            },
        ),
        _event("message_stop", {}),
    ]
    return await core.stream_events(request, ex, head, frames, tail, {"request-id": ex.request_id})


def _start_events(ex: core.Exchange) -> list[str]:
    started = {**message(ex, ""), "content": [], "stop_reason": None}
    return [
        _event("message_start", {"message": started}),
        _event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
    ]


def _end_events() -> list[str]:
    delta = {"delta": {"stop_reason": "end_turn", "stop_sequence": None}}
    return [
        _event("content_block_stop", {"index": 0}),
        _event("message_delta", {**delta, "usage": {"output_tokens": 1}}),
        _event("message_stop", {}),
    ]


async def _flood(request: web.Request, ex: core.Exchange, special: str) -> web.StreamResponse:
    return await flood.respond(
        request,
        special,
        streamed=ex.stream,
        head=_start_events(ex),
        frame=lambda text: _event(
            "content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}}
        ),
        tail=_end_events(),
        envelope=lambda text: message(ex, text),
        headers={"request-id": ex.request_id},
    )


async def _whole(ex: core.Exchange, bad_http: bool) -> web.Response:
    await core.sleep_until(ex.arrived + ex.behaviour.ttft_ms / 1000)  # the whole reply's delay
    if bad_http:
        return web.Response(
            text="{not json", content_type="application/json", headers={"request-id": ex.request_id}
        )
    return web.json_response(message(ex, ex.text()), headers={"request-id": ex.request_id})


def add_routes(app: web.Application) -> None:
    app.router.add_post("/v1/messages", messages)
