"""The leaderboard by cohort: each cohort's board and agreement, and agreement between them."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from completions.access import access_study_for_admin, study_admin_required

from ..models import Preset, SubsetFilter
from ..services import cohorts as cohort_services


class CohortFilterForm(forms.Form):
    cohort = forms.ChoiceField(required=False, label="Cohort")
    subset = forms.ChoiceField(choices=SubsetFilter.choices, required=False, label="Contexts")
    preset = forms.ChoiceField(choices=Preset.choices, required=False, label="Choices")

    def __init__(self, *args: Any, labels: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cohort = self.fields["cohort"]
        assert isinstance(cohort, forms.ChoiceField)
        cohort.choices = [("", "All cohorts"), *[(x, x) for x in labels]]


@require_GET
@study_admin_required
def cohorts_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    labels = cohort_services.cohort_labels(study)
    form = CohortFilterForm(request.GET, labels=labels)
    if not form.is_valid():
        return HttpResponseBadRequest("Unknown cohort or filter value.")
    chosen = form.cleaned_data["cohort"]
    analysis = cohort_services.cohort_analysis(
        study,
        subset=form.cleaned_data["subset"] or SubsetFilter.ALL,
        preset=form.cleaned_data["preset"] or Preset.DEFAULT,
    )
    entries = [e for e in analysis["cohorts"] if not chosen or e["cohort"] == chosen]
    between = [r for r in analysis["between"] if not chosen or chosen in (r["left"], r["right"])]
    context = {
        "study": study,
        "form": form,
        "chosen": chosen,
        "analysis": analysis,
        "entries": entries,
        "between": between,
    }
    return render(request, "ranking/cohorts.html", context)
