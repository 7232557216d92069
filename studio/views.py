"""Studio pages: studies, the study hub (checklist, recruit, status), material, pairs, raters.

Views are thin: a form validates, a service in studio.services writes, a selector
reads. Every page works without JavaScript; htmx only refreshes the import status in place.
"""

from __future__ import annotations

import csv
import itertools
from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.models import Rater
from annotation.quality import study_quality_update
from annotation.services.pairs import pairs_design
from completions.access import access_study_for_admin, study_admin_required
from completions.cohorts import cohort_links
from completions.csv_safe import safe_row
from completions.models import Study, StudyStatus
from completions.selectors.cohorts import cohort_rows
from core.roles import role
from ranking.record import policy_record
from ranking.selectors import snapshot_latest
from recruitment.selectors import outcome_counts, rater_outcomes, study_costs
from studio.formats import schema_text
from studio.material_formats import EXAMPLES, Detection
from studio.models import ImportJob, ImportKind

from . import selectors, services
from .forms import (
    DETECT,
    ExclusionForm,
    PairDesignForm,
    PlannerForm,
    StudyEditForm,
    StudyForm,
    UploadForm,
)

if TYPE_CHECKING:
    from core.middleware import AuthenticatedHttpRequest, HtmxHttpRequest
PROLIFIC_QUERY = (
    "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)
PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete"
OPEN_PAUSE_CLOSE = (StudyStatus.OPEN, StudyStatus.PAUSED, StudyStatus.CLOSED)
PROLIFIC_CSV = (
    "participant_id", "outcome", "action", "excluded_from_analysis", "reason", "minutes_worked",
    "bonus",
)  # fmt: skip
EXCLUSION_ACTIONS = {"exclude": True, "include": False, "auto": None}
STATUS_WORDS: dict[str, str] = {
    StudyStatus.DRAFT: "a draft: writers can work, raters are not let in yet",
    StudyStatus.OPEN: "opened: raters and writers can work",
    StudyStatus.PAUSED: "paused: no new work is handed out",
    StudyStatus.CLOSED: "closed: nobody can work on it",
}


@require_GET
@study_admin_required
def home(request: HttpRequest) -> HttpResponse:
    """`/` and `/studio/`: the admin's studies (anonymous visitors get the login page)."""
    studies = selectors.studies_listed(user=request.user)
    return render(request, "studio/home.html", {"studies": studies})


@require_http_methods(["GET", "POST"])
@study_admin_required
def study_new(request: HttpRequest) -> HttpResponse:
    form = StudyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            study = form.save()
            policy_record(study=study, by=request.user.get_username())
        messages.success(
            request,
            f"Study {study.name} created as a draft: it opens to raters once it has pairs. "
            "Next: upload its material.",
        )
        return redirect("studio:overview", slug=study.slug)
    return render(request, "studio/study_form.html", {"form": form, "study": None})


@require_http_methods(["GET", "POST"])
@study_admin_required
def study_edit(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = StudyEditForm(request.POST or None, instance=study)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            form.save()
            policy_record(study=study, by=request.user.get_username())  # the board's record
        messages.success(request, "Settings saved.")
        return redirect("studio:overview", slug=study.slug)
    return render(request, "studio/study_form.html", {"form": form, "study": study})


@require_GET
@study_admin_required
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    rows = selectors.study_checklist(study=study)
    return render(
        request,
        "studio/overview.html",
        {
            "study": study,
            "rows": rows,
            "next_row": selectors.next_step_row(rows),
            "recruit": _recruit_links(request, study),
            "statuses": [  # a draft is opened (or closed), never paused
                s
                for s in OPEN_PAUSE_CLOSE
                if s != study.status and not (study.status == "draft" and s == "paused")
            ],  # fmt: skip
            "has_pairs": any(row.key == "pairs" and row.done for row in rows),
            "costs": study_costs(study=study),
        },
    )


def _invite(request: HttpRequest, study: Study) -> str:
    return request.build_absolute_uri(
        reverse("annotation:entry", kwargs={"invite_token": study.invite_token})
    )


class RecruitLinks(TypedDict):
    """The study hub's recruit box: the entry links and Prolific's settings."""

    invite: str
    cohorts: list[tuple[str, str]]  # (label, entry URL) of each cohort but the crowd
    prolific: str
    code: str
    redirect: str
    redirect_set: bool


def _recruit_links(request: HttpRequest, study: Study) -> RecruitLinks:
    invite = _invite(request, study)
    redirect_base = study.prolific_redirect_url or PROLIFIC_COMPLETE
    joiner = "&" if "?" in redirect_base else "?"
    return {
        "invite": invite,
        "cohorts": cohort_links(study, invite)[1:],
        "prolific": f"{invite}?{PROLIFIC_QUERY}",
        "code": study.completion_code,
        "redirect": f"{redirect_base}{joiner}cc={study.completion_code}",
        "redirect_set": bool(study.prolific_redirect_url),
    }


@require_POST
@study_admin_required
def study_status(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    status = request.POST.get("status", "")
    if status not in OPEN_PAUSE_CLOSE:
        return HttpResponse("Unknown status.", status=400)
    try:
        services.study_set_status(study=study, status=status)
    except services.StatusRefused as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, f"Study {STATUS_WORDS[status]}.")
    return redirect("studio:overview", slug=study.slug)


# --- Material ----------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@study_admin_required
def material(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    remembered = f"studio-material-kind-{study.pk}"  # the last choice, kept for the next file
    initial = {"kind": request.session.get(remembered, DETECT)}
    form = UploadForm(request.POST or None, request.FILES or None, initial=initial)
    if request.method == "POST" and request.POST.get("kind") in {DETECT, *ImportKind.values}:
        request.session[remembered] = request.POST["kind"]
    if request.method == "POST" and form.is_valid():
        job = services.import_job_create(
            study=study,
            kind=form.cleaned_data["kind"],
            upload=form.cleaned_data["file"],
            user=request.user,
        )
        job.refresh_from_db()
        _announce_import(request, job, form.detection)
        return redirect("studio:material", slug=study.slug)
    return render(
        request,
        "studio/material.html",
        {
            "study": study,
            "form": form,
            "formats": [
                {"kind": kind, "label": label, "example": EXAMPLES[kind]}
                for kind, label in ImportKind.choices
            ],
            "jobs": selectors.import_jobs_recent(study=study),
            "rows": selectors.checklist_rows(
                selectors.study_checklist(study=study),
                "contexts",
                "systems",
                "completions",
                "human_completions",
            ),
        },
    )


def _announce_import(request: HttpRequest, job: ImportJob, detection: Detection | None) -> None:
    name = job.filename
    if detection is not None and detection.kind == job.kind:
        name = f"{job.filename} looks like {detection.words}"
    if job.status == "done":
        messages.success(request, f"{name}: imported (the import ran at once).")
    elif job.status == "failed":
        messages.error(request, f"{name}: {job.error}")
    else:
        messages.info(
            request, f"{name}: queued for a worker; its status below updates until it is done."
        )


@require_GET
@role("public")
def format_schema(request: HttpRequest, kind: str) -> HttpResponse:
    """`/formats/<kind>.schema.json`: the JSON Schema of a material format (public)."""
    text = schema_text(kind)
    if text is None:
        raise Http404("No such format.")
    return HttpResponse(text, content_type="application/schema+json; charset=utf-8")


@require_GET
@study_admin_required
def import_job(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """One import's status row (the htmx poll of the material page, or a page of its own)."""
    study = access_study_for_admin(request.user, slug)
    job = get_object_or_404(ImportJob.objects.defer("data"), study=study, pk=pk)
    template = "studio/material.html#job" if request.htmx else "studio/import_job.html"
    return render(request, template, {"study": study, "job": job})


# --- Pairs ---------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@study_admin_required
def pairs(request: HttpRequest, slug: str) -> HttpResponse:
    """GET previews the design the form describes; POST with "create" stores it."""
    study = access_study_for_admin(request.user, slug)
    initial = {
        "design": study.pair_design,
        "per_context": study.pairs_per_context,
        "seed": study.pair_seed,
    }
    data = request.POST if request.method == "POST" else (request.GET or None)
    form = PairDesignForm(data, initial=initial)
    if not form.is_bound:
        form = PairDesignForm(initial, initial=initial)
    preview = None
    if form.is_valid():
        options = {
            "design": form.cleaned_data["design"],
            "per_context": form.cleaned_data["per_context"],
            "seed": form.cleaned_data["seed"],
        }
        if request.method == "POST":
            report = pairs_design(study=study, **options)
            messages.success(request, "Pairs designed: " + "; ".join(report.lines()) + ".")
            return redirect("studio:pairs", slug=study.slug)
        preview = selectors.pairs_preview(study=study, **options)
    planner = PlannerForm(request.GET if "half_width" in request.GET else None)
    return render(
        request,
        "studio/pairs.html",
        {
            "study": study,
            "form": form,
            "preview": preview,
            "planner": planner,
            "plan": _design_plan(study, preview, planner),
            "design_status": selectors.design_status(study=study),
            "rows": selectors.study_checklist(study=study),
        },
    )


def _design_plan(
    study: Study, preview: selectors.PairPreview | None, planner: PlannerForm
) -> selectors.DesignPlan:
    wanted = planner.cleaned_data.get("half_width") if planner.is_valid() else None
    per_system_pair = (
        preview.per_system_pair
        if preview is not None and preview.new_pairs
        else selectors.study_system_pairs(study=study)
    )
    return selectors.design_plan(study=study, per_system_pair=per_system_pair, wanted=wanted)


# --- Raters: pay and clean ------------------------------------------------------------------


def _rater_quality(study: Study) -> dict[str, Any]:
    """The rater model the latest human board's refit stored (read, never fitted here)."""
    snapshot = snapshot_latest(study, judges="human", subset="all")
    section = snapshot.result.get("rater_quality") if snapshot is not None else None
    return {"rater_quality": section, "rater_quality_at": snapshot and snapshot.created_at}


@require_GET
@study_admin_required
def raters(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    outcomes = rater_outcomes(study=study)
    return render(
        request,
        "studio/raters.html",
        {
            "study": study,
            "rows": selectors.rater_rows(study=study, outcomes=outcomes),
            "outcome_counts": outcome_counts(outcomes),
            **_rater_quality(study),
            "cohort_rows": cohort_rows(
                study=study,
                people=Rater.objects.filter(study=study),
                base_url=_invite(request, study),
            ),
            "counts": selectors.rater_counts(study=study),
            "progress": selectors.checklist_rows(
                selectors.study_checklist(study=study), "judgments"
            )[0],
        },
    )


@require_POST
@study_admin_required
def rater_exclusion(request: AuthenticatedHttpRequest, slug: str, pseudonym: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    rater = get_object_or_404(Rater, study=study, pseudonym=pseudonym)
    form = ExclusionForm(request.POST)
    if not form.is_valid():
        return HttpResponse("Unknown action.", status=400)
    services.rater_exclusion_set(
        rater=rater,
        override=EXCLUSION_ACTIONS[form.cleaned_data["action"]],
        by=request.user,
        reason=form.cleaned_data["reason"],
    )
    state = "excluded" if rater.excluded else "included"
    messages.success(request, f"Rater {rater.pseudonym} is {state}.")
    return redirect("studio:raters", slug=study.slug)


@require_POST
@study_admin_required
def raters_reflag(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    flagged = study_quality_update(study=study)
    messages.info(request, f"Quality flags recomputed: {flagged} rater(s) flagged.")
    return redirect("studio:raters", slug=study.slug)


class _Echo:
    def write(self, value: str) -> str:
        return value


@require_GET
@study_admin_required
def raters_csv(request: HttpRequest, slug: str) -> StreamingHttpResponse:
    """Prolific's review: one row per panel rater with the outcome and the action it calls for
    (recruitment.selectors.rater_outcomes)."""
    study = access_study_for_admin(request.user, slug)
    writer = csv.writer(_Echo())
    rows = (
        [
            row.participant_id,
            row.outcome or "",
            row.action,
            "yes" if row.excluded_from_analysis else "no",
            row.reason,
            row.minutes_worked,
            f"{row.bonus:.2f}",
        ]
        for row in rater_outcomes(study=study)
        if row.participant_id
    )
    lines = itertools.chain(
        [writer.writerow(safe_row(list(PROLIFIC_CSV)))],
        (writer.writerow(safe_row(r)) for r in rows),
    )
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-prolific-raters.csv"'
    response["Cache-Control"] = "no-store"
    return response
