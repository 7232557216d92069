"""The OpenAI chat-completions protocol (POST /v1/chat/completions), streaming included."""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

from . import core, flood


def _error(code: int) -> dict[str, Any]:
    return {"error": {"message": f"fake server error {code}", "type": "fake", "code": code}}


def chat_completion(ex: core.Exchange, text: str) -> dict[str, Any]:
    """A whole (not streamed) chat.completion object: the reply body, also inside batch output."""
    tokens_out = max(1, len(text) // 4)
    return {
        "id": f"chatcmpl-{ex.prompt_hash}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": ex.model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": ex.tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": ex.tokens_in + tokens_out,
        },
    }


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt.get("json_schema", {}).get("schema")
    return None


def _chunk(ex: core.Exchange, delta: dict, finish: str | None = None, **extra) -> str:
    payload = {
        "id": f"chatcmpl-{ex.prompt_hash}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": ex.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(payload)}\n\n"


def _usage_chunk(ex: core.Exchange, usage: dict[str, int]) -> str:
    payload = {
        "id": f"chatcmpl-{ex.prompt_hash}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": ex.model,
        "choices": [],
        "usage": usage,
    }
    return f"data: {json.dumps(payload)}\n\n"


async def chat_completions(request: web.Request) -> web.StreamResponse:
    arrived = time.perf_counter()
    body = await request.json()
    ex = core.start(request, body, body.get("messages", []), _schema(body), arrived)
    failure = await core.misbehave(ex, _error)
    if failure is not None:
        return failure
    headers = {"x-request-id": ex.request_id}
    if special := flood.wanted(ex.behaviour, ex.attempt):
        usage = {"prompt_tokens": ex.tokens_in, "completion_tokens": 1, "total_tokens": 0}
        return await flood.respond(
            request,
            special,
            streamed=ex.stream,
            head=[_chunk(ex, {"role": "assistant", "content": ""})],
            frame=lambda text: _chunk(ex, {"content": text}),
            tail=[_chunk(ex, {}, "stop"), _usage_chunk(ex, usage), "data: [DONE]\n\n"],
            envelope=lambda text: chat_completion(ex, text),
            headers=headers,
        )
    bad = ex.behaviour.bad
    bad_http = bad is not None and bad.value == "http" and bad.applies(ex.attempt)
    if not ex.stream:
        return await _whole(ex, headers, bool(bad_http))
    pieces = ex.pieces()
    usage = {
        "prompt_tokens": ex.tokens_in,
        "completion_tokens": max(1, sum(len(p) for p in pieces) // 4),
        "total_tokens": 0,
    }
    head = [_chunk(ex, {"role": "assistant", "content": ""})]
    frames = [_chunk(ex, {"content": p}) for p in pieces]
    if bad_http:
        frames = [core.bad_http_frame()]
    tail = [_chunk(ex, {}, "stop"), _usage_chunk(ex, usage), "data: [DONE]\n\n"]
    return await core.stream_events(request, ex, head, frames, tail, headers)


async def _whole(ex: core.Exchange, headers: dict[str, str], bad_http: bool) -> web.Response:
    await core.sleep_until(ex.arrived + ex.behaviour.ttft_ms / 1000)  # the whole reply's delay
    if bad_http:
        return web.Response(text="{not json", content_type="application/json", headers=headers)
    return web.json_response(chat_completion(ex, ex.text()), headers=headers)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/chat/completions", chat_completions)
