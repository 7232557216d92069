"""Writer pages: entry, consent, instructions, dashboard, the writing page, autosave, done.

Only opaque tokens appear in URLs: the writer link's invitation token and a text's token.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from completions import cohorts
from completions.access import is_writer
from core.care import CareForWriters, care_for_writers
from core.roles import role

from .access import (
    access_settings_for_writer,
    access_writing_for_writer,
    writer_from_request,
    writer_login,
    writer_required,
)
from .forms import BEHAVIOUR_FIELDS, ConsentForm
from .models import BEHAVIOUR_NOTICE, Writer, Writing, WritingSettings
from .selectors import writer_progress
from .services import (
    DRAFT_MAX_CHARS,
    ProlificWriterMismatch,
    too_long_message,
    writer_consent,
    writer_enter,
    writer_finish,
    writing_current,
    writing_draft_save,
    writing_limits,
    writing_next,
    writing_settings,
    writing_submit,
)
from .text_rules import band_note, limit_note, sentence_count, word_count


def _care() -> CareForWriters[Writer, WritingSettings, Writing]:
    """What care adds to these pages (registered by the care app; nothing without it)."""
    return care_for_writers()


REFUSED_NOTICE = (
    "Your reply arrived after this conversation's reservation had run out and other writers "
    "had completed it, so it was not needed. Thank you; your text is kept. Here is the next one."
)


@role("writer")
def entry(request: HttpRequest, invite_token: str) -> HttpResponse:
    """The writer link; Prolific's parameters or a writer account identify a returning writer."""
    ws = access_settings_for_writer(invite_token)
    study = ws.study
    try:
        cohort = cohorts.cohort_from_params(study, request.GET)
    except cohorts.CohortRefused as exc:
        return _cohort_refused(request, ws, exc)
    pid = request.GET.get("PROLIFIC_PID", "").strip()[:200]
    writer = None
    if pid:
        current = writer_from_request(request, study)
        try:
            writer = writer_enter(
                study=study,
                external_id=pid,
                prolific_study_id=request.GET.get("STUDY_ID", ""),
                prolific_session_id=request.GET.get("SESSION_ID", ""),
                same_browser=current is not None and current.external_id == pid,
                cohort=cohort,
            )
        except ProlificWriterMismatch:
            return render(request, "writing/prolific_taken.html", {"ws": ws}, status=403)
    elif is_writer(request.user):
        writer = writer_enter(study=study, user=request.user, cohort=cohort)
    else:
        writer = writer_from_request(request, study)
    if writer is not None:
        writer_login(request, writer)
    if writer is None or writer.consented_at is None:
        url = reverse("writing:consent", kwargs={"invite_token": invite_token})
        if writer is None and cohort != cohorts.DEFAULT:
            url += f"?{cohorts.PARAMETER}={cohorts.cohort_link_value(study, cohort)}"
        return redirect(url)
    return redirect("writing:home", invite_token=invite_token)


def _cohort_refused(request: HttpRequest, ws: WritingSettings, exc: Exception) -> HttpResponse:
    context = {"ws": ws, "reason": str(exc)}
    return render(request, "writing/cohort_refused.html", context, status=400)


def _entry_refused(ws: WritingSettings, request: HttpRequest) -> bool:
    """Prolific-only studies take no anonymous newcomers without a panel id."""
    return (
        ws.entry == "prolific"
        and writer_from_request(request, ws.study) is None
        and not is_writer(request.user)
    )


@require_http_methods(["GET", "POST"])
@role("writer")
def consent(request: HttpRequest, invite_token: str) -> HttpResponse:
    ws = access_settings_for_writer(invite_token)
    if _entry_refused(ws, request):
        return render(request, "writing/prolific_only.html", {"ws": ws}, status=403)
    try:
        cohort = cohorts.cohort_from_params(ws.study, request.GET)
    except cohorts.CohortRefused as exc:
        return _cohort_refused(request, ws, exc)
    form = ConsentForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        writer = writer_from_request(request, ws.study)
        if writer is None:
            user = request.user if is_writer(request.user) else None
            writer = writer_enter(study=ws.study, user=user, cohort=cohort)
        writer_consent(writer=writer)
        writer_login(request, writer)
        return redirect("writing:instructions", invite_token=invite_token)
    context = {"ws": ws, "form": form, "behaviour_notice": BEHAVIOUR_NOTICE}
    return render(request, "writing/consent.html", context)


@writer_required
def instructions(request: HttpRequest, writer: Writer, ws: WritingSettings) -> HttpResponse:
    return render(
        request,
        "writing/instructions.html",
        {"ws": ws, "limits": writing_limits(ws), "behaviour_notice": BEHAVIOUR_NOTICE},
    )


@writer_required
def home(request: HttpRequest, writer: Writer, ws: WritingSettings) -> HttpResponse:
    progress = writer_progress(writer=writer)
    return render(
        request,
        "writing/home.html",
        {"ws": ws, "writer": writer, "progress": progress, "study": ws.study},
    )


@writer_required
def write(request: HttpRequest, writer: Writer, ws: WritingSettings) -> HttpResponse:
    if _care().writer_stopped(writer):  # stopped early: no new conversation
        return redirect("care:writer_stop", invite_token=ws.invite_token)
    writing = writing_next(writer=writer)
    if writing is None:
        return redirect("writing:done", invite_token=ws.invite_token)
    errors = _refusal_shown(request, writing)
    return _render_write(request, writer, ws, writing, text=writing.text, errors=errors)


def _render_write(
    request: HttpRequest,
    writer: Writer,
    ws: WritingSettings,
    writing: Writing,
    *,
    text: str,
    errors: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    limits = writing_limits(ws)
    progress = writer_progress(writer=writer)
    context = {
        "ws": ws,
        "writing": writing,
        "turns": writing.context.turns,
        "text": text,
        "errors": errors or [],
        "limits": limits,
        "words": word_count(text),
        "sentences": sentence_count(text),
        "note": band_note(text, limits),
        "limit_note": limit_note(text, limits),
        "progress": progress,
        "number": progress.written + 1,
        "behaviour_fields": BEHAVIOUR_FIELDS,
        "saved_at": _millis(writing.draft_saved_at),
        "submit_url": reverse("writing:submit", kwargs={"token": writing.token}),
        "save_url": reverse("writing:save", kwargs={"token": writing.token}),
        "care": (care := _care().writer_item(request, ws, writing)),
    }
    response = render(request, "writing/write.html", context, status=status)
    return _care().remember(response, care)


def _millis(moment: datetime | None) -> str:
    return str(int(moment.timestamp() * 1000)) if moment else "0"


@require_POST
@role("writer")
def save(request: HttpRequest, token: str) -> JsonResponse:
    """Autosave of the draft (fetch from writer.js); renews the lease."""
    writing = access_writing_for_writer(request, token)
    text = request.POST.get("text", "")
    if len(text) > DRAFT_MAX_CHARS:  # refused whole, and not sent back
        return JsonResponse(
            {"saved": False, "error": too_long_message(text, DRAFT_MAX_CHARS)}, status=400
        )
    saved = writing_draft_save(writing=writing, text=text)
    return JsonResponse(
        {"saved": saved, "at": timezone.now().strftime("%H:%M:%S")}, status=200 if saved else 409
    )


@require_POST
@role("writer")
def submit(request: HttpRequest, token: str) -> HttpResponse:
    writing = access_writing_for_writer(request, token)
    writer = writing.writer
    ws = writing_settings(writer.study)
    text = request.POST.get("text", "")
    if len(text) > DRAFT_MAX_CHARS:  # refused whole: only the limit's worth is kept
        limit = writing_limits(ws).max_chars
        writing_draft_save(writing=writing, text=text[:limit])
        message = too_long_message(text, limit) + f" Only its first {limit:,} are shown."
        return _refused_write(request, ws, writing, [message])
    if request.POST.get("pause"):
        writing_draft_save(writing=writing, text=text)
        messages.info(request, "Your draft is saved; it will be waiting for you.")
        return redirect("writing:home", invite_token=ws.invite_token)
    raw = {name: request.POST.get(name, "") for name in BEHAVIOUR_FIELDS}
    result = writing_submit(writing=writing, text=text, raw_behaviour=raw)
    if result.errors:  # the text is kept as the draft (writing_submit)
        return _refused_write(request, ws, result.writing, result.errors)
    if result.refused:
        messages.info(request, REFUSED_NOTICE)
    return redirect("writing:home", invite_token=ws.invite_token)


# A refused submit's reasons wait in the session for the writing page it redirects to.
REFUSED_KEY = "heart_write_refused"


def _refused_write(
    request: HttpRequest, ws: WritingSettings, writing: Writing, errors: list[str]
) -> HttpResponse:
    """Redirect after a refused submit (so Back or a reload never posts it again); the
    writing page shows the reasons beside the kept text."""
    request.session[REFUSED_KEY] = {"token": writing.token, "errors": errors}
    return redirect("writing:write", invite_token=ws.invite_token)


def _refusal_shown(request: HttpRequest, writing: Writing) -> list[str]:
    refused = request.session.pop(REFUSED_KEY, None)
    if not refused or refused.get("token") != writing.token:
        return []
    return [str(error) for error in refused.get("errors", [])]


@writer_required
def done(request: HttpRequest, writer: Writer, ws: WritingSettings) -> HttpResponse:
    # The writer may stop whenever they like; an unfinished draft stays theirs until its
    # lease runs out, then its place returns to the pool.
    writer_finish(writer=writer)
    redirect_url = ""
    if ws.prolific_redirect_url and writer.source == "prolific":
        joiner = "&" if "?" in ws.prolific_redirect_url else "?"
        redirect_url = f"{ws.prolific_redirect_url}{joiner}cc={ws.completion_code}"
    progress = writer_progress(writer=writer)
    context = {
        "ws": ws,
        "writer": writer,
        "progress": progress,
        "redirect_url": redirect_url,
        "has_draft": writing_current(writer=writer) is not None,
    }
    return render(request, "writing/done.html", context)
