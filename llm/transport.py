"""The HTTP layer under the SDK clients: a timed, byte-bounded transport and the host guard.

`TimedTransport` stamps each call's `Clock` (time to first token, see clients.py) and counts
the response body's bytes against the call's budget: past it the body ends there.

The guarded transports connect only where the operator allows (llm/hosts.py).

httpx resolves a host name inside its connection pool, at connect time. These network backends
take that step over: they resolve the name, check every address against the host policy and
connect to a checked address themselves, so the address that was judged is the address used
(a name that answers differently a moment later - DNS rebinding - gains nothing). TLS still
verifies the certificate against the host name. Redirects are never followed: an API answers,
it does not send the key elsewhere.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpcore2
import httpx2

from .hosts import HostNotAllowed, HostPolicy

HEAD_BYTES = 64 * 1024  # of a response body kept to show when it could not be read

# NUL cannot be stored in PostgreSQL text, a lone surrogate cannot be encoded as UTF-8: a reply
# carrying either (JSON escapes allow both) is stored with U+FFFD in their place.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> str:
    return _UNSTORABLE.sub("\ufffd", text)


@dataclass
class Clock:
    """One call's timestamps (perf_counter) and body bytes, taken by `TimedTransport`."""

    sent: float | None = None  # the answering attempt's request handed to the connection
    read: float | None = None  # the latest response body bytes handed up to the SDK
    max_chars: int | None = None  # the reply cap; the body's byte budget follows from it
    received: int = 0  # body bytes of the answering attempt (at a cut: the budget)
    head: bytearray = field(default_factory=bytearray)  # its first HEAD_BYTES
    cut: bool = False  # the body went past its budget: the rest was not read

    def budget(self, content_type: str) -> int | None:
        if self.max_chars is None:
            return None
        if "event-stream" in content_type:
            return 64 * self.max_chars + 1024 * 1024
        return 8 * self.max_chars + 64 * 1024

    def head_text(self) -> str:
        return storable(bytes(self.head).decode("utf-8", errors="replace"))

    def since_sent_ms(self, fallback: float) -> float:
        """From the request's start to the latest bytes read (ms). `fallback` stands in for an
        instant the transport did not see (a client that is not ours)."""
        sent = self.sent if self.sent is not None else fallback
        read = self.read if self.read is not None else time.perf_counter()
        return (read - sent) * 1000


CLOCK: ContextVar[Clock | None] = ContextVar("heart_llm_clock", default=None)


class TimedStream(httpx2.AsyncByteStream):
    """A response body that stamps the clock as each chunk of bytes comes off the socket. The
    SDKs decode lazily (one chunk, its events, then the next), so when an event reaches us the
    stamp is the arrival of the bytes that completed it. Past its byte budget the body ends
    there (the SDK sees a short body and fails to parse it; `complete` reports "too_large")."""

    def __init__(self, inner: Any, clock: Clock, budget: int | None) -> None:
        self._inner, self._clock, self._budget = inner, clock, budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        clock = self._clock
        async for chunk in self._inner:
            clock.read = time.perf_counter()
            clock.received += len(chunk)
            if len(clock.head) < HEAD_BYTES:
                clock.head += chunk[: HEAD_BYTES - len(clock.head)]
            if self._budget is not None and clock.received > self._budget:
                clock.cut, clock.received = True, self._budget
                return
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class TimedTransport(httpx2.AsyncBaseTransport):
    """The SDK's default transport, timing the call whose `Clock` is in the context."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        clock = CLOCK.get()
        if clock is not None:  # each attempt restarts it: the one that answers keeps it
            clock.sent, clock.read = time.perf_counter(), None
            clock.received, clock.head, clock.cut = 0, bytearray(), False
        response = await self._inner.handle_async_request(request)
        if clock is not None:
            budget = clock.budget(response.headers.get("content-type", ""))
            response.stream = TimedStream(response.stream, clock, budget)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def _refuse_unix(*args: Any, **kwargs: Any) -> Any:
    raise HostNotAllowed("LLM calls never go to a Unix socket")


class _GuardedBackend(httpcore2.AsyncNetworkBackend):
    def __init__(self, policy: HostPolicy, scheme: str) -> None:
        self._policy, self._scheme = policy, scheme
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        if not self._policy.name_allowed(host):
            raise HostNotAllowed(f"host {host} is not on the operator's list (LLM_ALLOWED_HOSTS)")
        try:
            async with asyncio.timeout(timeout):
                addresses = await self._policy.aresolve(self._scheme, host, port)
        except TimeoutError:
            raise httpcore2.ConnectTimeout(f"resolving {host} timed out") from None
        last: Exception = httpcore2.ConnectError(f"no address of {host} answered")
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last = exc
        raise last

    connect_unix_socket = _refuse_unix

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _GuardedSyncBackend(httpcore2.NetworkBackend):
    def __init__(self, policy: HostPolicy, scheme: str) -> None:
        self._policy, self._scheme = policy, scheme
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        if not self._policy.name_allowed(host):
            raise HostNotAllowed(f"host {host} is not on the operator's list (LLM_ALLOWED_HOSTS)")
        last: Exception = httpcore2.ConnectError(f"no address of {host} answered")
        for address in self._policy.resolve(self._scheme, host, port):
            try:
                return self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last = exc
        raise last

    connect_unix_socket = _refuse_unix

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _pool_options(limits: httpx2.Limits) -> dict[str, Any]:
    return {
        "ssl_context": httpx2.create_ssl_context(),
        "max_connections": limits.max_connections,
        "max_keepalive_connections": limits.max_keepalive_connections,
        "keepalive_expiry": limits.keepalive_expiry,
    }


class GuardedAsyncTransport(httpx2.AsyncHTTPTransport):
    """httpx's own transport over a pool whose connections go only to allowed addresses."""

    def __init__(self, *, policy: HostPolicy, scheme: str, limits: httpx2.Limits) -> None:
        super().__init__(limits=limits)
        # httpx offers no way to hand its pool a network backend: the same pool is built again
        # through httpcore's public constructor, with ours.
        self._pool = httpcore2.AsyncConnectionPool(
            **_pool_options(limits), network_backend=_GuardedBackend(policy, scheme)
        )


class GuardedSyncTransport(httpx2.HTTPTransport):
    """The blocking twin of `GuardedAsyncTransport` (the batch APIs' sync SDK clients)."""

    def __init__(self, *, policy: HostPolicy, scheme: str, limits: httpx2.Limits) -> None:
        super().__init__(limits=limits)
        self._pool = httpcore2.ConnectionPool(
            **_pool_options(limits), network_backend=_GuardedSyncBackend(policy, scheme)
        )


def host_refusal(exc: BaseException) -> HostNotAllowed | None:
    """The HostNotAllowed behind an SDK's connection error, if that is what it was."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return None
        if isinstance(seen, HostNotAllowed):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
