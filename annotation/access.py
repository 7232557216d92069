"""Rater access: who the rater is (from a signed cookie), and the only way to fetch their items.

A rater has no account and no server-side session. After consent the browser holds a signed
cookie listing the opaque tokens of its raters (one per study): it names no database id, it
cannot be forged without SECRET_KEY, and reading it costs no session lookup (no Redis, no
database), so the rater pages keep working when Redis is down and the round trip stays cheap.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from completions.models import Study

from .models import Assignment, QualityCheckItem, Rater
from .selectors import hot_cursor, model_from_row, row_parts, sql_columns

RATER_COOKIE = "heart_rater"
PENDING_COOKIE = "heart_pending"  # a Prolific visit's ids until consent creates the rater
COOKIE_SALT = "heart.rater"
COOKIE_MAX_AGE = 60 * 60 * 24 * 30
MAX_RATERS_PER_BROWSER = 8


def access_study_for_rater(invite_token: str) -> Study:
    """The study behind an invitation link (404 for an unknown one; its status is the view's)."""
    return get_object_or_404(Study, invite_token=invite_token)


def rater_tokens(request: HttpRequest) -> list[str]:
    value = request.get_signed_cookie(RATER_COOKIE, default="", salt=COOKIE_SALT)
    return value.split() if value else []


def rater_cookie_value(tokens: list[str]) -> str:
    """The signed cookie value for these rater tokens (tests and the benchmark use it too)."""
    response = HttpResponse()
    response.set_signed_cookie(RATER_COOKIE, " ".join(tokens), salt=COOKIE_SALT)
    return response.cookies[RATER_COOKIE].value


def _set_cookie(response: HttpResponse, name: str, value: str) -> None:
    response.set_signed_cookie(
        name,
        value,
        salt=COOKIE_SALT,
        max_age=COOKIE_MAX_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def rater_login(request: HttpRequest, response: HttpResponse, rater: Rater) -> HttpResponse:
    """Remember the rater in this browser (the newest few studies are kept)."""
    tokens = [t for t in rater_tokens(request) if t != rater.token] + [rater.token]
    _set_cookie(response, RATER_COOKIE, " ".join(tokens[-MAX_RATERS_PER_BROWSER:]))
    response.delete_cookie(PENDING_COOKIE)
    return response


def rater_from_session(request: HttpRequest, study: Study) -> Rater | None:
    """This browser's rater in `study`, if it has entered it."""
    tokens = rater_tokens(request)
    if not tokens:
        return None
    rater = Rater.objects.filter(token__in=tokens, study=study).first()
    if rater is not None:
        rater.study = study  # spare a query: the caller already holds it
    return rater


# Every rater page after consent: the study behind the link and this browser's rater in it, in
# one prepared statement (the two ORM queries cost twice the round trips and their compiling).
_STUDY_RATER_SQL = """
SELECT {s_cols}, {r_cols}
FROM {study} s
LEFT JOIN {rater} r ON r.study_id = s.id AND r.token = ANY(%s)
WHERE s.invite_token = %s
ORDER BY r.id
LIMIT 1
"""


@cache
def _study_rater_sql(vendor: str) -> str:
    return _STUDY_RATER_SQL.format(
        s_cols=sql_columns(Study, "s"),
        r_cols=sql_columns(Rater, "r"),
        study=Study._meta.db_table,
        rater=Rater._meta.db_table,
    )


def study_and_rater(request: HttpRequest, invite_token: str) -> tuple[Study, Rater | None]:
    """The study behind an invitation link (404 for an unknown one) and this browser's rater in
    it: `access_study_for_rater` and `rater_from_session` together, one statement on
    PostgreSQL."""
    tokens = rater_tokens(request)
    if connection.vendor != "postgresql":  # no arrays: the two ORM queries
        study = access_study_for_rater(invite_token)
        return study, rater_from_session(request, study)
    with hot_cursor() as cursor:
        cursor.execute(_study_rater_sql(connection.vendor), [tokens, invite_token])
        row = cursor.fetchone()
    if row is None:
        raise Http404("No Study matches the given query.")
    study_columns, rater_columns = row_parts(row, Study, Rater)
    study = model_from_row(Study, study_columns)
    if rater_columns[0] is None or not tokens:  # no rater of this browser in the study
        return study, None
    rater = model_from_row(Rater, rater_columns)
    rater.study = study
    return study, rater


def pending_prolific_ids(request: HttpRequest, study: Study) -> dict[str, Any] | None:
    """The Prolific ids a visit brought, kept (signed) until the consent creates the rater."""
    try:
        value = request.get_signed_cookie(PENDING_COOKIE, default="", salt=COOKIE_SALT)
        data = signing.loads(value) if value else None
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or data.get("study") != study.invite_token:
        return None
    return data


def pending_prolific_remember(
    response: HttpResponse, study: Study, *, pid: str, study_id: str, session_id: str
) -> HttpResponse:
    value = signing.dumps(
        {"study": study.invite_token, "pid": pid, "study_id": study_id, "session_id": session_id}
    )
    _set_cookie(response, PENDING_COOKIE, value)
    return response


# The submit of every round trip: the assignment with its rater, study and quality-check item in
# one hand-written statement (the equivalent select_related query cost ~3 ms CPU to compile).
_ASSIGNMENT_SQL = """
SELECT {a_cols}, {r_cols}, {s_cols}, {q_cols}
FROM {assignment} a
JOIN {rater} r ON r.id = a.rater_id
JOIN {study} s ON s.id = r.study_id
LEFT JOIN {quality_item} q ON q.id = a.quality_item_id
WHERE a.token = %s
"""


@cache
def _assignment_sql(vendor: str) -> str:
    return _ASSIGNMENT_SQL.format(
        a_cols=sql_columns(Assignment, "a"),
        r_cols=sql_columns(Rater, "r"),
        s_cols=sql_columns(Study, "s"),
        q_cols=sql_columns(QualityCheckItem, "q"),
        assignment=Assignment._meta.db_table,
        rater=Rater._meta.db_table,
        study=Study._meta.db_table,
        quality_item=QualityCheckItem._meta.db_table,
    )


def _assignment_with_rater(token: str) -> Assignment | None:
    with hot_cursor() as cursor:
        cursor.execute(_assignment_sql(connection.vendor), [token])
        row = cursor.fetchone()
    if row is None:
        return None
    parts = row_parts(row, Assignment, Rater, Study, QualityCheckItem)
    assignment = model_from_row(Assignment, parts[0])
    rater = model_from_row(Rater, parts[1])
    rater.study = model_from_row(Study, parts[2])
    assignment.rater = rater
    # The item's id column is NULL exactly when the assignment is a real pair (LEFT JOIN).
    has_item = parts[3][0] is not None
    assignment.quality_item = model_from_row(QualityCheckItem, parts[3]) if has_item else None
    return assignment


def access_assignment_for_rater(request: HttpRequest, token: str) -> Assignment:
    """The assignment behind a submit URL, if it belongs to a rater of this browser.

    Another rater's token, an unknown token or no rater cookie all give the same 404, so a
    token reveals nothing about whether it exists. The rater and study come with it
    (select_related semantics, one statement).
    """
    tokens = rater_tokens(request)
    assignment = _assignment_with_rater(token) if tokens else None
    if assignment is None or assignment.rater.token not in tokens:
        raise Http404("No such item.")
    return assignment
