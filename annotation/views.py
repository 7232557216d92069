"""Rater pages (entry, consent, instructions, judging, done) and the rater-quality admin page.

Rater pages never show an id: the study is addressed by its invitation token, an item by its
assignment token, and the rater by a signed cookie of opaque tokens (annotation/access.py).
Every answer here is `Cache-Control: no-store` (core.middleware), so the back button and a
second tab ask the server again instead of showing an item that was already answered.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.template import engines
from django.urls import get_script_prefix, reverse
from django.utils.functional import SimpleLazyObject
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_ratelimit.core import is_ratelimited

from completions import cohorts
from completions.models import Study, StudyStatus
from core.care import CareForRaters, PanelForRaters, care_for_raters, panel_for_raters
from core.roles import role

from .access import (
    access_assignment_for_rater,
    pending_prolific_ids,
    pending_prolific_remember,
    rater_login,
    study_and_rater,
)
from .forms import ConsentForm, JudgmentForm, judgment_form_view
from .models import Assignment, Rater
from .quality import rubric_rows
from .selectors import item_view, quality_item_count, queue_plan, rater_queue_state
from .services import (
    LEASE_RAN_OUT,
    PAIR_FULL,
    SCALE,
    STOPPED,
    AssignmentNotFound,
    ClaimBusy,
    ProlificMismatch,
    StudyFull,
    assignment_keepalive,
    assignment_next,
    judgment_submit_and_next,
    prolific_rater_resumable,
    rater_finish,
    rater_join,
)

if TYPE_CHECKING:
    from core.middleware import HtmxHttpRequest

# An admin's exclusion decision: exclude, include, or follow the automatic flag again.
EXCLUSION_ACTIONS = {"exclude": True, "include": False, "auto": None}
SCALE_TEXT = [(str(value), label) for value, label in SCALE.items()]
# A refused answer says why it was refused (annotation.services.common: the refusals).
REFUSED_NOTICES = {
    LEASE_RAN_OUT: (
        "Your previous answer arrived after that item's reservation had run out, and other "
        "raters completed it meanwhile, so it was not needed. Thank you; here is your next item."
    ),
    PAIR_FULL: (
        "Your previous answer was not needed: that item already had all the answers it needs. "
        "Thank you; here is your next item."
    ),
}
STOPPED_NOTICE = "Your session ended when you pressed Stop; this answer was not stored."
ALREADY_NOTICE = (
    "That item had already been answered (perhaps in another tab, or from an older page); "
    "your first answer is the one kept. Here is your next item."
)


def rater_required(
    view: Callable[[HtmxHttpRequest, Rater], HttpResponse],
) -> Callable[[HtmxHttpRequest, str], HttpResponse]:
    """Rater pages after consent: the study from the link, the rater from the cookie."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, invite_token: str) -> HttpResponse:
        _, rater = study_and_rater(request, invite_token)
        if rater is None or rater.consented_at is None:
            return redirect("annotation:consent", invite_token=invite_token)
        return view(request, rater)

    return role("rater")(wrapper)


# What every rater page's title ends with (templates/annotation/_rater_base.html says the same).
RATER_TITLE_SUFFIX = " · Response comparison study"
# The notice a rater gets when the study hands out no new work, by status.
NOT_OPEN_NOTICES: dict[str, str] = {
    StudyStatus.DRAFT: "draft",
    StudyStatus.PAUSED: "paused",
    StudyStatus.CLOSED: "closed",
}


def _limited(request: HtmxHttpRequest, group: str, rate: str) -> bool:
    """Per-client rate limit (django-ratelimit on the shared cache; fails open without it)."""
    # django-ratelimit ships no annotations: its answer is a bool.
    limited: bool = is_ratelimited(request, group=group, key="ip", rate=rate, increment=True)
    return limited


def _notice_page(
    request: HtmxHttpRequest, kind: str, study: Study, status: int = 200, **extra: object
) -> HttpResponse:
    """One template for every "you cannot continue" page: closed, paused, full, ..."""
    context = {"study": study, "kind": kind, **extra}
    return render(request, "annotation/notice.html", context, status=status)


# Seconds a rater waits before the "one moment" page (ClaimBusy) asks again by itself.
BUSY_RETRY_SECONDS = 2


def _busy_page(request: HtmxHttpRequest, study: Study) -> HttpResponse:
    """Every free item is held by other raters' claims for a moment: try again, lose nothing."""
    response = _notice_page(request, "busy", study, status=503, retry_after=BUSY_RETRY_SECONDS)
    response["Retry-After"] = str(BUSY_RETRY_SECONDS)
    return response


def _study_gate(request: HtmxHttpRequest, study: Study) -> HttpResponse | None:
    """New work only while the study is open."""
    if study.status in NOT_OPEN_NOTICES:
        return _notice_page(request, NOT_OPEN_NOTICES[study.status], study)
    return None


@role("rater")
def entry(request: HtmxHttpRequest, invite_token: str) -> HttpResponse:
    """The invitation link. With Prolific's parameters a participant resumes only from the same
    Prolific session (same STUDY_ID and SESSION_ID) or the same browser; a new participant's
    ids are kept in a signed cookie until they consent (no rater is created by a GET).
    """
    study, rater = study_and_rater(request, invite_token)
    if _limited(request, "rater-entry", settings.RATER_ENTRY_RATE):
        return _notice_page(request, "limited", study, status=429)
    try:
        cohort = cohorts.cohort_from_params(study, request.GET)
    except cohorts.CohortRefused as exc:
        return _notice_page(request, "cohort", study, status=400, reason=str(exc))
    pid = request.GET.get("PROLIFIC_PID", "").strip()[:200]
    prolific = {
        "pid": pid,
        "study_id": request.GET.get("STUDY_ID", "").strip()[:200],
        "session_id": request.GET.get("SESSION_ID", "").strip()[:200],
    }
    if rater is not None and (not pid or rater.external_id == pid):
        target = "annotation:item" if rater.consented_at else "annotation:consent"
        return redirect(target, invite_token=invite_token)
    if not pid:
        if study.rater_entry == "prolific":
            return _notice_page(request, "prolific-only", study, status=403)
        return _study_gate(request, study) or _to_consent(study, cohort)
    try:
        returning = prolific_rater_resumable(
            study=study,
            external_id=pid,
            prolific_study_id=prolific["study_id"],
            prolific_session_id=prolific["session_id"],
        )
    except ProlificMismatch:
        return _notice_page(request, "prolific-taken", study, status=403)
    if returning is not None:
        return rater_login(request, redirect("annotation:item", invite_token), returning)
    if gate := _study_gate(request, study):
        return gate
    return pending_prolific_remember(_to_consent(study, cohort), study, **prolific)


def _to_consent(study: Study, cohort: str) -> HttpResponse:
    """The consent page, carrying a cohort other than the default in its signed parameter."""
    url = _rater_url("consent", study)
    if cohort != cohorts.DEFAULT:
        url += f"?{cohorts.PARAMETER}={cohorts.cohort_link_value(study, cohort)}"
    return redirect(url)


@require_http_methods(["GET", "POST"])
@role("rater")
def consent(request: HtmxHttpRequest, invite_token: str) -> HttpResponse:
    """Consent creates the rater: rate-limited per client, within the study's cap."""
    study, rater = study_and_rater(request, invite_token)
    if rater is not None and rater.consented_at is not None:
        return redirect("annotation:instructions", invite_token=invite_token)
    prolific = pending_prolific_ids(request, study)
    if study.rater_entry == "prolific" and prolific is None and rater is None:
        return _notice_page(request, "prolific-only", study, status=403)
    if gate := _study_gate(request, study):
        return gate
    try:
        cohort = cohorts.cohort_from_params(study, request.GET)
    except cohorts.CohortRefused as exc:
        return _notice_page(request, "cohort", study, status=400, reason=str(exc))
    form = ConsentForm(request.POST if request.method == "POST" else None)
    if request.method != "POST" or not form.is_valid():
        return render(request, "annotation/consent.html", {"study": study, "form": form})
    if _limited(request, "rater-create", settings.RATER_CREATE_RATE):
        return _notice_page(request, "limited", study, status=429)
    try:
        rater = rater_join(study=study, prolific=prolific, cohort=cohort)
    except StudyFull:
        return _notice_page(request, "full", study, status=503)
    except ProlificMismatch:
        return _notice_page(request, "prolific-taken", study, status=403)
    return rater_login(request, redirect("annotation:instructions", invite_token), rater)


@rater_required
def instructions(request: HtmxHttpRequest, rater: Rater) -> HttpResponse:
    study = rater.study
    return render(
        request,
        "annotation/instructions.html",
        {
            "study": study,
            "scale": SCALE.values(),
            "rubric": rubric_rows() if study.show_rubric else None,
        },
    )


def _may_finish(study: Study) -> bool:
    """Paused with `pause_lets_finish`: raters holding an item may still answer it."""
    return study.status == StudyStatus.PAUSED and study.pause_lets_finish


@rater_required
def item(request: HtmxHttpRequest, rater: Rater) -> HttpResponse:
    study = rater.study
    # Qualification first (core.care); nothing after failing or stopping.
    if gate := _care().rater_gate(rater):
        return gate
    # Returned or timed out on Prolific: the sync that heard it finished the rater, so a rater
    # still working (the round trip) is never asked about and costs no query.
    if rater.finished_at is not None and (left := _panel().rater_left(rater)):
        return _notice_page(request, "left", study, left=left)
    if study.status in (StudyStatus.CLOSED, StudyStatus.DRAFT):
        return _notice_page(request, NOT_OPEN_NOTICES[study.status], study)
    allow_new = study.is_open
    try:
        assignment = assignment_next(rater=rater, allow_new=allow_new)
    except ClaimBusy:
        return _busy_page(request, study)
    if assignment is None and not allow_new:
        return _notice_page(request, "paused", study)
    if assignment is None:
        return _to_done(request, rater)
    if not allow_new and not _may_finish(study):
        return _notice_page(request, "paused", study)
    return _render_item(request, rater, assignment)


def _submit_refused(request: HtmxHttpRequest, rater: Rater, assignment: Assignment) -> str | None:
    """Why a closed or paused study takes no answer for this item (None: it may)."""
    study = rater.study
    if study.status in (StudyStatus.CLOSED, StudyStatus.DRAFT):
        return NOT_OPEN_NOTICES[study.status]
    if study.status == StudyStatus.PAUSED:
        holds = assignment.status == Assignment.Status.LEASED
        if not (_may_finish(study) and holds):
            return "paused"
    return None


@require_POST
@role("rater")
def submit(request: HtmxHttpRequest, token: str) -> HttpResponse:
    assignment = access_assignment_for_rater(request, token)
    rater = assignment.rater
    study = rater.study
    if assignment.status == Assignment.Status.RELEASED:
        return _stopped_refusal(request, study)
    if kind := _submit_refused(request, rater, assignment):
        if request.htmx:  # the whole page becomes the notice: nothing of the item stays
            return HttpResponseClientRedirect(_rater_url("item", study))
        return _notice_page(request, kind, study, status=409)
    form = JudgmentForm(request.POST, study=study)
    if not form.is_valid():
        assignment = Assignment.objects.select_related(
            "pair__context", "pair__completion_a", "pair__completion_b", "quality_item"
        ).get(pk=assignment.pk)
        return _render_item(request, rater, assignment, form)
    try:
        result, following = judgment_submit_and_next(
            rater=rater,
            assignment=assignment,
            choice=form.cleaned_data["choice"],
            axes=form.axis_marks(),
            rationale=form.cleaned_data["rationale"],
            allow_new=study.is_open,
        )
    except AssignmentNotFound as exc:
        raise Http404("No such item.") from exc
    except ClaimBusy:  # the answer is stored; the next item comes from the item page
        if request.htmx:
            return HttpResponseClientRedirect(_rater_url("item", study))
        return redirect("annotation:item", invite_token=study.invite_token)
    if result.refusal == STOPPED:  # the rater stopped while this answer was on its way
        return _stopped_refusal(request, study)
    notice = (
        REFUSED_NOTICES.get(result.refusal, REFUSED_NOTICES[PAIR_FULL]) if result.refused else ""
    )
    notice = notice or ("" if result.created else ALREADY_NOTICE)
    if not request.htmx:
        if notice:
            messages.info(request, notice)
        return redirect("annotation:item", invite_token=study.invite_token)
    if following is None and not study.is_open:
        return HttpResponseClientRedirect(_rater_url("item", study))
    if following is None:
        return _to_done(request, rater)
    return _render_item(request, rater, following, notice=notice)


def _stopped_refusal(request: HtmxHttpRequest, study: Study) -> HttpResponse:
    """The item was released when the rater stopped: say that the answer was not stored, on
    the page the rater now belongs on (the item page sends a stopped rater to the stop page)."""
    messages.warning(request, STOPPED_NOTICE)
    if request.htmx:
        return HttpResponseClientRedirect(_rater_url("item", study))
    return redirect("annotation:item", invite_token=study.invite_token)


@require_POST
@role("rater")
def heartbeat(request: HtmxHttpRequest, token: str) -> HttpResponse:
    """The open judging page says the rater is still there: keep their item reserved."""
    assignment = access_assignment_for_rater(request, token)
    held = assignment_keepalive(assignment=assignment)
    return HttpResponse(status=204 if held else 409)


@rater_required
def done(request: HtmxHttpRequest, rater: Rater) -> HttpResponse:
    """The completion code, for raters who did work; never for an empty queue."""
    study = rater.study
    if gate := _care().rater_gate(rater):
        return gate
    if left := _panel().rater_left(rater):  # returned or timed out on Prolific: no code
        return _notice_page(request, "left", study, left=left)
    if study.status in (StudyStatus.PAUSED, StudyStatus.DRAFT):
        return _notice_page(request, NOT_OPEN_NOTICES[study.status], study)
    try:
        if study.is_open and assignment_next(rater=rater) is not None:
            return redirect("annotation:item", invite_token=study.invite_token)
    except ClaimBusy:
        return _busy_page(request, study)
    progress = rater_queue_state(rater=rater).progress
    if progress.done_real == 0:
        # Nothing judged: no code (it would pay for nothing). Prolific asks such participants
        # to "return" the study, which frees their place without a payment.
        if rater.finished_at is None:
            rater_finish(rater=rater)
        return _notice_page(request, "no-items", study)
    rater_finish(rater=rater)
    plan = queue_plan(study=study, rater=rater, n_quality_items=quality_item_count(study=study))
    redirect_url = ""
    if study.prolific_redirect_url:
        joiner = "&" if "?" in study.prolific_redirect_url else "?"
        redirect_url = f"{study.prolific_redirect_url}{joiner}cc={study.completion_code}"
    context = {
        "study": study,
        "redirect_url": redirect_url,
        "complete": progress.done_real >= plan.n_real,
        "closed": study.status == StudyStatus.CLOSED,
    }
    return render(request, "annotation/done.html", context)


def _care() -> CareForRaters[Rater, Study, Assignment]:
    """What care adds to these pages (registered by the care app; nothing without it)."""
    return care_for_raters()


def _panel() -> PanelForRaters[Rater]:
    """What the panel the rater came from says (registered by recruitment; nothing without)."""
    return panel_for_raters()


def _item_url(name: str, token: str) -> str:
    """reverse() of an item's URL, which costs more than the rest of the page's URLs work."""
    prefix, suffix = _item_url_parts(name, get_script_prefix())
    return f"{prefix}{token}{suffix}"


@functools.cache
def _item_url_parts(name: str, script_prefix: str) -> tuple[str, str]:
    prefix, _, suffix = reverse(f"annotation:{name}", kwargs={"token": "TOKEN"}).partition("TOKEN")
    return prefix, suffix


def _rater_url(name: str, study: Study) -> str:
    return reverse(f"annotation:{name}", kwargs={"invite_token": study.invite_token})


def _to_done(request: HtmxHttpRequest, rater: Rater) -> HttpResponse:
    url = _rater_url("done", rater.study)
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _render_item(
    request: HtmxHttpRequest,
    rater: Rater,
    assignment: Assignment,
    form: JudgmentForm | None = None,
    notice: str = "",
    status: int = 200,
) -> HttpResponse:
    """The judging page (or its htmx fragment); `form` is a submitted form to show again."""
    study = rater.study
    total = queue_plan(
        study=study, rater=rater, n_quality_items=quality_item_count(study=study)
    ).total
    number = min(assignment.position + 1, total)
    item = item_view(assignment=assignment)
    chosen = form.cleaned_data.get("choice") if form is not None and form.is_valid() else None
    if chosen is None and form is not None and form.is_bound:
        chosen = form.data.get("choice") if form.data.get("choice") in SCALE_KEYS else None
    # Numbers go to the template as text: rendering an int runs Django's localization
    # machinery, a visible share of this page's CPU (it is served on every round trip).
    context = {
        "study": study,
        "item": item,
        "submit_url": _item_url("submit", item.token),
        "heartbeat_url": _item_url("heartbeat", item.token),
        "form": judgment_form_view(study=study, form=form),
        "number": str(number),
        "total": str(total),
        "percent": str(round(100 * (number - 1) / total)),
        "notice": notice,
        "scale": SCALE_TEXT,
        "chosen": str(chosen) if chosen is not None else None,
        "rationale_max": str(study.rationale_max_chars),
        "care": (care := _care().rater_item(request, study, assignment)),
    }
    html = ITEM_FRAGMENT.render(context, request)
    if request.htmx:
        # A <title> at the fragment's top level becomes the tab's title (htmx takes it out):
        # the tab follows the item, as the full page's title does (annotation/item.html).
        title = f"<title>Item {number} of {total}{RATER_TITLE_SUFFIX}</title>"
        return HttpResponse(title + html, status=status)  # the full item page set the timer
    context["item_html"] = mark_safe(html)  # noqa: S308 - Jinja2 escaped every value (autoescape)
    response = render(request, "annotation/item.html", context, status=status)
    return _care().remember(response, care)


# The judging item, rendered by Jinja2 (settings.TEMPLATES): the round trip's page.
ITEM_FRAGMENT = SimpleLazyObject(
    lambda: engines["jinja2"].get_template("annotation/item_fragment.jinja")
)


SCALE_KEYS = {str(value) for value in SCALE}
