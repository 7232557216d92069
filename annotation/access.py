"""Rater access: who the rater is (from the session), and the only way to fetch their items.

A rater has no account. After entry the Django session holds, per study, the rater's primary
key; the browser only ever sees the opaque session cookie, never an id.
"""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from completions.models import Study

from .models import Assignment, QualityCheckItem, Rater
from .selectors import model_from_row, sql_columns

SESSION_KEY = "heart_raters"


def access_study_for_rater(invite_token: str) -> Study:
    """The study behind an invitation link (404 for an unknown or closed study)."""
    return get_object_or_404(Study.objects.exclude(status="closed"), invite_token=invite_token)


def rater_login(request: HttpRequest, rater: Rater) -> None:
    raters = dict(request.session.get(SESSION_KEY, {}))
    raters[str(rater.study_id)] = rater.pk
    request.session[SESSION_KEY] = raters


def rater_id_from_session(request: HttpRequest, study_id: int) -> int | None:
    return request.session.get(SESSION_KEY, {}).get(str(study_id))


def rater_from_session(request: HttpRequest, study: Study) -> Rater | None:
    rater_id = rater_id_from_session(request, study.pk)
    if rater_id is None:
        return None
    rater = Rater.objects.filter(pk=rater_id, study=study).first()
    if rater is not None:
        rater.study = study  # spare a query: the caller already holds it
    return rater


def rater_session_ids(request: HttpRequest) -> set[int]:
    return set(request.session.get(SESSION_KEY, {}).values())


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
    models = (Assignment, Rater, Study, QualityCheckItem)
    with connection.cursor() as cursor:
        cursor.execute(_assignment_sql(connection.vendor), [token])
        row = cursor.fetchone()
    if row is None:
        return None
    parts, start = [], 0
    for model in models:
        width = len(model._meta.concrete_fields)
        parts.append(row[start : start + width])
        start += width
    assignment = model_from_row(Assignment, parts[0])
    rater = model_from_row(Rater, parts[1])
    rater.study = model_from_row(Study, parts[2])
    assignment.rater = rater
    # The item's id column is NULL exactly when the assignment is a real pair (LEFT JOIN).
    has_item = parts[3][0] is not None
    assignment.quality_item = model_from_row(QualityCheckItem, parts[3]) if has_item else None
    return assignment


def access_assignment_for_rater(request: HttpRequest, token: str) -> Assignment:
    """The assignment behind a submit URL, if it belongs to the rater of this session.

    Another rater's token, an unknown token or no session all give the same 404, so a token
    reveals nothing about whether it exists. The rater and study come with it (select_related
    semantics, one statement).
    """
    assignment = _assignment_with_rater(token)
    if assignment is None or assignment.rater_id not in rater_session_ids(request):
        raise Http404("No such item.")
    return assignment
