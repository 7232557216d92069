"""The quality-checks page: each check with its pass rate, add, edit, retire, preview, and the
bots the study's gates are held to. Thin: forms validate, annotation's services write."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.bots import GOLD_BAR
from annotation.models import QualityCheckItem
from annotation.services.checks import (
    quality_checks_wanted,
    quality_item_retire,
    quality_item_save,
    quality_items_seed_from_study,
)
from completions.access import access_study_for_admin, study_admin_required

from . import selectors
from .forms import QualityCheckForm


@require_GET
@study_admin_required
def checks_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    return render(
        request,
        "studio/checks.html",
        {
            "study": study,
            "checks": selectors.check_rows(study=study),
            "table": selectors.bot_table(study=study),
            "gold_bar": GOLD_BAR,
            "wanted": quality_checks_wanted(study=study),
        },
    )


@require_http_methods(["GET", "POST"])
@study_admin_required
def check_edit(request: HttpRequest, slug: str, pk: int | None = None) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    item = get_object_or_404(QualityCheckItem, study=study, pk=pk) if pk else None
    form = QualityCheckForm(request.POST or None, instance=item)
    if request.method == "POST" and form.is_valid():
        form.instance.study = study
        quality_item_save(item=form.save(commit=False))
        messages.success(request, "Check saved." if item else "Check added.")
        return redirect("studio:checks:page", slug=study.slug)
    status = 422 if form.errors else 200
    context = {"study": study, "form": form, "item": item}
    return render(request, "studio/check_form.html", context, status=status)


@require_POST
@study_admin_required
def check_retire(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    item = get_object_or_404(QualityCheckItem, study=study, pk=pk)
    retired = request.POST.get("action") != "restore"
    quality_item_retire(item=item, retired=retired)
    messages.success(
        request,
        "Check retired: raters get it no more; its answers stay."
        if retired
        else "Check back in use.",
    )
    return redirect("studio:checks:page", slug=study.slug)


@require_POST
@study_admin_required
def checks_make(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    made = quality_items_seed_from_study(study=study)
    if made:
        messages.success(request, f"{len(made)} checks made from the study's conversations.")
    else:
        messages.error(
            request,
            "No check could be made: no conversation of the study has a reply with a known "
            "text yet. Upload contexts and completions first.",
        )
    return redirect("studio:checks:page", slug=study.slug)


@require_GET
@study_admin_required
def check_preview(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The check as a rater's page shows it (no note, no system, no expected answer)."""
    study = access_study_for_admin(request.user, slug)
    item = get_object_or_404(QualityCheckItem, study=study, pk=pk)
    return render(request, "studio/check_preview.html", {"study": study, "item": item})
