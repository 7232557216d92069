"""Provider clients over the official async SDKs, with streaming and time to first token.

One retry layer only: the SDKs' own (`max_retries`, `timeout`, Retry-After honoured). Nothing
here touches the database: the engine hands in plain `EndpointConfig` and `LLMRequest` values.

Time to first token (TTFT) is what a user of the model waits: from the moment the request goes
to the connection (the SDK's HTTP transport is handed the built request) to the arrival of the
response bytes that complete the first *content* delta. Both instants are taken in the HTTP
transport under the SDK (`transport.TimedTransport`), so neither the SDK's work before the request
(building and validating it) nor its parsing of the stream afterwards counts. With the SDK's
retries, the clock belongs to the attempt that answered. `latency_ms` runs from the same start
to the last bytes of the response.

Every call is bounded (`complete(..., max_chars=N)`): reply text past N characters is not read
(the stream is closed and the call fails as "too_large", with what arrived), and the response
body itself may not exceed a byte budget derived from N (a whole JSON body: 8 N + 64 KiB; an
event stream: 64 N + 1 MiB, which also ends a stream that sends no text at all), so a provider
that floods holds at most that much of a worker's memory per call in flight. Connections go only
to hosts the operator allows (llm/hosts.py, transport.py); redirects are not followed.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings

from . import keys
from .hosts import HostNotAllowed, HostPolicy
from .transport import (
    CLOCK,
    Clock,
    GuardedAsyncTransport,
    GuardedSyncTransport,
    TimedTransport,
    host_refusal,
    storable,
)

# Local servers (the fake server, Ollama, vLLM) ignore the key, but the SDKs insist on one.
NO_KEY = "not-needed"
ERROR_MAX_CHARS = 500  # of a provider's error message kept in a unit (they can be huge)


class CallError(Exception):
    """A call that failed after the SDK's own retries. Never cached, never a verdict.

    `raw` is what arrived of the reply, when there is something to show (a reply cut at the cap,
    a body that was not valid UTF-8); `cut` says the provider sent more than was read."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        raw: str = "",
        cut: bool = False,
    ) -> None:
        if len(message) > ERROR_MAX_CHARS:
            message = message[:ERROR_MAX_CHARS] + "…"
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.raw = raw
        self.cut = cut


def reply_max_chars(kind: str) -> int:
    """The cap on one reply of a run kind, in characters (LLM_REPLY_MAX_CHARS)."""
    caps = settings.LLM_REPLY_MAX_CHARS
    return int(caps.get(kind, caps["default"]))


@dataclass(frozen=True)
class EndpointConfig:
    name: str
    provider: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    timeout_s: float = 60.0
    max_retries: int = 2
    api_key_encrypted: str = field(default="", repr=False)

    def api_key(self) -> str:
        """The key to send: the stored one decrypted, or an allowed variable's value."""
        if self.api_key_encrypted:
            try:
                return keys.key_decrypt(self.api_key_encrypted)
            except keys.KeyUnavailable as exc:
                raise CallError("config", str(exc)) from None
        if not self.api_key_env:
            return NO_KEY
        if problem := keys.key_env_problem(self.api_key_env):
            raise CallError("config", f"{problem}: no call was made")
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

    async def get(self, endpoint: EndpointConfig) -> Any:
        """The endpoint's client; a new one only after its URL passed the host policy."""
        client = self._clients.get(endpoint.name)
        if client is None:
            client = _new_client(endpoint)
            try:
                policy = HostPolicy.from_settings()
                scheme, host, port = policy.check_url(str(client.base_url))
                await policy.aresolve(scheme, host, port)
            except HostNotAllowed as exc:
                await client.close()
                raise CallError("refused", f"not called: {exc}") from None
            self._clients[endpoint.name] = client
        return client

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()


def _sdk_options(endpoint: EndpointConfig) -> dict[str, Any]:
    return {
        "api_key": endpoint.api_key(),
        "timeout": endpoint.timeout_s,
        "max_retries": endpoint.max_retries,
        "base_url": endpoint.base_url or None,
    }


def _scheme(endpoint: EndpointConfig) -> str:
    return "http" if endpoint.base_url.lower().startswith("http://") else "https"


if TYPE_CHECKING:
    import anthropic
    import openai


def _new_client(endpoint: EndpointConfig) -> Any:
    # The SDKs load where they are used (workers), not with the web process (CONVENTIONS 13).
    import anthropic
    import openai

    sdk = anthropic if endpoint.provider == "anthropic" else openai
    # The SDK's own default client (its timeouts, limits) over a timed transport whose
    # connections go only to allowed addresses; redirects are not followed.
    limits = sdk.DEFAULT_CONNECTION_LIMITS
    guarded = GuardedAsyncTransport(
        policy=HostPolicy.from_settings(), scheme=_scheme(endpoint), limits=limits
    )
    http_client = sdk.DefaultAsyncHttpxClient(
        transport=TimedTransport(guarded), follow_redirects=False
    )
    options = {**_sdk_options(endpoint), "http_client": http_client}
    if endpoint.provider == "anthropic":
        return anthropic.AsyncAnthropic(**options)
    return openai.AsyncOpenAI(**options)


def sync_client(endpoint: EndpointConfig) -> anthropic.Anthropic | openai.OpenAI:
    """A blocking SDK client (the batch APIs) under the same host policy, checked first."""
    import anthropic
    import openai

    sdk = anthropic if endpoint.provider == "anthropic" else openai
    policy = HostPolicy.from_settings()
    transport = GuardedSyncTransport(
        policy=policy, scheme=_scheme(endpoint), limits=sdk.DEFAULT_CONNECTION_LIMITS
    )
    http_client = sdk.DefaultHttpxClient(transport=transport, follow_redirects=False)
    options = {**_sdk_options(endpoint), "http_client": http_client}
    client = anthropic.Anthropic(**options) if sdk is anthropic else openai.OpenAI(**options)
    try:
        policy.resolve(*policy.check_url(str(client.base_url)))
    except HostNotAllowed as exc:
        client.close()
        raise CallError("refused", f"not called: {exc}") from None
    return client


async def complete(
    pool: ClientPool,
    endpoint: EndpointConfig,
    request: LLMRequest,
    *,
    max_chars: int | None = None,
) -> LLMReply:
    """One call (streamed or whole); TTFT is the monotonic time to the first *content* token.
    At most `max_chars` characters of reply (default: LLM_REPLY_MAX_CHARS["default"])."""
    clock = Clock(max_chars=max_chars or reply_max_chars("default"))
    token = CLOCK.set(clock)
    try:
        client = await pool.get(endpoint)
        if endpoint.provider == "anthropic":
            call = _anthropic if request.stream else _anthropic_whole
        else:
            call = _openai if request.stream else _openai_whole
        reply = await call(client, endpoint, request)
    except CallError:
        raise
    except Exception as exc:
        raise _call_error(exc, endpoint, clock) from exc
    finally:
        CLOCK.reset(token)
    if clock.cut:  # a body cut at its budget that still parsed: never take half a reply
        raise _too_large(clock, "")
    return reply


def _too_large(clock: Clock, text: str) -> CallError:
    if text:
        what = f"more than {clock.max_chars:,} characters of reply"
    else:
        what = f"more than {clock.received:,} bytes of response"
    return CallError(
        "too_large",
        f"reply too large: the provider sent {what}; reading stopped at the cap",
        raw=text or clock.head_text(),
        cut=True,
    )


def _call_error(exc: Exception, endpoint: EndpointConfig, clock: Clock) -> CallError:
    """The CallError for an exception out of an SDK call: short, and never the raw bytes."""
    import anthropic
    import openai

    if refusal := host_refusal(exc):
        return CallError("refused", f"not called: {refusal}")
    if isinstance(exc, openai.APITimeoutError | anthropic.APITimeoutError):
        return CallError("timeout", f"timed out after {endpoint.timeout_s:g} s: {exc}")
    if isinstance(exc, openai.APIStatusError | anthropic.APIStatusError):
        kind = "rate_limit" if exc.status_code == 429 else "http"
        return CallError(kind, f"HTTP {exc.status_code}: {exc.message}", status=exc.status_code)
    if clock.cut:
        return _too_large(clock, "")
    if isinstance(exc, UnicodeDecodeError):
        bad = exc.object[exc.start : exc.start + 1].hex()
        return CallError(
            "bad_response",
            f"unusable response: not valid UTF-8 (byte 0x{bad} at position {exc.start:,})",
            raw=clock.head_text(),
        )
    if isinstance(exc, openai.APIConnectionError | anthropic.APIConnectionError):
        return CallError("connection", f"connection failed: {exc}")
    if isinstance(exc, openai.APIError | anthropic.APIError):
        return CallError("bad_response", f"unusable response: {exc}", raw=clock.head_text())
    if isinstance(exc, ValueError | KeyError | TypeError | AttributeError):
        # A stream the SDK could not decode (malformed event data, a truncated body).
        detail = f"{type(exc).__name__}: {str(exc)[:200]}"
        return CallError("bad_response", f"unusable response: {detail}", raw=clock.head_text())
    # httpx transport errors the SDK leaves unwrapped mid-stream
    return CallError("connection", f"stream broke: {type(exc).__name__}: {str(exc)[:200]}")


def _clock() -> Clock:
    return CLOCK.get() or Clock()


def openai_params(model: str, request: LLMRequest) -> dict[str, Any]:
    """The Chat Completions parameters of a request: the same for a call and a batch line."""
    params: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "system", "content": request.system}, *request.messages],
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_tokens": request.max_tokens,
    }
    if request.schema is not None:
        params["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
        }
    return params


def anthropic_params(model: str, request: LLMRequest) -> dict[str, Any]:
    """The Messages API parameters of a request: the same for a call and a batch line. The
    current Messages API (SDK 2.x) takes no sampling parameters: temperature and top_p are the
    model's own. The request keeps them, so the cache key and provenance say what we asked."""
    params: dict[str, Any] = {
        "model": model,
        "system": request.system,
        "messages": request.messages,
        "max_tokens": request.max_tokens,
    }
    if request.schema is not None:
        params["output_config"] = {"format": {"type": "json_schema", "schema": request.schema}}
    return params


async def _openai_whole(client: Any, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    start, clock = time.perf_counter(), _clock()
    completion = await client.chat.completions.create(**openai_params(endpoint.model, request))
    choice = completion.choices[0]
    return LLMReply(
        text=_whole_text(clock, choice.message.content or ""),
        latency_ms=clock.since_sent_ms(start),
        tokens_in=completion.usage.prompt_tokens if completion.usage else 0,
        tokens_out=completion.usage.completion_tokens if completion.usage else 0,
        model_reported=completion.model or "",
        request_id=getattr(completion, "_request_id", None) or completion.id or "",
        finish_reason=choice.finish_reason or "stop",
    )


async def _anthropic_whole(client: Any, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    start, clock = time.perf_counter(), _clock()
    message = await client.messages.create(**anthropic_params(endpoint.model, request))
    text = "".join(block.text for block in message.content if block.type == "text")
    return LLMReply(
        text=_whole_text(clock, text),
        latency_ms=clock.since_sent_ms(start),
        tokens_in=message.usage.input_tokens or 0,
        tokens_out=message.usage.output_tokens or 0,
        model_reported=message.model or "",
        request_id=getattr(message, "_request_id", None) or message.id or "",
        finish_reason=message.stop_reason or "end_turn",
    )


async def _openai(client: Any, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    kwargs = {
        **openai_params(endpoint.model, request),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    start, clock = time.perf_counter(), _clock()
    stream = await client.chat.completions.create(**kwargs)
    reply = LLMReply(text="", request_id=stream.response.headers.get("x-request-id", ""))
    parts = _Parts(clock, stream)
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
                await parts.add(choice.delta.content)
            if choice.finish_reason:
                reply.finish_reason = choice.finish_reason
    return _finish(reply, parts, clock.since_sent_ms(start))


async def _anthropic(client: Any, endpoint: EndpointConfig, request: LLMRequest) -> LLMReply:
    start, clock = time.perf_counter(), _clock()
    stream = await client.messages.create(**anthropic_params(endpoint.model, request), stream=True)
    reply = LLMReply(text="", request_id=stream.response.headers.get("request-id", ""))
    parts = _Parts(clock, stream)
    async for event in stream:
        if event.type == "message_start":
            reply.model_reported = event.message.model
            reply.request_id = reply.request_id or event.message.id
            reply.tokens_in = event.message.usage.input_tokens or 0
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            if event.delta.text and reply.ttft_ms is None:
                reply.ttft_ms = clock.since_sent_ms(start)
            await parts.add(event.delta.text)
        elif event.type == "message_delta":
            reply.tokens_out = event.usage.output_tokens or 0
            reply.finish_reason = event.delta.stop_reason or ""
    return _finish(reply, parts, clock.since_sent_ms(start))


class _Parts:
    """A streamed reply's text, read up to the cap: one more character and the stream is closed
    (nothing more is read) and the call fails as too large."""

    def __init__(self, clock: Clock, stream: Any) -> None:
        self.clock, self.stream = clock, stream
        self.parts: list[str] = []
        self.chars = 0

    async def add(self, text: str) -> None:
        self.parts.append(text)
        self.chars += len(text)
        cap = self.clock.max_chars
        if cap is not None and self.chars > cap:
            await self.stream.close()
            raise _too_large(self.clock, storable("".join(self.parts)[:cap]))

    def text(self) -> str:
        return storable("".join(self.parts))


def _whole_text(clock: Clock, text: str) -> str:
    if clock.max_chars is not None and len(text) > clock.max_chars:
        raise _too_large(clock, storable(text[: clock.max_chars]))
    return storable(text)


def _finish(reply: LLMReply, parts: _Parts, latency_ms: float) -> LLMReply:
    reply.latency_ms = latency_ms
    reply.text = parts.text()
    if parts.clock.cut:  # the body went past its byte budget (e.g. endless events, no text)
        raise _too_large(parts.clock, "")
    if not reply.finish_reason:
        # A stream that ended without its closing event was cut: never take half a reply.
        raise CallError("connection", "the stream ended before the reply was complete")
    return reply
