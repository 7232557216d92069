"""One throttle for every login form: django-axes checks each password attempt first.

`LoginThrottleBackend` is the first authentication backend, so every `authenticate()` call
(the Django admin's login, the labellers' login, any login form added later) is refused while
the client address or the username is locked out, superusers and staff included; a failed
attempt anywhere counts everywhere. The lockout answers 429 with a page that says what
happened and how long to wait (`lockout_response`). Settings: LOGIN_FAILURE_LIMIT,
LOGIN_LOCKOUT_MINUTES (heart_site/settings.py).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from .errors import friendly_error

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser


class LoginThrottleBackend(AxesStandaloneBackend):  # type: ignore[misc]  # axes ships no types
    """Axes' lockout check, also for calls that bring no request (code, the test client):
    those are checked as coming from no address, so a locked-out username stays locked."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> AbstractBaseUser | None:
        user: AbstractBaseUser | None = super().authenticate(
            request or HttpRequest(), username, password, **kwargs
        )
        return user


def client_address(request: HttpRequest) -> str | None:
    """The address the rate limits use (RATELIMIT_IP_META_KEY behind a proxy), IPv6 as its /64:
    one client owns a whole /64 and could otherwise rotate through it."""
    raw = request.META.get(settings.RATELIMIT_IP_META_KEY or "REMOTE_ADDR", "")
    raw = raw.split(",")[0].strip()
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return raw or None
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False).network_address)
    return str(address)


def username_of(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """Counted without case or surrounding spaces: "Boss " and "boss" are one account's tries."""
    value = (credentials or {}).get("username")
    if value is None and request is not None and request.method == "POST":
        value = request.POST.get("username")
    return str(value).strip().lower()[:150] if value else None


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    minutes = max(1, int(settings.AXES_COOLOFF_TIME.total_seconds() // 60))
    return friendly_error(request, 429, login_locked=True, minutes=minutes)
