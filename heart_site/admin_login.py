"""The admin login, throttled against password guessing (django-ratelimit on the shared cache).

Failed attempts are counted per client address and per username; past either limit the login
answers 429 with a page saying to wait, without checking the password. A successful login
counts nothing. The per-username limit stops a guesser who rotates addresses, at the price
that they can also keep that one account's login closed for the window (documented).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django_ratelimit.core import get_usage

from completions.access import role

from .errors import friendly_error


def _username(group: str, request: HttpRequest) -> str:
    return request.POST.get("username", "")[:150].strip().lower()


LIMITS = (
    ("admin-login-client", "ip", "LOGIN_RATE_PER_CLIENT"),
    ("admin-login-username", _username, "LOGIN_RATE_PER_USERNAME"),
)


def _usages(request: HttpRequest, *, increment: bool) -> list[dict | None]:
    return [
        get_usage(request, group=group, key=key, rate=getattr(settings, rate), increment=increment)
        for group, key, rate in LIMITS
    ]


def login_throttled(request: HttpRequest) -> bool:
    return any(
        u is not None and u["count"] >= u["limit"] for u in _usages(request, increment=False)
    )


@role("public")
def throttled_admin_login(request: HttpRequest, extra_context=None) -> HttpResponse:
    if request.method == "POST" and login_throttled(request):
        return friendly_error(request, 429)
    response = admin.site.login(request, extra_context)
    if request.method == "POST" and response.status_code == 200:  # the form again: it failed
        _usages(request, increment=True)
    return response
