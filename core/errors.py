"""Friendly error pages (404, 403, 405, 500, CSRF failure) in the raters' neutral style.

They name no system, model or study internals, and they work without a request context (the
500 page is rendered when something already went wrong).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template import loader

TEMPLATES = {
    400: "400.html",
    403: "403.html",
    404: "404.html",
    405: "405.html",
    429: "429.html",
    500: "500.html",
}


def friendly_error(request: HttpRequest | None, status: int, **context: Any) -> HttpResponse:
    template = loader.get_template(TEMPLATES.get(status, "500.html"))
    try:
        body = template.render(context, request if status != 500 else None)
    except Exception:  # the error page itself must not fail
        body = "<!doctype html><title>Error</title><p>Something went wrong. Please try again.</p>"
    response = HttpResponse(body, status=status)
    response.heart_friendly = True  # type: ignore[attr-defined]  # a marker the middleware reads
    return response


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return friendly_error(request, 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return friendly_error(request, 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return friendly_error(request, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    return friendly_error(None, 500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """An expired or missing form token: say what to do instead of Django's technical page."""
    return friendly_error(request, 403, csrf=True)
