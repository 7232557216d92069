"""Study-admin pages: the leaderboard with its plots and tables, refits and their history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from celery import current_app
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from completions.access import access_study_for_admin, study_admin_required

from .. import plots, selectors, services, study_targets, tables
from ..forms import Filters, LeaderboardFilterForm
from ..limits import MIN_SOURCE_JUDGMENTS

if TYPE_CHECKING:
    from completions.models import Study
    from core.middleware import HtmxHttpRequest


def _filters(request: HttpRequest, study: Study) -> Filters | None:
    form = LeaderboardFilterForm(request.GET)
    if not form.is_valid():
        return None
    return form.filters(default_judges=selectors.default_judges(study))


def _suffix(filters: Filters) -> str:
    name = f"{filters['judges']}-{filters['subset']}"
    return name if filters["preset"] == "default" else f"{name}-{filters['preset']}"


def _grade(result: dict[str, Any], study: Study) -> dict[str, Any] | None:
    """The stored study grade, with what the study's target separability needs."""
    section = result.get("study_quality")
    return (
        study_targets.study_quality_served(section, study.target_separability) if section else None
    )


@require_GET
@study_admin_required
def leaderboard_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = LeaderboardFilterForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("Unknown filter value.")
    state = selectors.judgments_state(study)
    counts = selectors.judge_counts(study, state=state)
    filters = form.filters(default_judges=selectors.default_judges(study, counts))
    by_keys = selectors.context_category_keys(study)
    by = form.cleaned_data.get("by") or None
    if by is not None and by not in by_keys:
        return HttpResponseBadRequest("Unknown split: choose a context field the study has.")
    result = services.leaderboard_served(study, **filters, by=by, state=state)
    context = {
        "study": study,
        "form": form,
        "filters": filters,
        "judge_choices": _judge_choices(counts, filters["judges"]),
        "by": by,
        "by_keys": by_keys,
        "result": result,
        "query": urlencode(dict(filters, by=by) if by else filters),
        "plots": [(name, alt) for name, (_, alt) in plots.PLOTS.items()],
        "tables": list(tables.TABLES),
        "docs_url": settings.HEART_DOCS_URL,
        "grade": _grade(result, study),
    }
    # A history-restore request needs the whole page, a filter change only the results.
    fragment = request.htmx and not request.htmx.history_restore_request
    template = "ranking/leaderboard.html#results" if fragment else "ranking/leaderboard.html"
    return render(request, template, context)


def _judge_choices(counts: dict[str, int], chosen: str) -> list[tuple[str, str]]:
    """The judges menu: each source that judged, and the combined board only when each source
    has the minimum a combined board needs (or when it is the board asked for)."""
    labels = {"human": "Human judges", "llm": "LLM judges", "all": "All judges (combined)"}
    kinds = [kind for kind in ("human", "llm") if counts[kind]] or ["human"]
    combined = all(counts[k] >= MIN_SOURCE_JUDGMENTS for k in ("human", "llm"))
    if combined or chosen == "all":
        kinds.append("all")
    if chosen not in kinds:
        kinds.append(chosen)
    return [(kind, labels[kind]) for kind in kinds]


@require_GET
@study_admin_required
def leaderboard_plot(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    filters = _filters(request, study)
    if filters is None or name not in plots.PLOTS or fmt not in plots.FORMATS:
        return HttpResponseBadRequest("Unknown plot, format or filter.")
    image = services.leaderboard_plot(study, name=name, fmt=fmt, **filters)
    response = HttpResponse(image, content_type=plots.FORMATS[fmt])
    if "download" in request.GET:
        filename = f"{study.slug}-{name}-{_suffix(filters)}.{fmt}"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "private, max-age=60"
    return response


@require_GET
@study_admin_required
def leaderboard_table(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    filters = _filters(request, study)
    if filters is None or name not in tables.TABLES:
        return HttpResponseBadRequest("Unknown table or filter.")
    result = services.leaderboard_current(study, **filters)
    response = HttpResponse(tables.to_csv(name, result), content_type="text/csv; charset=utf-8")
    filename = f"{study.slug}-{name}-{_suffix(filters)}.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_POST
@study_admin_required
def leaderboard_refit(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    queued = services.snapshot_request_refit(study=study)
    if current_app.conf.task_always_eager:
        # No worker in this setup: the refit runs in this process once this response is sent.
        text = "Refit started: the new snapshots appear in the history below when it is done "
        text += "(reload in a moment; unchanged judgments store nothing new)."
    elif queued:
        text = "Refit queued: the new snapshot appears in the history when the worker has finished."
    else:
        text = "A refit is already running: the new snapshot appears in the history when done."
    messages.success(request, text)
    return redirect(reverse("ranking:history", args=[study.slug]))


@require_GET
@study_admin_required
def leaderboard_history(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    from ..models import BoardEventKind
    from ..record import board_history

    record = board_history(study, snapshots=0)
    labels = dict(BoardEventKind.choices)
    for event in record["events"]:  # the JSON's kind, and the words the page prints
        event["label"] = labels.get(event["kind"], event["kind"])
    context = {
        "study": study,
        "snapshots": selectors.snapshot_history(study),
        "refit_jobs": selectors.refit_jobs_recent(study),
        "record": record,
    }
    return render(request, "ranking/history.html", context)
