"""The board's record: taking a system off the board (with a reason) and putting it back.

The history page (`ranking.views.leaderboard_history`) shows the record and these two forms;
both actions refit the boards, which then leave the system out (ranking.record).
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from completions.access import access_study_for_admin, study_admin_required
from completions.models import System

from .. import record, services
from ..forms import BoardSystemForm


def _change(
    request: HttpRequest, slug: str, change: Callable[..., object], done: str
) -> HttpResponse:
    """Apply ``change`` (take off or put back) to the system the form names, with its reason;
    refit on success, say what changed or why nothing did, and go back to the history page."""
    study = access_study_for_admin(request.user, slug)
    names = list(System.objects.filter(study=study).order_by("name").values_list("name", flat=True))
    form = BoardSystemForm(request.POST, systems=names)
    try:
        if not form.is_valid():
            raise ValueError("choose one of the study's systems")
        change(
            study=study,
            system=form.cleaned_data["system"],
            reason=form.cleaned_data["reason"],
            by=request.user.get_username(),
        )
    except ValueError as exc:
        messages.error(request, f"Nothing changed: {exc}.")
    else:
        services.snapshot_request_refit(study=study)
        messages.success(request, f"{form.cleaned_data['system']} {done}")
    return redirect("ranking:history", slug=study.slug)


@require_POST
@study_admin_required
def system_take_off(request: HttpRequest, slug: str) -> HttpResponse:
    return _change(request, slug, record.system_take_off, "is off the board from now on.")


@require_POST
@study_admin_required
def system_put_back(request: HttpRequest, slug: str) -> HttpResponse:
    return _change(request, slug, record.system_put_back, "is back on the board.")
