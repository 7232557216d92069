"""Text that cannot hurt: one place that refuses NUL characters and oversized JSON bodies.

PostgreSQL cannot store or even look up a NUL character (U+0000) in text, and nothing a person
types contains one, so a request that carries one anywhere (its path, the query string, a form
field, or a JSON body) is refused with a clear message before any view runs, instead of failing
deep inside with a 500.
Files (imports) are checked line by line by their readers (completions.importers.check_line).
A JSON body larger than DATA_UPLOAD_MAX_MEMORY_SIZE is refused without being read (the API
reads JSON itself, past Django's own limit for forms).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError

from .errors import friendly_error

NUL = "\x00"
NUL_MESSAGE = (
    "The request contains a NUL character (U+0000), which text here cannot hold. "
    "Remove it and try again."
)
# \u0000 in JSON, unless its backslash is itself escaped (an odd number of backslashes).
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def has_nul(values: Iterable[str]) -> bool:
    return any(NUL in value for value in values)


class TextGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = self._problem(request)
        if problem:
            return _refusal(request, problem)
        return self.get_response(request)

    @staticmethod
    def _problem(request: HttpRequest) -> str | None:
        if NUL in request.path_info or NUL in request.path:  # "/r/<invite>%00/"
            return NUL_MESSAGE
        query = request.GET
        if has_nul(query) or has_nul(v for _, values in query.lists() for v in values):
            return NUL_MESSAGE
        if request.method not in ("POST", "PUT", "PATCH"):
            return None
        content_type = request.META.get("CONTENT_TYPE", "")
        if content_type.startswith("application/json"):
            return _json_problem(request)
        if content_type.startswith(("multipart/form-data", "application/x-www-form-urlencoded")):
            try:
                fields = request.POST
            except (MultiPartParserError, ValueError):
                return None  # the view answers its own 400
            if has_nul(k for k in fields) or has_nul(v for _, vs in fields.lists() for v in vs):
                return NUL_MESSAGE
        return None


def _json_problem(request: HttpRequest) -> str | None:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if limit is not None and length > limit:
        return f"The request body is larger than {limit // 1024} KB; send less at a time."
    body = request.body
    if b"\x00" in body or _JSON_NUL.search(body):
        return NUL_MESSAGE
    return None


def _refusal(request: HttpRequest, message: str) -> HttpResponse:
    wants_json = request.path.startswith("/api/") or "json" in request.META.get("HTTP_ACCEPT", "")
    if wants_json:
        return JsonResponse({"detail": message}, status=400)
    return friendly_error(request, 400, message=message)
