"""The studio's care page: settings, qualification items and results, content notes, and
skips, stops and time worked per context and per person (pseudonyms only)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from completions.access import access_study_for_admin, study_admin_required
from completions.models import Study

from ..forms import CareSettingsForm, ContentNoteForm, QualificationItemForm
from ..models import CareSettings, ContentNote
from ..selectors import (
    qualification_summary,
    rater_time_rows,
    skips_per_context,
    writer_time_rows,
)
from ..services import care_settings_save, content_note_set, qualification_items_seed_from_rubric


@require_http_methods(["GET", "POST"])
@study_admin_required
def care_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    instance = CareSettings.objects.filter(study=study).first() or CareSettings(study=study)
    form = CareSettingsForm(request.POST if request.method == "POST" else None, instance=instance)
    if request.method == "POST" and form.is_valid():
        care_settings_save(settings=form.save(commit=False))
        messages.success(request, "Care settings saved.")
        return redirect("care:studio", slug=study.slug)
    return _render(request, study, form=form, status=422 if form.errors else 200)


def _render(
    request: HttpRequest,
    study: Study,
    *,
    form: CareSettingsForm | None = None,
    item_form: QualificationItemForm | None = None,
    note_form: ContentNoteForm | None = None,
    status: int = 200,
) -> HttpResponse:
    instance = CareSettings.objects.filter(study=study).first() or CareSettings(study=study)
    context = {
        "study": study,
        "active": "care",
        "form": form or CareSettingsForm(instance=instance),
        "item_form": item_form or QualificationItemForm(),
        "note_form": note_form or ContentNoteForm(),
        "qualification": qualification_summary(study=study),
        "skips": skips_per_context(study=study),
        "people": [*rater_time_rows(study=study), *writer_time_rows(study=study)],
        "notes": ContentNote.objects.filter(context__study=study).select_related("context"),
    }
    return render(request, "care/studio.html", context, status=status)


@require_POST
@study_admin_required
def note_set(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = ContentNoteForm(request.POST, study=study)
    if not form.is_valid():
        return _render(request, study, note_form=form, status=422)
    context = form.cleaned_data["context"]
    content_note_set(context=context, text=form.cleaned_data["text"], by=request.user)
    messages.success(request, f"Content note of {context.external_id} saved.")
    return redirect("care:studio", slug=study.slug)


@require_POST
@study_admin_required
def item_add(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = QualificationItemForm(request.POST)
    if not form.is_valid():
        return _render(request, study, item_form=form, status=422)
    form.instance.study = study
    form.instance.position = study.qualification_items.count()
    form.save()
    messages.success(request, "Qualification item added.")
    return redirect("care:studio", slug=study.slug)


@require_POST
@study_admin_required
def items_seed(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    created = qualification_items_seed_from_rubric(study=study)
    messages.success(request, f"{len(created)} qualification item(s) added from the rubric.")
    return redirect("care:studio", slug=study.slug)
