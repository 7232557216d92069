"""Study-admin page of the strategy analyses (Figure 6) over a chosen set of labels."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from completions import strategies
from completions.access import access_study_for_admin, study_admin_required
from completions.models import Study
from labelling import selectors as label_selectors
from labelling.models import LabelSet

from .. import services


def _analysis(request: HttpRequest, study: Study) -> dict[str, Any] | None:
    choice = request.GET.get("labels") or label_selectors.AUTO
    if choice not in (label_selectors.AUTO, label_selectors.METADATA) and not choice.isdigit():
        return None
    try:
        return services.strategy_analysis(study, labels=choice)
    except LabelSet.DoesNotExist:
        return None


@require_GET
@study_admin_required
def strategies_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    analysis = _analysis(request, study)
    if analysis is None:
        return HttpResponseBadRequest("Unknown label set.")
    context = {
        "study": study,
        "analysis": analysis,
        "choice": request.GET.get("labels") or label_selectors.AUTO,
        "label_sets": label_selectors.label_sets(study),
        "samples": label_selectors.samples_of_study(study),
        "taxonomy": strategies.TAXONOMY,
        "taxonomy_version": strategies.TAXONOMY_VERSION,
        "taxonomy_hash": strategies.TAXONOMY_HASH,
        "prompt_version": strategies.PROMPT_VERSION,
    }
    return render(request, "ranking/strategies.html", context)


@require_GET
@study_admin_required
def strategies_json(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    analysis = _analysis(request, study)
    if analysis is None:
        return JsonResponse({"error": "unknown label set"}, status=400)
    return JsonResponse(analysis)


@require_GET
@study_admin_required
def strategies_heatmap(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    from .. import plots

    study = access_study_for_admin(request.user, slug)
    analysis = _analysis(request, study)
    if analysis is None or fmt not in plots.FORMATS:
        return HttpResponseBadRequest("Unknown label set or format.")
    image = plots.render("strategies", analysis, fmt)
    response = HttpResponse(image, content_type=plots.FORMATS[fmt])
    response["Cache-Control"] = "private, max-age=60"
    return response
