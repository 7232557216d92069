"""Rater access: who the rater is (from the session), and the only way to fetch their items.

A rater has no account. After entry the Django session holds, per study, the rater's primary
key; the browser only ever sees the opaque session cookie, never an id.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from completions.models import Study

from .models import Assignment, Rater

SESSION_KEY = "heart_raters"


def access_study_for_rater(invite_token: str) -> Study:
    """The active study behind an invitation link (404 for an unknown or closed study)."""
    return get_object_or_404(Study, invite_token=invite_token, is_active=True)


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


def access_assignment_for_rater(request: HttpRequest, token: str) -> Assignment:
    """The assignment behind a submit URL, if it belongs to the rater of this session.

    Another rater's token, an unknown token or no session all give the same 404, so a token
    reveals nothing about whether it exists.
    """
    assignment = (
        Assignment.objects.select_related("rater__study", "quality_item")
        .filter(token=token)
        .first()
    )
    if assignment is None or assignment.rater_id not in rater_session_ids(request):
        raise Http404("No such item.")
    return assignment
