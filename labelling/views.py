"""Labeller pages (label sampled completions, blinded) and the study admin's validation pages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.contrib.auth.views import LoginView
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from completions import strategies
from completions.access import access_study_for_admin, study_admin_required
from completions.models import Study
from core.roles import role

from . import selectors, services
from .access import labeller_required
from .forms import AdjudicationForm, SampleForm, StrategyLabelForm
from .models import LabelSet, SampleItem, ValidationSample

if TYPE_CHECKING:
    from core.middleware import AuthenticatedHttpRequest

# --------------------------------------------------------------------------- labellers

labeller_login = role("public")(
    LoginView.as_view(
        template_name="labelling/login.html",
        redirect_authenticated_user=True,
        next_page="labelling:home",  # also where a foreign `next` lands instead
    )
)


@require_GET
@labeller_required
def labeller_home(request: AuthenticatedHttpRequest) -> HttpResponse:
    samples = selectors.samples_for_labeller(request.user)
    return render(request, "labelling/home.html", {"samples": samples})


@require_http_methods(["GET", "POST"])
@labeller_required
def label_next(request: AuthenticatedHttpRequest, token: str) -> HttpResponse:
    sample = get_object_or_404(ValidationSample, token=token, is_open=True)
    form = None
    if request.method == "POST":
        form = StrategyLabelForm(request.POST)
        if form.is_valid() and _submit(request, sample, form):
            return redirect("labelling:next", token=sample.token)
    item = selectors.next_item(sample, request.user)
    if item is None:
        return render(request, "labelling/done.html", {"sample": sample})
    if form is None or form.cleaned_data.get("item") != item.token:
        form = StrategyLabelForm(initial={"item": item.token})
    context = {
        "sample": sample,
        "turns": item.completion.context.turns,
        "text": item.completion.text,
        "form": form,
        "taxonomy": strategies.TAXONOMY,
        "remaining": selectors.samples_remaining(sample, request.user),
    }
    return render(request, "labelling/item.html", context)


def _submit(
    request: AuthenticatedHttpRequest, sample: ValidationSample, form: StrategyLabelForm
) -> bool:
    item = SampleItem.objects.filter(sample=sample, token=form.cleaned_data["item"]).first()
    if item is None:
        messages.error(request, "That response is not part of this sample.")
        return False
    try:
        services.human_label_submit(
            item=item,
            labeller=request.user,
            present=form.cleaned_data["present"],
            note=form.cleaned_data["note"],
        )
    except services.LabellingError as error:
        messages.error(request, str(error))
        return False
    messages.success(request, "Saved.")
    return True


# --------------------------------------------------------------------------- study admins


@require_POST
@study_admin_required
def sample_new(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    form = SampleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Sample not created: " + form.errors.as_text())
        return redirect("ranking:strategies", slug=study.slug)
    try:
        sample = services.sample_create(study=study, created_by=request.user, **form.cleaned_data)
    except services.LabellingError as error:
        messages.error(request, str(error))
        return redirect("ranking:strategies", slug=study.slug)
    messages.success(request, f"Sampled {sample.size} completions.")
    return redirect("labelling:sample", slug=study.slug, pk=sample.pk)


def _sample_and_set(
    request: AuthenticatedHttpRequest, slug: str, pk: int
) -> tuple[Study, ValidationSample, LabelSet | None]:
    study = access_study_for_admin(request.user, slug)
    sample = get_object_or_404(ValidationSample, study=study, pk=pk)
    choice = request.GET.get("labels", "")
    if choice.isdigit():
        label_set = LabelSet.objects.filter(study=study, pk=int(choice)).first()
        if label_set is None:
            raise Http404("Unknown label set.")
    else:
        label_set = selectors.label_set_latest_finished(study)
    return study, sample, label_set


@require_GET
@study_admin_required
def sample_page(request: AuthenticatedHttpRequest, slug: str, pk: int) -> HttpResponse:
    study, sample, label_set = _sample_and_set(request, slug, pk)
    states = selectors.item_states(sample)
    quota = sample.labellers_per_item
    context = {
        "study": study,
        "sample": sample,
        "label_set": label_set,
        "label_sets": selectors.label_sets(study),
        "report": selectors.validation_report(sample, label_set),
        "disputes": [s for s in states if len(s.labels) >= quota and s.disputed],
        "strategy_names": strategies.STRATEGY_NAMES,
    }
    return render(request, "labelling/sample.html", context)


@require_GET
@study_admin_required
def sample_report_json(request: AuthenticatedHttpRequest, slug: str, pk: int) -> JsonResponse:
    _, sample, label_set = _sample_and_set(request, slug, pk)
    return JsonResponse(selectors.validation_report(sample, label_set))


@require_POST
@study_admin_required
def adjudicate(request: AuthenticatedHttpRequest, slug: str, pk: int, token: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    item = get_object_or_404(SampleItem, sample__study=study, sample_id=pk, token=token)
    form = AdjudicationForm(request.POST)
    if form.is_valid():
        services.adjudicate(
            item=item, present=form.cleaned_data["present"], decided_by=request.user
        )
        messages.success(request, f"Item {item.position + 1} decided.")
    else:
        messages.error(request, "Not saved: " + form.errors.as_text())
    return redirect("labelling:sample", slug=study.slug, pk=pk)
