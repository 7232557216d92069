"""HTTP transports that connect only where the operator allows (completions/llm/hosts.py).

httpx resolves a host name inside its connection pool, at connect time. These network backends
take that step over: they resolve the name, check every address against the host policy and
connect to a checked address themselves, so the address that was judged is the address used
(a name that answers differently a moment later - DNS rebinding - gains nothing). TLS still
verifies the certificate against the host name. Redirects are never followed: an API answers,
it does not send the key elsewhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2

from .hosts import HostNotAllowed, HostPolicy


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
