"""Writer access: who the writer is (session or account) and the only way to fetch their work.

A crowd writer has no account: after entry the session holds, per study, their primary key; the
browser only sees opaque tokens. A logged-in account in the "writers" group is the same writer
in every sitting (the Writer row is tied to the account).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect

from completions.access import is_writer
from completions.models import Study
from core.roles import role

from .models import Writer, Writing, WritingSettings

SESSION_KEY = "heart_writers"


def access_settings_for_writer(invite_token: str) -> WritingSettings:
    """The writer settings behind a writer link (404: unknown, disabled, or closed study)."""
    return get_object_or_404(
        WritingSettings.objects.select_related("study").exclude(study__status="closed"),
        invite_token=invite_token,
        enabled=True,
    )


def writer_login(request: HttpRequest, writer: Writer) -> None:
    writers = dict(request.session.get(SESSION_KEY, {}))
    writers[str(writer.study_id)] = writer.pk
    request.session[SESSION_KEY] = writers


def writer_from_request(request: HttpRequest, study: Study) -> Writer | None:
    """The session's writer for this study, else the logged-in writer account's."""
    writer_id = request.session.get(SESSION_KEY, {}).get(str(study.pk))
    writer = None
    if writer_id is not None:
        writer = Writer.objects.filter(pk=writer_id, study=study).first()
    if writer is None and is_writer(request.user):
        writer = Writer.objects.filter(study=study, user=request.user).first()
    if writer is not None:
        writer.study = study
    return writer


def access_writing_for_writer(request: HttpRequest, token: str) -> Writing:
    """The writing behind a save/submit URL if it belongs to this session's writer (else 404)."""
    writing = Writing.objects.select_related("writer__study", "context").filter(token=token).first()
    if writing is None:
        raise Http404("No such text.")
    writer = writer_from_request(request, writing.writer.study)
    if writer is None or writer.pk != writing.writer_id:
        raise Http404("No such text.")
    return writing


def writer_required(
    view: Callable[..., HttpResponse],
) -> Callable[..., HttpResponse]:
    """Writer pages after consent: the study from the link, the writer from session/account."""

    @wraps(view)
    def wrapper(request: HttpRequest, invite_token: str, *args: Any, **kwargs: Any) -> HttpResponse:
        ws = access_settings_for_writer(invite_token)
        writer = writer_from_request(request, ws.study)
        if writer is None or writer.consented_at is None:
            return redirect("writing:consent", invite_token=invite_token)
        return view(request, writer, ws, *args, **kwargs)

    return role("writer")(wrapper)
