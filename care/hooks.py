"""What care adds to the rater and writer pages (`core.care.Care`, registered in
`care/apps.py`), kept cheap: the round trip reads the study's settings and content notes from
this process's one-minute copies, and the time on task from a cookie (no query)."""

from __future__ import annotations

import functools
import time

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import get_script_prefix, reverse

from annotation.models import Assignment, Rater
from completions.models import Study
from core.care import ItemCare
from writing.models import Writer, Writing, WritingSettings

from .models import RaterCare, WriterCare
from .selectors import care_settings, content_notes, rater_care

# When this browser's current stretch of work began (seconds since the epoch); a break resets it.
SINCE_COOKIE = "heart_care_since"


def work_since(request: HttpRequest) -> int | None:
    try:
        return int(request.COOKIES.get(SINCE_COOKIE, ""))
    except ValueError:
        return None


def break_due(request: HttpRequest, minutes: int) -> tuple[bool, int | None]:
    """(whether a break is due, the start to remember when the browser had none)."""
    since = work_since(request)
    if since is None:
        return False, int(time.time())
    return bool(minutes) and time.time() - since >= minutes * 60, None


@functools.cache
def _url_parts(name: str, script_prefix: str) -> tuple[str, str]:
    """The text around the token of a URL (reverse() costs more than the page's other work)."""
    kw = "token" if name == "care:rater_skip" else "invite_token"
    prefix, _, suffix = reverse(name, kwargs={kw: "TOKEN"}).partition("TOKEN")
    return prefix, suffix


class PageCare:
    """The `core.care.Care` that care registers when Django starts (`care/apps.py`)."""

    def rater_gate(self, rater: Rater, /) -> HttpResponse | None:
        """Qualification first (when the study asks for it), the end page after failing it
        or stopping. No query unless qualification is on or the rater has finished."""
        settings = care_settings(study=rater.study)
        if not settings.qualification_enabled and rater.finished_at is None:
            return None
        care = rater_care(rater=rater)
        invite = rater.study.invite_token
        if care is not None and care.stopped_at is not None:
            return redirect("care:rater_stop", invite_token=invite)
        if care is not None and care.qualification == RaterCare.Qualification.FAILED:
            return redirect("care:qualify_result", invite_token=invite)
        if settings.qualification_enabled and (
            care is None or care.qualification != RaterCare.Qualification.PASSED
        ):
            return redirect("care:qualify", invite_token=invite)
        return None

    def rater_item(
        self, request: HttpRequest, study: Study, assignment: Assignment, /
    ) -> ItemCare | None:
        settings = care_settings(study=study)
        note = ""
        if assignment.pair is not None:
            note = content_notes(study=study).get(assignment.pair.context_id, "")
        due, since = break_due(request, settings.break_after_minutes)
        prefix, suffix = _url_parts("care:rater_skip", get_script_prefix())
        invite_prefix, _ = _url_parts("care:rater_stop", get_script_prefix())
        return ItemCare(
            note=note,
            skip_url=f"{prefix}{assignment.token}{suffix}",
            stop_url=f"{invite_prefix}{study.invite_token}/stop/",
            break_url=f"{invite_prefix}{study.invite_token}/break/",
            break_due=due,
            since=since,
        )

    def writer_stopped(self, writer: Writer, /) -> bool:
        return WriterCare.objects.filter(writer=writer).exists()

    def writer_item(
        self, request: HttpRequest, settings: WritingSettings, writing: Writing, /
    ) -> ItemCare | None:
        study = settings.study
        due, since = break_due(request, care_settings(study=study).break_after_minutes)
        invite = settings.invite_token
        return ItemCare(
            note=content_notes(study=study).get(writing.context_id, ""),
            skip_url=reverse("care:writer_skip", kwargs={"token": writing.token}),
            stop_url=reverse("care:writer_stop", kwargs={"invite_token": invite}),
            break_url=reverse("care:writer_break", kwargs={"invite_token": invite}),
            break_due=due,
            since=since,
        )

    def remember(self, response: HttpResponse, care: ItemCare | None, /) -> HttpResponse:
        """A new stretch of work's start, kept in the browser for twelve hours."""
        if care is not None and care.since is not None:
            response.set_cookie(
                SINCE_COOKIE, str(care.since), max_age=12 * 3600, samesite="Lax", httponly=True
            )
        return response
