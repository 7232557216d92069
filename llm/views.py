"""Studio pages for LLM runs: endpoints, launching with a plan, a run's live progress."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from completions.access import access_study_for_admin, study_admin_required

from . import selectors, services
from .forms import EndpointForm, RunLaunchForm, SupporterPromptForm
from .models import Run, RunStatus
from .services import batches as batch_services

if TYPE_CHECKING:
    from completions.models import Study
    from core.middleware import AuthenticatedHttpRequest, HtmxHttpRequest
FAILURES_PER_PAGE = 25


def _run_for(request: HttpRequest, slug: str, run_id: int) -> Run:
    study = access_study_for_admin(request.user, slug)
    return get_object_or_404(Run.objects.select_related("study"), pk=run_id, study=study)


def _hub(
    request: HttpRequest,
    study: Study,
    *,
    endpoint_form: EndpointForm | None = None,
    launch_form: RunLaunchForm | None = None,
    status: int = 200,
) -> HttpResponse:
    from llm.generation import supporter_prompt_current

    prompt = supporter_prompt_current(study)
    endpoints = selectors.endpoints_for_study(study)
    context = {
        "prompt": prompt,
        "prompt_form": SupporterPromptForm(initial={"text": prompt.text}),
        "study": study,
        "endpoints": endpoints,
        "runs": [(run, selectors.run_counts(run)) for run in selectors.runs_for_study(study)[:50]],
        "endpoint_form": endpoint_form or EndpointForm(user=request.user, study=study),
        "launch_form": launch_form or RunLaunchForm(endpoints=endpoints),
    }
    return render(request, "llm/hub.html", context, status=status)


@require_GET
@study_admin_required
def llm_hub(request: HttpRequest, slug: str) -> HttpResponse:
    return _hub(request, access_study_for_admin(request.user, slug))


@require_POST
@study_admin_required
def endpoint_add(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    existing = selectors.endpoint_named(request.POST.get("name", ""))
    form = EndpointForm(request.POST, instance=existing, user=request.user, study=study)
    if not form.is_valid():
        return _hub(request, study, endpoint_form=form, status=400)
    try:
        endpoint, _ = services.endpoint_upsert(**form.upsert_fields())
    except services.EndpointError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, f"{exc}. Not saved.")
        return _hub(request, study, endpoint_form=form, status=400)
    messages.success(request, f"Endpoint {endpoint.name} saved.")
    problem = services.endpoint_key_problem(endpoint)
    if problem:
        messages.warning(request, f"{problem}: calls will fail until it is set for the workers.")
    return redirect("llm:hub", slug=study.slug)


@require_POST
@study_admin_required
def supporter_prompt(request: HttpRequest, slug: str) -> HttpResponse:
    from llm.generation import supporter_prompt_edit

    study = access_study_for_admin(request.user, slug)
    form = SupporterPromptForm(request.POST)
    if form.is_valid():
        prompt = supporter_prompt_edit(study=study, text=form.cleaned_data["text"])
        messages.success(request, f"Supporter prompt: version {prompt.version} is current.")
    else:
        messages.error(request, "The prompt cannot be empty.")
    return redirect("llm:hub", slug=study.slug)


@require_POST
@study_admin_required
def run_plan(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = RunLaunchForm(request.POST, endpoints=selectors.endpoints_for_study(study))
    if not form.is_valid():
        return _hub(request, study, launch_form=form, status=400)
    try:
        run = services.run_plan(
            study=study,
            kind=form.cleaned_data["kind"],
            endpoints=form.cleaned_data["endpoints"],
            budget_usd=form.cleaned_data["budget_usd"],
            user=request.user,
            params=form.params(),
        )
    except ValueError as exc:  # e.g. a label run with two classifiers
        form.add_error(None, str(exc))
        return _hub(request, study, launch_form=form, status=400)
    return redirect("llm:run", slug=study.slug, run_id=run.pk)


@require_GET
@study_admin_required
def run_page(request: HtmxHttpRequest, slug: str, run_id: int) -> HttpResponse:
    run = _run_for(request, slug, run_id)
    failures = Paginator(selectors.run_failures(run), FAILURES_PER_PAGE)
    context = {
        "study": run.study,
        "run": run,
        "texts": _generated(run),
        "counts": selectors.run_counts(run),
        "failures": failures.get_page(request.GET.get("page")),
        "key_problems": [p for e in run.endpoints.all() if (p := services.endpoint_key_problem(e))],
        "endpoint_names": ", ".join(sorted(e.name for e in run.endpoints.all())),
        "batches": selectors.batches_for_run(run),
    }
    fragment = request.htmx and not request.htmx.history_restore_request
    return render(request, "llm/run.html#progress" if fragment else "llm/run.html", context)


TEXTS_SHOWN = 20


def _generated(run: Run) -> dict[str, Any] | None:
    """A finished generate run's replies: how many, the first few, and whether pairs exist."""
    if run.kind != "generate" or run.status != RunStatus.FINISHED:
        return None
    from llm.generation import generated_completions

    texts = generated_completions(run)
    return {
        "n": texts.count(),
        "first": list(texts[:TEXTS_SHOWN]),
        "study_has_pairs": run.study.pairs.exists(),  # annotation's Pair, by its relation
    }


@require_GET
@study_admin_required
def unit_raw_reply(request: HttpRequest, slug: str, run_id: int, unit_id: int) -> HttpResponse:
    """The stored raw reply of one unit as a plain-text download (never rendered as a page)."""
    unit = selectors.run_unit_raw(_run_for(request, slug, run_id), unit_id)
    response = HttpResponse(unit.raw_reply, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run_id}-unit-{unit.pk}.txt"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_POST
@study_admin_required
def run_action(request: HttpRequest, slug: str, run_id: int, action: str) -> HttpResponse:
    run = _run_for(request, slug, run_id)
    if action == "start":
        if run.status == RunStatus.PLANNED and run.params.get("batch_requested"):
            if batch_services.batch_run_start(run=run):
                messages.success(request, "Run started in batch mode: submitting the batches.")
        elif run.status == RunStatus.PLANNED and services.run_start(run=run):
            messages.success(request, "Run started.")
    elif action == "cancel":
        if services.run_cancel(run=run):
            messages.success(request, "Run cancelled: calls already in flight finish and are kept.")
    elif action == "retry":
        n = services.run_retry_failed(run=run)
        messages.success(request, f"{n} failed or invalid units queued again.")
    elif action == "resume":
        services.run_resume(run=run)
        messages.success(request, "Run resumed.")
    else:
        raise Http404("unknown action")
    return redirect("llm:run", slug=run.study.slug, run_id=run.pk)
