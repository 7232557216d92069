"""Which hosts the workers may call: the operator's allow-list and the private-network rule.

An endpoint's base URL is checked when it is saved and again when a call is made:

- by name, without the network: http or https, no user name or password in the URL, and the
  host on `LLM_ALLOWED_HOSTS` (exact names, `.example.org` for a domain and its subdomains, `*`
  for any); https unless the host is a private address the operator allows;
- by address: every address the name resolves to must be public (private: loopback, 10/8,
  172.16/12, 192.168/16, link-local, unique-local, CGNAT, 0.0.0.0 and the IPv6 forms that embed
  such an address), unless the operator allows that host at that port
  (`LLM_ALLOWED_PRIVATE_HOSTS`, e.g. `127.0.0.1:11434` for a local Ollama: another port of the
  same host, such as the database's 5432, stays refused), or every private address at every
  port (`LLM_ALLOW_PRIVATE_NETWORKS`, for the demo and the tests).

At call time the name is resolved once per new connection and the connection goes to an address
that passed (`clients._GuardedBackend`), so a name that changes its answer between the check and
the connection (DNS rebinding) cannot reach a private address. Decimal, octal and hex spellings
of an address (`2130706433`, `0177.0.0.1`, `0x7f000001`) resolve like any name, to the address
they mean, and are judged by it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

# Where the SDKs send a call when the endpoint has no base URL.
PROVIDER_DEFAULT_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class HostNotAllowed(Exception):
    """A base URL or address the operator does not allow: the message says which rule."""


class HostUnresolved(HostNotAllowed):
    """A host name that does not resolve (no address to judge, none to call)."""


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside an IPv4-mapped, 6to4 or NAT64 IPv6 address."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(address: str) -> bool:
    """True for a globally routable unicast address; False for loopback, private, link-local,
    unspecified, multicast, reserved, and IPv6 forms of those."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
    if isinstance(ip, ipaddress.IPv6Address) and (inner := _embedded_v4(ip)) is not None:
        ip = inner
    return ip.is_global and not ip.is_multicast


def _literal(host: str) -> str | None:
    """The canonical address when `host` is an IP literal in its usual spelling."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


def _normal_host(host: str) -> str:
    host = host.strip().lower().strip("[]").rstrip(".")
    return _literal(host) or host


def host_and_port(entry: str) -> tuple[str, int]:
    """`"127.0.0.1:11434"`, `"localhost:8000"` or `"[::1]:11434"` as (host, port)."""
    parts = urlsplit("//" + entry.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise ValueError(
            f"LLM_ALLOWED_PRIVATE_HOSTS entry {entry!r} must be host:port, e.g. 127.0.0.1:11434"
        )
    return _normal_host(parts.hostname), port


@dataclass(frozen=True)
class HostPolicy:
    names: tuple[str, ...]
    allow_private: bool
    # (host or address, port) pairs where a private address may be called.
    private_hosts: frozenset[tuple[str, int]] = frozenset()

    @classmethod
    def from_settings(cls) -> HostPolicy:
        names = settings.LLM_ALLOWED_HOSTS
        normal = tuple(n.strip().lower().strip("[]").rstrip(".") for n in names if n.strip())
        private = getattr(settings, "LLM_ALLOWED_PRIVATE_HOSTS", [])
        return cls(
            names=normal,
            allow_private=bool(settings.LLM_ALLOW_PRIVATE_NETWORKS),
            private_hosts=frozenset(host_and_port(e) for e in private if e.strip()),
        )

    def name_allowed(self, host: str, port: int | None = None) -> bool:
        host = host.lower().rstrip(".")
        if port is not None and (_normal_host(host), port) in self.private_hosts:
            return True
        literal = _literal(host)
        for entry in self.names:
            if entry == "*" or entry == host or (literal and _literal(entry) == literal):
                return True
            if entry.startswith(".") and (host == entry[1:] or host.endswith(entry)):
                return True
        return False

    def private_allowed(self, host: str, address: str, port: int | None) -> bool:
        """A private address is called only where the operator allows it: at this port of this
        host name or address, or anywhere (LLM_ALLOW_PRIVATE_NETWORKS)."""
        if self.allow_private:
            return True
        if port is None:
            return False
        pairs = {(_normal_host(host), port), (_normal_host(address), port)}
        return bool(pairs & self.private_hosts)

    def check_url(self, url: str) -> tuple[str, str, int]:
        """The URL's scheme, host and port if its form and host name are allowed (no network)."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise HostNotAllowed(f"{url!r} is not a valid URL ({exc})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HostNotAllowed("the base URL must start with http:// or https:// and name a host")
        if parts.username is not None or parts.password is not None:
            raise HostNotAllowed("the base URL must not carry a user name or password")
        port = port or (443 if parts.scheme == "https" else 80)
        if not self.name_allowed(parts.hostname, port):
            raise HostNotAllowed(
                f"host {parts.hostname} is not on the operator's list of LLM hosts "
                "(LLM_ALLOWED_HOSTS)"
            )
        return parts.scheme, parts.hostname, port

    def check_addresses(
        self, scheme: str, host: str, addresses: list[str], port: int | None = None
    ) -> list[str]:
        """The addresses (in order, without repeats) if every one is allowed for this scheme
        and port."""
        if not addresses:
            raise HostUnresolved(f"host {host} did not resolve to any address")
        public = [a for a in addresses if is_public(a)]
        refused = [
            a for a in addresses if not is_public(a) and not self.private_allowed(host, a, port)
        ]
        if refused:
            where = f"{host}:{port}" if port is not None else host
            raise HostNotAllowed(
                f"host {host} resolves to {refused[0]}, a private or local address, and the "
                f"operator has not allowed {where} (LLM_ALLOWED_PRIVATE_HOSTS lists the host:port "
                "pairs of local model servers)"
            )
        if scheme == "http" and public:
            # A key must not cross the internet in clear; local servers may use plain http.
            raise HostNotAllowed(f"use https:// for {host}: keys are never sent in clear")
        return list(dict.fromkeys(addresses))

    def resolve(self, scheme: str, host: str, port: int) -> list[str]:
        """Resolve `host` (blocking) and check every address."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise HostUnresolved(f"host {host} does not resolve ({exc})") from None
        return self.check_addresses(scheme, host, [str(info[4][0]) for info in infos], port)

    async def aresolve(self, scheme: str, host: str, port: int) -> list[str]:
        """Resolve `host` on the running event loop and check every address."""
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise HostUnresolved(f"host {host} does not resolve ({exc})") from None
        return self.check_addresses(scheme, host, [str(info[4][0]) for info in infos], port)

    def check_base_url(self, url: str, *, resolve: bool = True) -> None:
        """The save-time check. A name that does not resolve now is let through (the server may
        not be up yet): the call-time check applies all the same."""
        scheme, host, port = self.check_url(url)
        if not resolve:
            return
        with contextlib.suppress(HostUnresolved):
            self.resolve(scheme, host, port)


def effective_base_url(provider: str, base_url: str) -> str:
    """The URL a call really goes to: the endpoint's, or the provider's public API."""
    return base_url or PROVIDER_DEFAULT_URLS.get(provider, "")


def base_url_problem(provider: str, base_url: str, *, resolve: bool = True) -> str | None:
    """Why this base URL may not be used here, or None (the save-time check)."""
    try:
        HostPolicy.from_settings().check_base_url(
            effective_base_url(provider, base_url), resolve=resolve
        )
    except HostNotAllowed as exc:
        return str(exc)
    return None
