"""Response headers every page gets, and friendly error pages instead of bare or debug ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers

from .errors import friendly_error

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """For type checking only: a request after django-htmx's middleware, which adds `htmx`
    (django-htmx documents this class for projects to declare; it ships none)."""

    htmx: HtmxDetails


class AuthenticatedHttpRequest(HttpRequest):
    """For type checking only: a request a login-checking decorator let through (its user is
    an account, never AnonymousUser)."""

    user: User


# Responses a browser may keep: the static files (served by whitenoise before this middleware)
# and nothing else. Rater pages, studio pages and data downloads are all private and change.
FRIENDLY_STATUSES = (400, 403, 404, 405, 500)


class SafeResponseMiddleware:
    """`Cache-Control: no-store` and Permissions-Policy on every answer; friendly error pages.

    - no-store: the back button and a second tab fetch the page again instead of showing an
      item that was already answered, and private data never sits in a cache;
    - a 405 (e.g. a submit URL opened directly) gets a page instead of an empty body;
    - with DEBUG on (the demo), Django's own debug pages (the technical 404 and 500 pages,
      a CSRF failure's help page) are shown to staff only: raters, who have no account, get
      the same friendly pages as in production. Pages a view renders itself with an error
      status ("This Prolific ID is already taking part", "Please start from Prolific", a
      study's closed page) are the product: they are never replaced, so the demo shows what
      production shows.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code in FRIENDLY_STATUSES and self._replace(request, response):
            response = friendly_error(request, response.status_code)
        add_never_cache_headers(response)  # no-cache, no-store, must-revalidate, private
        response.headers.setdefault("Permissions-Policy", settings.PERMISSIONS_POLICY)
        return response

    @staticmethod
    def _replace(request: HttpRequest, response: HttpResponse) -> bool:
        if getattr(response, "heart_friendly", False):
            return False
        content_type = response.headers.get("Content-Type", "")
        if response.status_code == 405:
            return not response.content or content_type.startswith("text/html")
        if not settings.DEBUG or not content_type.startswith("text/html"):
            return False
        if not _is_django_debug_page(response):
            return False
        user = getattr(request, "user", None)
        return not (user is not None and user.is_authenticated and user.is_staff)


# Every page Django shows only because DEBUG is on says so, in this markup (technical_404.html,
# technical_500.html, csrf_403.html). A page of ours cannot contain it: template values are
# escaped, so text a user typed would read "&lt;code&gt;".
DJANGO_DEBUG_MARK = b"<code>DEBUG ="


def _is_django_debug_page(response: HttpResponse) -> bool:
    return not response.streaming and DJANGO_DEBUG_MARK in response.content
