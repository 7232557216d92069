"""What the protocols share: request counting, misbehaviour, the reply, the stream pacing."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from . import behaviour as behaviour_mod
from . import replies

STATE: web.AppKey[ServerState] = web.AppKey("state")


# Streams whose first-token delay the server remembers (for /_control/ttft), newest kept.
TTFT_LOG_SIZE = 100_000
SCHEMA_LOG_SIZE = 256


class ServerState:
    """Counts requests per (model, prompt hash), so tests can see what was sent how often, and
    remembers per streamed request the delay it really injected before the first content token
    (request arrival to that frame's write, in ms), keyed by the request id it answered with."""

    def __init__(self, *, draw: bool = False) -> None:
        self.counts: Counter[str] = Counter()
        self.total = 0
        self.ttft: deque[tuple[str, float]] = deque(maxlen=TTFT_LOG_SIZE)
        self.largest_request = 0  # bytes: a client must never send a flood back
        self.draw = draw  # every structured reply drawn from its request's schema
        # The JSON schemas as they arrived in request bodies (newest kept), for the tests.
        self.schemas: deque[dict[str, Any]] = deque(maxlen=SCHEMA_LOG_SIZE)

    def reset(self) -> None:
        self.counts.clear()
        self.total = 0
        self.ttft.clear()
        self.largest_request = 0
        self.schemas.clear()

    def count(self, model: str, prompt_hash: str) -> int:
        self.counts[f"{model}|{prompt_hash}"] += 1
        self.total += 1
        return self.counts[f"{model}|{prompt_hash}"]


@dataclass
class Exchange:
    """One parsed request: who asked for what and how the server should behave."""

    behaviour: behaviour_mod.Behaviour
    model: str
    prompt: str
    prompt_hash: str
    schema: dict[str, Any] | None
    stream: bool
    attempt: int
    tokens_in: int
    arrived: float = 0.0  # perf_counter when the handler got the request
    draw: bool = False  # a structured reply drawn from the schema (schema_draw)

    @property
    def request_id(self) -> str:
        return f"req-{self.prompt_hash}-{self.attempt}"

    def text(self) -> str:
        b = self.behaviour
        bad = b.bad.value if b.bad and b.bad.applies(self.attempt) else None
        if bad == "content":
            return "Sure! Here is my verdict: A is better, I think."
        if bad == "schema" and self.schema is not None:
            return json.dumps(replies.breaking(self.schema))
        if self.draw and self.schema is not None:
            from .schema_draw import draw

            return json.dumps(draw(self.schema, replies.digest(b.base_model, self.prompt)))
        return replies.reply_text(b.base_model, self.prompt, self.schema, b.bias)

    def pieces(self) -> list[str]:
        """The reply cut in a few chunks, as a real stream would send it."""
        text = self.text()
        size = max(1, len(text) // 4)
        return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def start(
    request: web.Request,
    body: dict[str, Any],
    prompt_parts: list[Any],
    schema,
    arrived: float | None = None,
) -> Exchange:
    model = str(body.get("model", ""))
    behaviour = behaviour_mod.parse(model, request.headers.get("X-Fake-Behaviour"))
    prompt = json.dumps(prompt_parts, sort_keys=True, ensure_ascii=False)
    # Attempts are counted per conversation (system + first message): a repair request that
    # appends to it is the same unit's second attempt.
    root = json.dumps(prompt_parts[:2], sort_keys=True, ensure_ascii=False)
    prompt_hash = hashlib.sha256(root.encode()).hexdigest()[:16]
    state = request.app[STATE]
    attempt = state.count(behaviour.base_model, prompt_hash)
    state.largest_request = max(state.largest_request, request.content_length or 0)
    if schema is not None:
        state.schemas.append(schema)
    return Exchange(
        behaviour=behaviour,
        model=behaviour.base_model,
        prompt=prompt,
        prompt_hash=prompt_hash,
        schema=schema,
        stream=bool(body.get("stream")),
        attempt=attempt,
        tokens_in=max(1, len(prompt) // 4),
        arrived=time.perf_counter() if arrived is None else arrived,
        draw=behaviour.draw or state.draw,
    )


async def misbehave(exchange: Exchange, error_body) -> web.Response | None:
    """Hang or answer with an HTTP error when asked to; None to go on normally."""
    b = exchange.behaviour
    if b.hang and b.hang.applies(exchange.attempt):
        await asyncio.sleep(3600)
    if b.status and b.status.applies(exchange.attempt):
        code = int(b.status.value)
        headers = {"Retry-After": b.retry_after} if b.retry_after else {}
        # Tell the SDKs plainly whether to retry, as the real APIs do.
        headers["x-should-retry"] = "true" if code in (408, 429, 500, 502, 503, 529) else "false"
        return web.json_response(error_body(code), status=code, headers=headers)
    return None


async def stream_events(
    request: web.Request,
    exchange: Exchange,
    head: list[str],
    body: list[str],
    tail: list[str],
    headers: dict[str, str] | None = None,
) -> web.StreamResponse:
    """Send SSE frames: the head at once, the body when the TTFT delay has passed since the
    request arrived (the server's own work counts towards it), then the tail."""
    b = exchange.behaviour
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **(headers or {})})
    await response.prepare(request)
    for frame in head:
        await response.write(frame.encode())
    await sleep_until(exchange.arrived + b.ttft_ms / 1000)
    if body:
        injected = (time.perf_counter() - exchange.arrived) * 1000
        request.app[STATE].ttft.append((exchange.request_id, injected))
    drop = int(b.drop.value) if b.drop and b.drop.applies(exchange.attempt) else None
    for i, frame in enumerate(body):
        if drop is not None and i >= drop:
            if request.transport is not None:  # cut mid-stream: no closing events, no final chunk
                request.transport.close()
            return response
        if i and b.chunk_ms:
            await asyncio.sleep(b.chunk_ms / 1000)
        await response.write(frame.encode())
    for frame in tail:
        await response.write(frame.encode())
    await response.write_eof()
    return response


async def sleep_until(deadline: float) -> None:
    """Sleep until perf_counter() reaches `deadline`. asyncio.sleep may wake a little early (the
    loop rounds to its clock resolution): the last stretch is re-slept, never cut short."""
    while (left := deadline - time.perf_counter()) > 0:
        await asyncio.sleep(left)


def bad_http_frame() -> str:
    return 'data: {"id": "broken", "choices": [ {\n\n'
