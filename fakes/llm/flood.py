"""A provider that floods, or sends bytes that are not UTF-8: what a client must survive.

Model-name options (see behaviour.py):

- ``flood=MB``: the reply text is MB megabytes (e.g. ``flood=20``), streamed in 64 KiB content
  chunks or sent as one JSON body; either way written as it is made, never held whole here.
- ``flood=endless``: the reply never ends (content chunks, or a JSON body that never closes);
- ``flood=noise``: an event stream that never ends and carries no text (SSE comments), or an
  endless JSON body when not streamed;
- ``bad=utf8``: the reply carries bytes that are not UTF-8 (0xff 0xfe) inside its JSON;
- ``bad=nul``: the reply carries a NUL and a lone surrogate (valid JSON escapes).

An endless reply stops when the client goes away, and by itself after ENDLESS_LIMIT_S seconds
or ENDLESS_LIMIT_BYTES, so no test can leave it running.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web

CHUNK_CHARS = 64 * 1024
ENDLESS_LIMIT_S = 120.0
ENDLESS_LIMIT_BYTES = 4 * 1024**3
BAD_MARKER = "\u0001bad-bytes\u0001"
BAD_BYTES = b"\xff\xfe"
_PLACEHOLDER = "\u0002flood\u0002"


def size(value: str) -> int | None:
    """The flood's size in characters; None for an endless one."""
    if value in ("endless", "noise"):
        return None
    return int(float(value) * 1024 * 1024)


def content(value: str) -> Iterator[str]:
    """The flood's text in chunks, made as it is sent: random letters and digits, so that a
    database that compresses what it stores (PostgreSQL does) cannot make it look small."""
    total = size(value)
    sent, started = 0, time.monotonic()
    while total is None or sent < total:
        chunk = base64.b64encode(os.urandom(CHUNK_CHARS * 3 // 4)).decode()
        piece = chunk if total is None else chunk[: total - sent]
        sent += len(piece)
        yield piece
        if total is None and (
            sent > ENDLESS_LIMIT_BYTES or time.monotonic() - started > ENDLESS_LIMIT_S
        ):
            return


def noise() -> Iterator[str]:
    """Endless SSE comments: bytes that carry no event at all."""
    frame = ": " + "keep-alive " * 6000 + "\n\n"
    started = time.monotonic()
    for _ in range(ENDLESS_LIMIT_BYTES // len(frame)):
        yield frame
        if time.monotonic() - started > ENDLESS_LIMIT_S:
            return


def bad_text(kind: str) -> str | None:
    """The reply text of ``bad=utf8`` / ``bad=nul``, or None for another kind."""
    if kind == "utf8":
        return f"Caf{BAD_MARKER} ol{BAD_MARKER}: not UTF-8."
    if kind == "nul":
        return "A NUL \u0000 and a lone surrogate \ud800 in the reply."
    return None


def wire(data: str) -> bytes:
    """The bytes sent for a frame or body: the marker of bad=utf8 becomes bytes that are not
    UTF-8 (the surrounding JSON stays well formed)."""
    raw = data.encode("utf-8", "surrogatepass")
    return raw.replace(json.dumps(BAD_MARKER)[1:-1].encode(), BAD_BYTES)


async def _write_all(response: web.StreamResponse, frames) -> bool:
    """Write frames until done; False when the client went away."""
    try:
        for frame in frames:
            await response.write(wire(frame))
    except (ConnectionError, RuntimeError):  # reset by the client, or the transport closed
        return False
    return True


def wanted(behaviour: Any, attempt: int) -> str | None:
    """What this request asks for: a flood value, "bad:utf8", "bad:nul", or None."""
    if behaviour.flood:
        return behaviour.flood
    bad = behaviour.bad
    if bad and bad.value in ("utf8", "nul") and bad.applies(attempt):
        return f"bad:{bad.value}"
    return None


async def respond(
    request: web.Request,
    value: str,
    *,
    streamed: bool,
    head: list[str],
    frame: Callable[[str], str],
    tail: list[str],
    envelope: Callable[[str], dict[str, Any]],
    headers: dict[str, str],
) -> web.StreamResponse:
    """Answer a flood or bad-bytes request in the protocol's own frames and envelope."""
    if value.startswith("bad:"):
        text = bad_text(value[4:]) or ""
        if not streamed:
            body = wire(json.dumps(envelope(text)))
            return web.Response(body=body, content_type="application/json", headers=headers)
        return await _stream(request, head, iter([frame(text)]), tail, headers)
    if not streamed:
        return await _whole(request, value, envelope, headers)
    frames = noise() if value == "noise" else (frame(p) for p in content(value))
    return await _stream(request, head, frames, tail, headers)


async def _stream(request, head, body, tail, headers) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **headers})
    await response.prepare(request)
    if await _write_all(response, itertools.chain(head, body, tail)):
        await response.write_eof()
    return response


async def _whole(
    request: web.Request, value: str, envelope: Callable[[str], dict[str, Any]], headers
) -> web.StreamResponse:
    """One JSON body whose reply text is the flood, written in chunks (never built whole)."""
    before, _, after = json.dumps(envelope(_PLACEHOLDER)).partition(json.dumps(_PLACEHOLDER)[1:-1])
    response = web.StreamResponse(headers={"Content-Type": "application/json", **headers})
    await response.prepare(request)
    body = content("endless" if value == "noise" else value)
    if await _write_all(response, itertools.chain([before], body, [after])):
        await response.write_eof()
    return response
