"""The writers' review page for study admins (/studio/<slug>/writers/).

It lives at the top because it composes apps: the writing material (writing), the
pairs an accepted text joins (annotation) and each writer's win rate once judged (ranking).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Judgment
from annotation.services.pairs import pairs_design
from completions.access import access_study_for_admin, study_admin_required
from completions.models import Study
from completions.selectors.cohorts import cohort_rows
from ranking.selectors import judgments_frame
from studio.views import PROLIFIC_QUERY
from writing.behaviour import FLAG_TEXT
from writing.forms import RejectForm, WritingSettingsForm
from writing.models import Writing, WritingSettings
from writing.selectors import context_fill, writer_stats, writings_for_review
from writing.services import (
    ReviewError,
    WritingOff,
    writing_accept,
    writing_contexts_open,
    writing_reject,
    writing_settings,
)

if TYPE_CHECKING:
    from core.middleware import AuthenticatedHttpRequest


STATUS_FILTERS = ("pending", "accepted", "rejected", "")
REVIEW_PAGE = 200  # texts shown at once, oldest first: reviewing them brings up the next ones


def writer_win_rates(study: Study) -> dict[str, tuple[float, int]]:
    """Per human system: (wins + half the ties) / comparisons, over counted judgments."""
    frame = judgments_frame(study)
    rates: dict[str, list[float]] = {}
    for system_a, system_b, winner in frame[["system_a", "system_b", "winner"]].itertuples(
        index=False
    ):
        score_a = 1.0 if winner == "a" else 0.5 if winner == "tie" else 0.0
        rates.setdefault(system_a, []).append(score_a)
        rates.setdefault(system_b, []).append(1.0 - score_a)
    return {name: (sum(v) / len(v), len(v)) for name, v in rates.items()}


@require_http_methods(["GET", "POST"])
@study_admin_required
def writers(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    ws = writing_settings(study)
    if request.method == "POST":
        form = WritingSettingsForm(request.POST, instance=ws)
        if form.is_valid():
            form.save()
            messages.info(request, "Writer settings saved.")
            return redirect("writers:review", slug=slug)
    else:
        form = WritingSettingsForm(instance=ws)
    status = request.GET.get("status", "pending")
    status = status if status in STATUS_FILTERS else "pending"
    stats = writer_stats(study_id=study.pk)
    rates = writer_win_rates(study) if any(s.accepted for s in stats) else {}
    for row in stats:
        row.win_rate, row.n_judged = rates.get(row.system, (None, 0))
    link = request.build_absolute_uri(reverse("writing:entry", args=[ws.invite_token]))
    context = {
        "study": study,
        "ws": ws,
        "form": form,
        "writer_link": link,
        "cohort_rows": cohort_rows(study=study, people=study.writers.all(), base_url=link),
        "writer_prolific": f"{link}?{PROLIFIC_QUERY}",
        "writer_redirect": _completion_redirect(ws),
        "stats": stats,
        "writings": writings_for_review(study_id=study.pk, status=status)[:REVIEW_PAGE],
        "review_page": REVIEW_PAGE,
        "status": status,
        "status_filters": STATUS_FILTERS,
        "fill": context_fill(study_id=study.pk),
        "flag_text": FLAG_TEXT,
        "quota": study.writers_per_context,
    }
    return render(request, "studio/writers.html", context)


def _writing(study: Study, token: str) -> Writing:
    return get_object_or_404(Writing.objects.select_related("writer"), study=study, token=token)


@require_POST
@study_admin_required
def accept(request: AuthenticatedHttpRequest, slug: str, token: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    try:
        writing_accept(writing=_writing(study, token), by=request.user)
    except ReviewError as exc:
        messages.error(request, str(exc))
    else:
        # The accepted text joins the study's pairs at once (the design adds what is missing).
        report = pairs_design(study=study)
        messages.info(request, f"Accepted; {report.created} new pair(s) added.")
    return redirect(_back(request, slug))


@require_POST
@study_admin_required
def reject(request: AuthenticatedHttpRequest, slug: str, token: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    writing = _writing(study, token)
    form = RejectForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Please give a reason for the rejection.")
        return redirect(_back(request, slug))
    judged = bool(writing.completion_id) and (
        Judgment.objects.filter(pair__completion_a_id=writing.completion_id).exists()
        or Judgment.objects.filter(pair__completion_b_id=writing.completion_id).exists()
    )
    try:
        writing_reject(
            writing=writing, reason=form.cleaned_data["reason"], by=request.user, judged=judged
        )
    except ReviewError as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, "Rejected; the text is kept out of analysis and its place reopened.")
    return redirect(_back(request, slug))


@require_POST
@study_admin_required
def open_contexts(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    try:
        limit = int(request.POST.get("limit") or 0) or None
    except ValueError:
        limit = None
    try:
        opened = writing_contexts_open(study=study, limit=limit)
    except WritingOff as off:
        messages.error(request, str(off))
    else:
        messages.info(request, f"{opened} context(s) opened for writing.")
    return redirect("writers:review", slug=slug)


def _completion_redirect(ws: WritingSettings) -> str:
    """Where a finished writer is sent (Prolific's completion URL with the code), if set."""
    if not ws.prolific_redirect_url:
        return ""
    joiner = "&" if "?" in ws.prolific_redirect_url else "?"
    return f"{ws.prolific_redirect_url}{joiner}cc={ws.completion_code}"


def _back(request: HttpRequest, slug: str) -> str:
    status = request.POST.get("status", "pending")
    status = status if status in STATUS_FILTERS else "pending"
    return f"/studio/{slug}/writers/?status={status}"
