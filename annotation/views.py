"""Rater pages (entry, consent, instructions, judging, done) and the rater-quality admin page.

Rater pages never show an id: the study is addressed by its invitation token, an item by its
assignment token, and the rater by the session.
"""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from completions.access import role

from .access import (
    access_assignment_for_rater,
    access_study_for_rater,
    rater_from_session,
    rater_login,
)
from .forms import ConsentForm, JudgmentForm, judgment_form_view
from .models import Assignment, Rater
from .quality import rubric_rows
from .selectors import item_view, quality_item_count, queue_plan
from .services import (
    SCALE,
    AssignmentNotFound,
    assignment_next,
    judgment_submit_and_next,
    rater_consent,
    rater_enter,
    rater_finish,
)

# An admin's exclusion decision: exclude, include, or follow the automatic flag again.
EXCLUSION_ACTIONS = {"exclude": True, "include": False, "auto": None}
SCALE_TEXT = [(str(value), label) for value, label in SCALE.items()]
REFUSED_NOTICE = (
    "Your previous answer arrived after the item had timed out and been completed "
    "by others, so it was not needed. Thank you; here is your next item."
)


def rater_required(view):
    """Rater pages after consent: the study from the link, the rater from the session."""

    @wraps(view)
    def wrapper(request: HttpRequest, invite_token: str) -> HttpResponse:
        study = access_study_for_rater(invite_token)
        rater = rater_from_session(request, study)
        if rater is None or rater.consented_at is None:
            return redirect("annotation:consent", invite_token=invite_token)
        return view(request, rater)

    wrapper.heart_role = "rater"
    return wrapper


@role("rater")
def entry(request: HttpRequest, invite_token: str) -> HttpResponse:
    """The invitation link; with Prolific's query parameters the same panel id resumes."""
    study = access_study_for_rater(invite_token)
    pid = request.GET.get("PROLIFIC_PID", "").strip()[:200]
    if pid:
        rater = rater_enter(
            study=study,
            external_id=pid,
            prolific_study_id=request.GET.get("STUDY_ID", ""),
            prolific_session_id=request.GET.get("SESSION_ID", ""),
        )
        rater_login(request, rater)
    else:
        rater = rater_from_session(request, study)
    if rater is None or rater.consented_at is None:
        return redirect("annotation:consent", invite_token=invite_token)
    return redirect("annotation:item", invite_token=invite_token)


@require_http_methods(["GET", "POST"])
@role("rater")
def consent(request: HttpRequest, invite_token: str) -> HttpResponse:
    study = access_study_for_rater(invite_token)
    form = ConsentForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        rater = rater_from_session(request, study) or rater_enter(study=study)
        rater_consent(rater=rater)
        rater_login(request, rater)
        return redirect("annotation:instructions", invite_token=invite_token)
    return render(request, "annotation/consent.html", {"study": study, "form": form})


@rater_required
def instructions(request: HttpRequest, rater: Rater) -> HttpResponse:
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


@rater_required
def item(request: HttpRequest, rater: Rater) -> HttpResponse:
    assignment = assignment_next(rater=rater)
    if assignment is None:
        return _to_done(request, rater)
    return _render_item(request, rater, assignment)


@require_POST
@role("rater")
def submit(request: HttpRequest, token: str) -> HttpResponse:
    assignment = access_assignment_for_rater(request, token)
    rater = assignment.rater
    form = JudgmentForm(request.POST, study=rater.study)
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
        )
    except AssignmentNotFound as exc:
        raise Http404("No such item.") from exc
    notice = REFUSED_NOTICE if result.refused else ""
    if not request.htmx:
        if notice:
            messages.info(request, notice)
        return redirect("annotation:item", invite_token=rater.study.invite_token)
    if following is None:
        return _to_done(request, rater)
    return _render_item(request, rater, following, notice=notice)


@rater_required
def done(request: HttpRequest, rater: Rater) -> HttpResponse:
    if assignment_next(rater=rater) is not None:
        return redirect("annotation:item", invite_token=rater.study.invite_token)
    rater_finish(rater=rater)
    study = rater.study
    redirect_url = ""
    if study.prolific_redirect_url:
        joiner = "&" if "?" in study.prolific_redirect_url else "?"
        redirect_url = f"{study.prolific_redirect_url}{joiner}cc={study.completion_code}"
    return render(request, "annotation/done.html", {"study": study, "redirect_url": redirect_url})


def _to_done(request: HttpRequest, rater: Rater) -> HttpResponse:
    url = reverse("annotation:done", kwargs={"invite_token": rater.study.invite_token})
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _render_item(
    request: HttpRequest,
    rater: Rater,
    assignment: Assignment,
    form: JudgmentForm | None = None,
    notice: str = "",
) -> HttpResponse:
    """The judging page (or its htmx fragment); `form` is a submitted form to show again."""
    study = rater.study
    total = queue_plan(
        study=study, rater=rater, n_quality_items=quality_item_count(study=study)
    ).total
    number = min(assignment.position + 1, total)
    item = item_view(assignment=assignment)
    chosen = form.cleaned_data.get("choice") if form is not None and form.is_valid() else None
    # Numbers go to the template as text: rendering an int runs Django's localization
    # machinery, a visible share of this page's CPU (it is served on every round trip).
    context = {
        "study": study,
        "item": item,
        "submit_url": reverse("annotation:submit", kwargs={"token": item.token}),
        "form": judgment_form_view(study=study, form=form),
        "number": str(number),
        "total": str(total),
        "percent": str(round(100 * (number - 1) / total)),
        "notice": notice,
        "scale": SCALE_TEXT,
        "chosen": str(chosen) if chosen is not None else None,
    }
    template = "annotation/item.html#item" if request.htmx else "annotation/item.html"
    return render(request, template, context)
