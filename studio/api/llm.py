"""LLM runs of a study through the API: create (plan), launch, status, cancel.

The run engine is llm (its services and selectors); these views only validate and
call it. A created run is planned (units, tokens and cost estimated, nothing sent) until launched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from llm import selectors, services
from llm.forms import PROFILE_CHOICES
from llm.kinds import KINDS
from llm.models import Endpoint, Run

from .base import IdCursorPagination, StudyAdminApi

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class RunCreate(serializers.Serializer[None]):
    kind = serializers.CharField(
        help_text="A run kind: generate, judge, label (when installed) or adversarial."
    )
    endpoints = serializers.ListField(
        child=serializers.CharField(), min_length=1, help_text="Endpoint names (judges for judge)."
    )
    budget_usd = serializers.FloatField(required=False, allow_null=True, min_value=0.000001)
    profile = serializers.ChoiceField(
        choices=[value for value, _ in PROFILE_CHOICES if value],
        required=False,
        help_text="Adversarial runs (required there): the escalation profile.",
    )
    contexts = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="Adversarial runs: how many source contexts to rewrite (default 20).",
    )

    def validate_kind(self, value: str) -> str:
        if value not in KINDS:
            raise serializers.ValidationError(f"one of {', '.join(sorted(KINDS))}")
        return value

    def validate_endpoints(self, names: list[str]) -> list[Endpoint]:
        # The study's own endpoints and the shared ones; another study's are unknown here.
        usable = selectors.endpoints_for_study(self.context["study"])
        found = {e.name: e for e in usable.filter(name__in=names)}
        missing = [n for n in names if n not in found]
        if missing:
            raise serializers.ValidationError(f"unknown endpoint(s): {', '.join(missing)}")
        for endpoint in found.values():
            if problem := services.endpoint_key_problem(endpoint):
                raise serializers.ValidationError(problem)
        return [found[n] for n in dict.fromkeys(names)]

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["kind"] == "adversarial" and not data.get("profile"):
            raise serializers.ValidationError({"profile": "required for an adversarial run"})
        return data

    def params(self) -> dict[str, Any]:
        """The run's parameters beyond kind and endpoints, as the launch form gives them."""
        data = self.validated_data
        return services.run_params(
            data["kind"], profile=data.get("profile", ""), contexts=data.get("contexts")
        )


class RunStatus(serializers.Serializer[dict[str, Any]]):
    """`llm_run status --format json` row, with the plan and live counts."""

    run = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    units = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    invalid = serializers.IntegerField()
    skipped_own_family = serializers.IntegerField()
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    cost = serializers.FloatField()
    plan = serializers.DictField()
    counts = serializers.DictField()


def run_body(run: Run) -> dict[str, Any]:
    return {**selectors.run_status_row(run), "plan": run.plan, "counts": selectors.run_counts(run)}


class RunList(StudyAdminApi):
    """The study's LLM runs, newest first (GET), or plan a new one (POST; nothing is sent)."""

    pagination_class = IdCursorPagination

    @extend_schema(responses=RunStatus(many=True))
    def get(self, request: Request, slug: str) -> Response:
        runs = Run.objects.filter(study=self.study()).prefetch_related("endpoints")
        page = self.paginate_queryset(runs)
        assert page is not None  # pagination_class is set
        return self.get_paginated_response([run_body(run) for run in page])

    @extend_schema(request=RunCreate, responses={201: RunStatus})
    def post(self, request: Request, slug: str) -> Response:
        study = self.study()
        form = RunCreate(data=request.data, context={"study": study})
        form.is_valid(raise_exception=True)
        try:
            run = services.run_plan(
                study=study,
                kind=form.validated_data["kind"],
                endpoints=form.validated_data["endpoints"],
                params=form.params(),
                budget_usd=form.validated_data.get("budget_usd"),
                user=cast("User", request.user),  # IsStudyAdmin let only an account in
            )
        except services.EndpointError as exc:
            raise serializers.ValidationError({"endpoints": str(exc)}) from exc
        except ValueError as exc:  # the kind refused the plan, e.g. two rewriting endpoints
            raise serializers.ValidationError({"detail": str(exc)}) from exc
        return Response(run_body(run), status=status.HTTP_201_CREATED)


class _RunApi(StudyAdminApi):
    def run(self) -> Run:
        return get_object_or_404(Run, study=self.study(), pk=self.kwargs["run_id"])


class RunDetail(_RunApi):
    """One run's status, plan and live counts."""

    @extend_schema(responses=RunStatus)
    def get(self, request: Request, slug: str, run_id: int) -> Response:
        return Response(run_body(self.run()))


class RunLaunch(_RunApi):
    """Launch a planned run (a worker takes it once the request commits); 409 otherwise."""

    @extend_schema(request=None, responses={202: RunStatus, 409: OpenApiTypes.OBJECT})
    def post(self, request: Request, slug: str, run_id: int) -> Response:
        run = self.run()
        if not services.run_start(run=run):
            return Response({"detail": f"run is {run.status}, not planned"}, status=409)
        run.refresh_from_db()
        return Response(run_body(run), status=status.HTTP_202_ACCEPTED)


class RunCancel(_RunApi):
    """Cancel a planned or running run: no new calls; calls in flight finish and are kept."""

    @extend_schema(request=None, responses={200: RunStatus, 409: OpenApiTypes.OBJECT})
    def post(self, request: Request, slug: str, run_id: int) -> Response:
        run = self.run()
        if not services.run_cancel(run=run):
            return Response({"detail": f"run is {run.status}: nothing to cancel"}, status=409)
        run.refresh_from_db()
        return Response(run_body(run))
