"""While the database is briefly away, raters and writers get "please try again", never a 500.

A PostgreSQL restart or failover takes seconds; a rater's submit that lands in them used to get
the error page, and the rater did not know whether the answer counted. Now any page under the
participants' paths (`/r/`, `/w/`) whose view fails because the database cannot be reached
(django.db.OperationalError or InterfaceError: refused, dropped or broken connection) answers
**503 with `Retry-After`** and a page that tries again by itself:

- a page opened by a link (GET) reloads itself after the wait (`<meta http-equiv="refresh">`);
- a form sent without JavaScript comes back as the same form, with the same fields, sent again
  after the wait by static/js/retry.js (a button does it without JavaScript);
- a submit sent by htmx (the item page) is re-sent by static/js/rater.js after the wait.

Nothing is stored by a request that failed this way (its transaction did not commit), so sending
it again is safe; a submit that did commit before the failure is recognised as a repeat by the
submit itself (the first answer is the one kept).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template import loader

from .errors import friendly_error

PARTICIPANT_PATHS = ("/r/", "/w/")
RETRY_AFTER_SECONDS = 5
logger = logging.getLogger(__name__)


class DatabaseAwayMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        if not request.path.startswith(PARTICIPANT_PATHS):
            return None
        logger.warning("database unreachable on %s %s: %s", request.method, request.path, exception)
        return try_again_response(request)


def try_again_response(request: HttpRequest) -> HttpResponse:
    """The 503 page that retries itself. Rendered without the request's context processors:
    they may read the database (a session), which is what is away."""
    repost = request.method == "POST" and not request.headers.get("HX-Request")
    fields = list(_posted_fields(request)) if repost else []
    writer = request.path.startswith("/w/")
    context = {
        "base": "writing/_writer_base.html" if writer else "annotation/_rater_base.html",
        "retry_after": RETRY_AFTER_SECONDS,
        "reload": request.method == "GET",
        "repost": repost,
        "action": request.get_full_path(),
        "fields": fields,
    }
    try:
        body = loader.get_template("503.html").render(context)
    except Exception:  # the page must not fail: fall back to the plain error page
        return friendly_error(None, 500)
    response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response.heart_friendly = True  # type: ignore[attr-defined]  # not replaced by middleware
    return response


def _posted_fields(request: HttpRequest) -> Iterator[tuple[str, str]]:
    try:
        for name, values in request.POST.lists():
            for value in values:
                yield name, value
    except Exception:  # an unreadable body: the page offers a reload instead
        return
