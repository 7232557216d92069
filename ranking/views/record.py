"""The board's record: taking a system off the board (with a reason) and putting it back.

The history page (`ranking.views.leaderboard_history`) shows the record and these two forms;
both actions refit the boards, which then leave the system out (ranking.record).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from completions.access import access_study_for_admin, study_admin_required
from completions.models import System

from .. import record, services
from ..forms import BoardSystemForm


def _form(request: HttpRequest, study) -> BoardSystemForm:  # type: ignore[no-untyped-def]
    names = list(System.objects.filter(study=study).order_by("name").values_list("name", flat=True))
    return BoardSystemForm(request.POST, systems=names)


@require_POST
@study_admin_required
def system_take_off(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = _form(request, study)
    try:
        if not form.is_valid():
            raise ValueError("choose one of the study's systems")
        record.system_take_off(
            study=study,
            system=form.cleaned_data["system"],
            reason=form.cleaned_data["reason"],
            by=request.user.get_username(),
        )
    except ValueError as exc:
        messages.error(request, f"Nothing changed: {exc}.")
    else:
        services.snapshot_request_refit(study=study)
        messages.success(request, f"{form.cleaned_data['system']} is off the board from now on.")
    return redirect("ranking:history", slug=study.slug)


@require_POST
@study_admin_required
def system_put_back(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = _form(request, study)
    try:
        if not form.is_valid():
            raise ValueError("choose one of the study's systems")
        record.system_put_back(
            study=study,
            system=form.cleaned_data["system"],
            reason=form.cleaned_data["reason"],
            by=request.user.get_username(),
        )
    except ValueError as exc:
        messages.error(request, f"Nothing changed: {exc}.")
    else:
        services.snapshot_request_refit(study=study)
        messages.success(request, f"{form.cleaned_data['system']} is back on the board.")
    return redirect("ranking:history", slug=study.slug)
