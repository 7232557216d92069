"""Care pages of raters and writers (qualification, skip, break, support, stop) and the
studio's care page. Rater and writer pages name nothing but opaque tokens, as elsewhere."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.access import (
    access_assignment_for_rater,
    access_study_for_rater,
    study_and_rater,
)
from annotation.models import Rater
from annotation.services import SCALE
from annotation.views import rater_required
from completions.models import Study
from core.roles import role
from writing.access import (
    access_settings_for_writer,
    access_writing_for_writer,
    writer_from_request,
    writer_required,
)
from writing.models import Writer, WritingSettings

from ..forms import QualificationAnswerForm, SkipForm
from ..hooks import SINCE_COOKIE
from ..models import Outcome, QualificationAnswer, QualificationItem, RaterCare, WriterCare
from ..selectors import (
    care_settings,
    qualification_step,
    rater_answers_kept,
    rater_care,
    skip_limit,
    support_links,
)
from ..services import (
    NothingToSkip,
    assignment_skip,
    outcome_code,
    qualification_answer,
    qualification_finish,
    rater_stop,
    rater_stop_and_withdraw,
    writer_stop,
    writing_skip,
)

SCALE_TEXT = [(str(value), label) for value, label in SCALE.items()]
PAGE_SIDE = {"a": "A", "b": "B"}


# --- Raters: qualification -----------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@rater_required
def qualify(request: HttpRequest, rater: Rater) -> HttpResponse:
    study = rater.study
    care = rater_care(rater=rater)
    if care is not None and care.stopped_at is not None:
        return redirect("care:rater_stop", invite_token=study.invite_token)
    if care is not None and care.qualification in ("passed", "failed"):
        return _after_qualification(care, study)
    step = qualification_step(rater=rater)
    if step.item is None:  # nothing (more) to answer, e.g. no items defined: decide now
        return _after_qualification(qualification_finish(rater=rater), study)
    form = QualificationAnswerForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and request.POST.get("number") != str(step.number):
        return redirect("care:qualify", invite_token=study.invite_token)  # an older page
    if request.method == "POST" and form.is_valid():
        result = qualification_answer(
            rater=rater, item=step.item, choice=form.cleaned_data["choice"]
        )
        if step.item.phase == QualificationItem.Phase.TRAINING:
            return redirect("care:qualify_feedback", invite_token=study.invite_token)
        return _after_qualification(result.care, study)
    context = {
        "study": study,
        "step": step,
        "item": step.item,
        "training": step.item.phase == QualificationItem.Phase.TRAINING,
        "form": form,
        "scale": SCALE_TEXT,
        "stop_url": _stop_url(study),
    }
    return render(request, "care/qualify.html", context, status=422 if form.errors else 200)


def _after_qualification(care: RaterCare, study: Study) -> HttpResponse:
    decided = care.qualification in ("passed", "failed")
    return redirect("care:qualify_result" if decided else "care:qualify", study.invite_token)


def _stop_url(study: Study) -> str:
    return reverse("care:rater_stop", kwargs={"invite_token": study.invite_token})


@rater_required
def qualify_feedback(request: HttpRequest, rater: Rater) -> HttpResponse:
    """After a training answer: was it the reference's choice, and why raters prefer it."""
    answer = (
        QualificationAnswer.objects.filter(
            rater=rater, item__phase=QualificationItem.Phase.TRAINING
        )
        .select_related("item")
        .order_by("-answered_at", "-pk")
        .first()
    )
    if answer is None:
        return redirect("care:qualify", invite_token=rater.study.invite_token)
    context = {
        "study": rater.study,
        "answer": answer,
        "better": PAGE_SIDE[answer.item.expected],
        "chosen": SCALE[answer.choice],
    }
    return render(request, "care/qualify_feedback.html", context)


@rater_required
def qualify_result(request: HttpRequest, rater: Rater) -> HttpResponse:
    """Passed: on to the real items. Failed: thanks, why, and the study's chosen outcome."""
    study = rater.study
    care = rater_care(rater=rater)
    if care is None or care.qualification not in ("passed", "failed"):
        return redirect("care:qualify", invite_token=study.invite_token)
    settings = care_settings(study=study)
    code = outcome_code(study=study, outcome=settings.fail_outcome, code=settings.screenout_code)
    context = {
        "study": study,
        "care": care,
        "passed": care.qualification == RaterCare.Qualification.PASSED,
        "needed": settings.pass_share,
        "code": code,
        "returns": settings.fail_outcome == Outcome.RETURN,
        "redirect_url": _prolific_url(study.prolific_redirect_url, code),
    }
    return render(request, "care/qualify_result.html", context)


def _prolific_url(base: str, code: str) -> str:
    if not (base and code):
        return ""
    return f"{base}{'&' if '?' in base else '?'}cc={code}"


# --- Raters: skip, break, support, stop ------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role("rater")
def rater_skip(request: HttpRequest, token: str) -> HttpResponse:
    """Skip this item, with an optional reason (a plain form: works without JavaScript)."""
    assignment = access_assignment_for_rater(request, token)
    study = assignment.rater.study
    form = SkipForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            assignment_skip(assignment=assignment, reason=form.cleaned_data["reason"])
        except NothingToSkip:
            messages.info(request, "That item was no longer yours to skip. Here is your item.")
            return redirect("annotation:item", invite_token=study.invite_token)
        care = rater_care(rater=assignment.rater)
        if care is None or care.skip_limit_at is None:  # else the item page ends the session
            messages.info(request, "Item skipped. It will not count against you. Here is another.")
        return redirect("annotation:item", invite_token=study.invite_token)
    context = {
        "study": study,
        "form": form,
        "kind": "rater",
        "back_url": _item_url(study),
        "skip_limit": skip_limit(study=study),
    }
    return render(request, "care/skip.html", context)


def _item_url(study: Study) -> str:
    return reverse("annotation:item", kwargs={"invite_token": study.invite_token})


@role("public")  # open to anyone with the link, as the consent page is
def rater_break(request: HttpRequest, invite_token: str) -> HttpResponse:
    """A pause page; the time on task starts again from here."""
    study = access_study_for_rater(invite_token)
    context = {"study": study, "continue_url": _item_url(study), "brand": "rater"}
    return _break_response(request, context)


def _break_response(request: HttpRequest, context: dict[str, Any]) -> HttpResponse:
    response = render(request, "care/break.html", context)
    response.delete_cookie(SINCE_COOKIE)  # the next item starts a new stretch
    return response


@role("public")  # open to anyone with the link, as the consent page is
def rater_support(request: HttpRequest, invite_token: str) -> HttpResponse:
    study, rater = study_and_rater(request, invite_token)
    settings = care_settings(study=study)
    context = {
        "study": study,
        "settings": settings,
        "links": support_links(settings),
        "stop_url": _stop_url(study) if rater and rater.consented_at else "",
        "brand": "rater",
    }
    return render(request, "care/support.html", context)


@require_http_methods(["GET", "POST"])
@rater_required
def rater_stop_view(request: HttpRequest, rater: Rater) -> HttpResponse:
    """Confirm, then stop (keeping the answers, or withdrawing them where the study allows
    it): the time worked is recorded and the study's outcome shown, with what became of the
    answers already given. A rater who stopped may still withdraw from this page."""
    study = rater.study
    settings = care_settings(study=study)
    care = rater_care(rater=rater)
    withdraw = request.POST.get("action") == "withdraw" and settings.allow_withdrawal
    if request.method == "POST" and withdraw and rater.withdrawn_at is None:
        care = rater_stop_and_withdraw(rater=rater)
        rater.refresh_from_db(fields=["withdrawn_at"])
    elif request.method == "POST" and (care is None or care.stopped_at is None):
        care = rater_stop(rater=rater)
    kept = rater_answers_kept(rater=rater)
    common = {
        "study": study,
        "kept": kept,
        "allow_withdrawal": settings.allow_withdrawal,
        "withdrawn_at": rater.withdrawn_at,
    }
    if care is None or care.stopped_at is None:
        return render(request, "care/stop.html", {**common, "back_url": _item_url(study)})
    code = outcome_code(study=study, outcome=care.stop_outcome, code=settings.stop_code)
    context = {
        **common,
        "minutes": round((care.seconds_worked or 0) / 60),
        "code": code,
        "returns": care.stop_outcome == Outcome.RETURN,
        "skip_limit": skip_limit(study=study) if care.skip_limit_at else None,
        "redirect_url": _prolific_url(study.prolific_redirect_url, code),
        "settings": settings,
        "links": support_links(settings),
    }
    return render(request, "care/stopped.html", context)


# --- Writers --------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role("writer")
def writer_skip(request: HttpRequest, token: str) -> HttpResponse:
    writing = access_writing_for_writer(request, token)
    ws = WritingSettings.objects.get(study_id=writing.writer.study_id)
    form = SkipForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            writing_skip(writing=writing, reason=form.cleaned_data["reason"])
            messages.info(request, "Conversation skipped. It will not count against you.")
        except NothingToSkip:
            messages.info(request, "That conversation was no longer yours to skip.")
        return redirect("writing:home", invite_token=ws.invite_token)
    context = {
        "ws": ws,
        "form": form,
        "kind": "writer",
        "back_url": reverse("writing:write", kwargs={"invite_token": ws.invite_token}),
    }
    return render(request, "care/skip.html", context)


@role("public")  # open to anyone with the link, as the consent page is
def writer_break(request: HttpRequest, invite_token: str) -> HttpResponse:
    ws = access_settings_for_writer(invite_token)
    url = reverse("writing:home", kwargs={"invite_token": ws.invite_token})
    return _break_response(request, {"ws": ws, "continue_url": url, "brand": "writer"})


@role("public")  # open to anyone with the link, as the consent page is
def writer_support(request: HttpRequest, invite_token: str) -> HttpResponse:
    ws = access_settings_for_writer(invite_token)
    writer = writer_from_request(request, ws.study)
    settings = care_settings(study=ws.study)
    stop = reverse("care:writer_stop", kwargs={"invite_token": ws.invite_token})
    context = {
        "ws": ws,
        "settings": settings,
        "links": support_links(settings),
        "stop_url": stop if writer and writer.consented_at else "",
        "brand": "writer",
    }
    return render(request, "care/support.html", context)


@require_http_methods(["GET", "POST"])
@writer_required
def writer_stop_view(request: HttpRequest, writer: Writer, ws: WritingSettings) -> HttpResponse:
    care = WriterCare.objects.filter(writer=writer).first()
    if request.method == "POST" and care is None:
        care = writer_stop(writer=writer)
    settings = care_settings(study=ws.study)
    if care is None:
        back = reverse("writing:home", kwargs={"invite_token": ws.invite_token})
        return render(request, "care/stop.html", {"ws": ws, "back_url": back})
    code = outcome_code(study=ws.study, outcome=care.stop_outcome, code=settings.stop_code)
    if care.stop_outcome == Outcome.COMPLETION:
        code = ws.completion_code
    context = {
        "ws": ws,
        "minutes": round(care.seconds_worked / 60),
        "code": code,
        "returns": care.stop_outcome == Outcome.RETURN,
        "redirect_url": _prolific_url(ws.prolific_redirect_url, code)
        if writer.source == "prolific"
        else "",
        "settings": settings,
        "links": support_links(settings),
    }
    return render(request, "care/stopped.html", context)
