"""Provider clients over the official async SDKs, with streaming and time to first token.

One retry layer only: the SDKs' own (`max_retries`, `timeout`, Retry-After honoured). Nothing
here touches the database: the engine hands in plain `EndpointConfig` and `LLMRequest` values.

Time to first token (TTFT) is what a user of the model waits: from the moment the request goes
to the connection (the SDK's HTTP transport is handed the built request) to the arrival of the
response bytes that complete the first *content* delta. Both instants are taken in the HTTP
transport under the SDK (`_TimedTransport`), so neither the SDK's work before the request
(building and validating it) nor its parsing of the stream afterwards counts. With the SDK's
retries, the clock belongs to the attempt that answered. `latency_ms` runs from the same start
to the last bytes of the response.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

import anthropic
import httpx2
import openai

# Local servers (the fake server, Ollama, vLLM) ignore the key, but the SDKs insist on one.
NO_KEY = "not-needed"


class CallError(Exception):
    """A call that failed after the SDK's own retries. Never cached, never a verdict."""

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


@dataclass(frozen=True)
class EndpointConfig:
    name: str
    provider: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    timeout_s: float = 60.0
    max_retries: int = 2

    def api_key(self) -> str:
        if not self.api_key_env:
            return NO_KEY
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise CallError("config", f"environment variable {self.api_key_env} is not set")
        return key


@dataclass
class LLMRequest:
    """One chat call: a system prompt, messages, deterministic parameters, optional schema."""

    system: str
    messages: list[dict[str, str]]
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 512
    schema: dict[str, Any] | None = None
    schema_name: str = "reply"
    # Streamed calls measure the time to first token (completions); a judge needs none, and a
    # whole reply costs the client about half the CPU of a stream.
    stream: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def cache_key(self, endpoint: EndpointConfig) -> str:
        """Identical endpoint, model, parameters and prompt -> identical key."""
        material = {
            "provider": endpoint.provider,
            "base_url": endpoint.base_url.rstrip("/"),
            "model": endpoint.model,
            "request": self.to_json(),
        }
        blob = json.dumps(material, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class LLMReply:
    text: str
    ttft_ms: float | None = None
    latency_ms: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    model_reported: str = ""
    request_id: str = ""
    finish_reason: str = ""
    from_cache: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class ClientPool:
    """Async SDK clients, one per endpoint, for the lifetime of one event loop."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}

    def get(self, endpoint: EndpointConfig) -> Any:
        if endpoint.name not in self._clients:
            self._clients[endpoint.name] = _new_client(endpoint)
        return self._clients[endpoint.name]

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()


@dataclass
class Clock:
    """One call's timestamps (perf_counter), taken by `_TimedTransport`."""

    sent: float | None = None  # the answering attempt's request handed to the connection
    read: float | None = None  # the latest response body bytes handed up to the SDK

    def since_sent_ms(self, fallback: float) -> float:
        """From the request's start to the latest bytes read (ms). `fallback` stands in for an
        instant the transport did not see (a client that is not ours)."""
        sent = self.sent if self.sent is not None else fallback
        read = self.read if self.read is not None else time.perf_counter()
        return (read - sent) * 1000


_CLOCK: ContextVar[Clock | None] = ContextVar("heart_llm_clock", default=None)


class _TimedStream(httpx2.AsyncByteStream):
    """A response body that stamps the clock as each chunk of bytes comes off the socket. The
    SDKs decode lazily (one chunk, its events, then the next), so when an event reaches us the
    stamp is the arrival of the bytes that completed it."""

    def __init__(self, inner: Any, clock: Clock) -> None:
        self._inner, self._clock = inner, clock

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._clock.read = time.perf_counter()
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _TimedTransport(httpx2.AsyncBaseTransport):
    """The SDK's default transport, timing the call whose `Clock` is in the context."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        clock = _CLOCK.get()
        if clock is not None:  # each attempt restarts it: the one that answers keeps it
            clock.sent, clock.read = time.perf_counter(), None
        response = await self._inner.handle_async_request(request)
        if clock is not None:
            response.stream = _TimedStream(response.stream, clock)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def _new_client(endpoint: EndpointConfig) -> Any:
    sdk = anthropic if endpoint.provider == "anthropic" else openai
    # The SDK's own default client (its timeouts, limits, redirects) over a timed transport.
    transport = _TimedTransport(httpx2.AsyncHTTPTransport(limits=sdk.DEFAULT_CONNECTION_LIMITS))
    options = {
        "api_key": endpoint.api_key(),
        "timeout": endpoint.timeout_s,
        "max_retries": endpoint.max_retries,
        "base_url": endpoint.base_url or None,
        "http_client": sdk.DefaultAsyncHttpxClient(transport=transport),
    }
    if endpoint.provider == "anthropic":
        return anthropic.AsyncAnthropic(**options)
    return openai.AsyncOpenAI(**options)


async def complete(pool: ClientPool, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    """Stream one completion; TTFT is the monotonic time to the first *content* token."""
    token = _CLOCK.set(Clock())
    try:
        client = pool.get(endpoint)
        if endpoint.provider == "anthropic":
            if not request.stream:
                return await _anthropic_whole(client, endpoint, request)
            return await _anthropic(client, endpoint, request)
        if not request.stream:
            return await _openai_whole(client, endpoint, request)
        return await _openai(client, endpoint, request)
    except CallError:
        raise
    except (openai.APITimeoutError, anthropic.APITimeoutError) as exc:
        raise CallError("timeout", f"timed out after {endpoint.timeout_s:g} s: {exc}") from exc
    except (openai.APIStatusError, anthropic.APIStatusError) as exc:
        kind = "rate_limit" if exc.status_code == 429 else "http"
        raise CallError(
            kind, f"HTTP {exc.status_code}: {exc.message}", status=exc.status_code
        ) from exc
    except (openai.APIConnectionError, anthropic.APIConnectionError) as exc:
        raise CallError("connection", f"connection failed: {exc}") from exc
    except (openai.APIError, anthropic.APIError) as exc:
        raise CallError("bad_response", f"unusable response: {exc}") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        # A stream the SDK could not decode (malformed event data, a truncated body).
        raise CallError("bad_response", f"unusable response: {exc!r}") from exc
    except Exception as exc:  # httpx transport errors the SDK leaves unwrapped mid-stream
        raise CallError("connection", f"stream broke: {exc!r}") from exc
    finally:
        _CLOCK.reset(token)


def _clock() -> Clock:
    return _CLOCK.get() or Clock()


def _openai_kwargs(endpoint: EndpointConfig, request: LLMRequest) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": endpoint.model,
        "messages": [{"role": "system", "content": request.system}, *request.messages],
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_tokens": request.max_tokens,
    }
    if request.schema is not None:
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
        }
    return kwargs


async def _openai_whole(client: Any, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    start, clock = time.perf_counter(), _clock()
    completion = await client.chat.completions.create(**_openai_kwargs(endpoint, request))
    choice = completion.choices[0]
    return LLMReply(
        text=choice.message.content or "",
        latency_ms=clock.since_sent_ms(start),
        tokens_in=completion.usage.prompt_tokens if completion.usage else 0,
        tokens_out=completion.usage.completion_tokens if completion.usage else 0,
        model_reported=completion.model or "",
        request_id=getattr(completion, "_request_id", None) or completion.id or "",
        finish_reason=choice.finish_reason or "stop",
    )


async def _anthropic_whole(client: Any, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    kwargs: dict[str, Any] = {
        "model": endpoint.model,
        "system": request.system,
        "messages": request.messages,
        "max_tokens": request.max_tokens,
    }
    if request.schema is not None:
        kwargs["output_config"] = {"format": {"type": "json_schema", "schema": request.schema}}
    start, clock = time.perf_counter(), _clock()
    message = await client.messages.create(**kwargs)
    return LLMReply(
        text="".join(block.text for block in message.content if block.type == "text"),
        latency_ms=clock.since_sent_ms(start),
        tokens_in=message.usage.input_tokens or 0,
        tokens_out=message.usage.output_tokens or 0,
        model_reported=message.model or "",
        request_id=getattr(message, "_request_id", None) or message.id or "",
        finish_reason=message.stop_reason or "end_turn",
    )


async def _openai(client: Any, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    kwargs = {
        **_openai_kwargs(endpoint, request),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    start, clock = time.perf_counter(), _clock()
    stream = await client.chat.completions.create(**kwargs)
    reply = LLMReply(text="", request_id=stream.response.headers.get("x-request-id", ""))
    parts: list[str] = []
    async for chunk in stream:
        reply.model_reported = chunk.model or reply.model_reported
        reply.request_id = reply.request_id or chunk.id or ""
        if chunk.usage is not None:
            reply.tokens_in = chunk.usage.prompt_tokens or 0
            reply.tokens_out = chunk.usage.completion_tokens or 0
        for choice in chunk.choices:
            if choice.delta.content:
                if reply.ttft_ms is None:
                    reply.ttft_ms = clock.since_sent_ms(start)
                parts.append(choice.delta.content)
            if choice.finish_reason:
                reply.finish_reason = choice.finish_reason
    return _finish(reply, parts, clock.since_sent_ms(start))


async def _anthropic(client: Any, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    # The current Messages API (SDK 2.x) has no sampling parameters: temperature and top_p are
    # the model's own. The request keeps them, so the cache key and provenance say what we asked.
    kwargs: dict[str, Any] = {
        "model": endpoint.model,
        "system": request.system,
        "messages": request.messages,
        "max_tokens": request.max_tokens,
        "stream": True,
    }
    if request.schema is not None:
        kwargs["output_config"] = {"format": {"type": "json_schema", "schema": request.schema}}
    start, clock = time.perf_counter(), _clock()
    stream = await client.messages.create(**kwargs)
    reply = LLMReply(text="", request_id=stream.response.headers.get("request-id", ""))
    parts: list[str] = []
    async for event in stream:
        if event.type == "message_start":
            reply.model_reported = event.message.model
            reply.request_id = reply.request_id or event.message.id
            reply.tokens_in = event.message.usage.input_tokens or 0
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            if event.delta.text and reply.ttft_ms is None:
                reply.ttft_ms = clock.since_sent_ms(start)
            parts.append(event.delta.text)
        elif event.type == "message_delta":
            reply.tokens_out = event.usage.output_tokens or 0
            reply.finish_reason = event.delta.stop_reason or ""
    return _finish(reply, parts, clock.since_sent_ms(start))


def _finish(reply: LLMReply, parts: list[str], latency_ms: float) -> LLMReply:
    reply.latency_ms = latency_ms
    reply.text = "".join(parts)
    if not reply.finish_reason:
        # A stream that ended without its closing event was cut: never take half a reply.
        raise CallError("connection", "the stream ended before the reply was complete")
    return reply
