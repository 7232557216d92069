"""Writes of the LLM engine: endpoints, planning, starting, cancelling and retrying runs."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from .kinds import get_kind
from .models import Endpoint, Provider, Run, RunStatus, Unit, UnitStatus

ENDPOINT_FIELDS = (
    "label",
    "provider",
    "base_url",
    "model",
    "family",
    "api_key_env",
    "price_in",
    "price_out",
    "max_concurrency",
    "timeout_s",
    "max_retries",
    "is_demo",
)


RUN_TASK = "completions.llm.tasks.llm_run_execute"


class EndpointError(ValueError):
    """Bad endpoint settings: the message says which and why."""


def endpoint_upsert(*, name: str, **fields: Any) -> tuple[Endpoint, bool]:
    """Create or update the endpoint called `name` (None values keep the current setting)."""
    fields = {k: v for k, v in fields.items() if v is not None}
    unknown = set(fields) - set(ENDPOINT_FIELDS)
    if unknown:
        raise EndpointError(f"unknown endpoint settings: {', '.join(sorted(unknown))}")
    if "provider" in fields and fields["provider"] not in Provider.values:
        raise EndpointError(f"provider must be one of {', '.join(Provider.values)}")
    if fields.get("max_concurrency", 1) < 1:
        raise EndpointError("max concurrency must be at least 1")
    if min(fields.get("price_in", 0), fields.get("price_out", 0)) < 0:
        raise EndpointError("prices cannot be negative")
    endpoint = Endpoint.objects.filter(name=name).first()
    created = endpoint is None
    if created:
        missing = [f for f in ("provider", "model", "family") if not fields.get(f)]
        if missing:
            raise EndpointError(f"a new endpoint needs {', '.join(missing)}")
        endpoint = Endpoint(name=name)
    for key, value in fields.items():
        setattr(endpoint, key, value)
    endpoint.full_clean()
    endpoint.save()
    return endpoint, created


def endpoint_key_problem(endpoint: Endpoint) -> str | None:
    """Why calls to this endpoint cannot authenticate here, or None."""
    import os

    if endpoint.api_key_env and not os.environ.get(endpoint.api_key_env):
        return f"environment variable {endpoint.api_key_env} is not set for endpoint {endpoint}"
    return None


@transaction.atomic
def run_plan(
    *,
    study,
    kind: str,
    endpoints: Iterable[Endpoint],
    params: dict[str, Any] | None = None,
    budget_usd: float | None = None,
    user=None,
) -> Run:
    """Create a run and its units with the plan (units, tokens, cost) before anything is sent."""
    run_kind = get_kind(kind)
    endpoints = list(endpoints)
    if not endpoints:
        raise EndpointError("choose at least one endpoint")
    if budget_usd is not None and budget_usd <= 0:
        raise EndpointError("the budget must be a positive amount of USD")
    run = Run.objects.create(
        study=study, kind=kind, params=params or {}, budget_usd=budget_usd, created_by=user
    )
    run.endpoints.set(endpoints)
    plan = run_kind.plan(run)
    Unit.objects.bulk_create(
        [
            Unit(run=run, key=u.key, endpoint_id=u.endpoint_id, payload=u.payload)
            for u in plan.units
        ],
        batch_size=2000,
    )
    run.plan = _plan_summary(plan, endpoints)
    run.save(update_fields=["plan"])
    return run


def _plan_summary(plan, endpoints: list[Endpoint]) -> dict[str, Any]:
    by_endpoint = {
        e.pk: {"name": e.name, "units": 0, "est_tokens_in": 0, "est_tokens_out": 0}
        for e in endpoints
    }
    for unit in plan.units:
        row = by_endpoint[unit.endpoint_id]
        row["units"] += 1
        row["est_tokens_in"] += unit.est_tokens_in
        row["est_tokens_out"] += unit.est_tokens_out
    for e in endpoints:
        row = by_endpoint[e.pk]
        row["est_cost"] = round(e.cost(row["est_tokens_in"], row["est_tokens_out"]), 6)
    rows = list(by_endpoint.values())
    total = sum(r["est_cost"] for r in rows)
    n = len(plan.units)
    return {
        **plan.summary,
        "units": n,
        "est_tokens_in": sum(r["est_tokens_in"] for r in rows),
        "est_tokens_out": sum(r["est_tokens_out"] for r in rows),
        "est_cost": round(total, 6),
        "est_cost_per_unit": total / n if n else 0.0,
        "endpoints": rows,
    }


def run_start(*, run: Run, dispatch: bool = True) -> bool:
    """Planned -> running, then (unless the caller executes it itself) hand it to a worker
    once the transaction commits."""
    changed = Run.objects.filter(pk=run.pk, status=RunStatus.PLANNED).update(
        status=RunStatus.RUNNING, started_at=timezone.now()
    )
    if changed and dispatch:
        transaction.on_commit(lambda: run_dispatch(run_id=run.pk))
    return bool(changed)


def runs_execute_inline() -> bool:
    """True where no worker exists (eager Celery): a CLI runs the executor itself."""
    return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))


def run_dispatch(*, run_id: int) -> None:
    """Queue the run on the `llm` queue; in the embedded default (eager Celery) run it on a
    background thread so that the page that launched it can show its progress."""
    from heart_site.enqueue import enqueue

    eager = getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False)
    if eager and getattr(settings, "LLM_EAGER_THREAD", True):
        threading.Thread(target=_execute_in_thread, args=(run_id,), daemon=True).start()
    else:
        # Several executors may share a run (each takes its share of the endpoint's slots),
        # so one run's client-side CPU spreads over the worker's processes. With the broker
        # down the outbox keeps them (the run stays "running" and starts once it is back).
        for _ in range(max(1, int(getattr(settings, "LLM_EXECUTORS_PER_RUN", 1)))):
            enqueue(RUN_TASK, run_id)


def _execute_in_thread(run_id: int) -> None:
    from .executor import run_execute

    try:
        run_execute(run_id)
    finally:
        connection.close()  # this thread's own connection


def run_cancel(*, run: Run) -> bool:
    """Stop claiming new units; calls already in flight finish and are kept (they are paid)."""
    return bool(
        Run.objects.filter(
            pk=run.pk, status__in=[RunStatus.PLANNED, RunStatus.RUNNING, RunStatus.BUDGET]
        ).update(status=RunStatus.CANCELLED, finished_at=timezone.now())
    )


@transaction.atomic
def run_retry_failed(*, run: Run) -> int:
    """Re-queue only the failed and invalid units; returns how many."""
    n = Unit.objects.filter(run=run, status__in=[UnitStatus.FAILED, UnitStatus.INVALID]).update(
        status=UnitStatus.PENDING, repairs=0, claim_token="", lease_until=None
    )
    if n:
        run_resume(run=run)
    return n


def run_resume(*, run: Run, budget_usd: float | None = None) -> None:
    """Set a stopped (cancelled, budget, finished) run running again on what is left."""
    fields: dict[str, Any] = {"status": RunStatus.RUNNING, "finished_at": None}
    if budget_usd is not None:
        fields["budget_usd"] = budget_usd
    Run.objects.filter(pk=run.pk).exclude(status=RunStatus.PLANNED).update(**fields)
    transaction.on_commit(lambda: run_dispatch(run_id=run.pk))


def runs_resume_stalled() -> list[int]:
    """Queue every running run again (after a worker restart): an executor that finds others
    still working shares the units with them; one whose units are gone just finishes."""
    ids = list(Run.objects.filter(status=RunStatus.RUNNING).values_list("id", flat=True))
    for run_id in ids:
        run_dispatch(run_id=run_id)
    return ids
