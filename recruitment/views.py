"""The studio's Prolific page (study admins only): settings, token, publish / sync / pay.

A dry run renders its report on the page (nothing changes); a real step redirects back with
what it did (redirect after POST)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from completions.access import access_study_for_admin, study_admin_required
from completions.models import Study
from llm.keys import KeyUnavailable, can_store_keys

from .client import ProlificError
from .forms import ProlificSettingsForm, ProlificStepForm, ProlificTokenForm
from .selectors import outcome_counts, prolific_settings, rater_outcomes
from .services import (
    ProlificNotReady,
    Report,
    prolific_pay,
    prolific_publish,
    prolific_settings_for_update,
    prolific_sync,
    prolific_token_set,
)


def _page(request: HttpRequest, study: Study, **extra: object) -> HttpResponse:
    pay = prolific_settings(study=study)
    context = {
        "study": study,
        "pay": pay,
        "settings_form": ProlificSettingsForm(instance=pay),
        "token_form": ProlificTokenForm(),
        "can_store_keys": can_store_keys(),
        "counts": outcome_counts(rater_outcomes(study=study)),
        **extra,
    }
    status = 422 if any(getattr(f, "errors", None) for f in extra.values()) else 200
    return render(request, "recruitment/prolific.html", context, status=status)


@require_GET
@study_admin_required
def prolific_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _page(request, access_study_for_admin(request.user, slug))


@require_POST
@study_admin_required
def prolific_settings_save(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = ProlificSettingsForm(request.POST, instance=prolific_settings_for_update(study=study))
    if not form.is_valid():
        return _page(request, study, settings_form=form)
    form.save()
    messages.success(request, "Prolific settings saved.")
    return redirect("recruitment:prolific", slug=study.slug)


@require_POST
@study_admin_required
def prolific_token_save(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = ProlificTokenForm(request.POST)
    if not form.is_valid():
        return _page(request, study, token_form=form)
    try:
        prolific_token_set(study=study, token=form.cleaned_data["token"])
    except KeyUnavailable as exc:
        messages.error(request, str(exc))
    else:
        saved = "stored encrypted" if form.cleaned_data["token"] else "removed"
        messages.success(request, f"Prolific token {saved}.")
    return redirect("recruitment:prolific", slug=study.slug)


@require_POST
@study_admin_required
def prolific_run(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = ProlificStepForm(request.POST)
    if not form.is_valid():
        return HttpResponse("Unknown step.", status=400)
    step, dry_run = form.cleaned_data["step"], form.cleaned_data["dry_run"]
    try:
        report = _run(request, study, step, dry_run)
    except (ProlificError, ProlificNotReady, KeyUnavailable) as exc:
        messages.error(request, f"{step.capitalize()}: {exc}")
        return redirect("recruitment:prolific", slug=study.slug)
    if dry_run:
        return _page(request, study, report=report, step=step)
    summary = ", ".join(f"{k} {n}" for k, n in sorted(report.counts.items())) or "nothing to do"
    messages.success(request, f"{step.capitalize()} done: {summary}.")
    return redirect("recruitment:prolific", slug=study.slug)


def _run(request: HttpRequest, study: Study, step: str, dry_run: bool) -> Report:
    if step == "publish":
        base = request.build_absolute_uri("/")
        return prolific_publish(study=study, base_url=base, dry_run=dry_run)
    if step == "sync":
        return prolific_sync(study=study, dry_run=dry_run)
    return prolific_pay(study=study, dry_run=dry_run)
