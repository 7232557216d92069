"""Reads of the LLM engine: live counts of a run, the status rows of `llm_run status`."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet

from .kinds import KINDS
from .models import Endpoint, Run, RunStatus, Unit, UnitStatus


def run_counts(run: Run) -> dict[str, Any]:
    """Done, failed, invalid, in flight, remaining, tokens, cost so far."""
    by_status = dict(
        Unit.objects.filter(run=run).values_list("status").annotate(n=Count("id")).order_by()
    )
    units = sum(by_status.values())
    finished = sum(by_status.get(s, 0) for s in ("done", "failed", "invalid"))
    return {
        "units": units,
        "done": by_status.get(UnitStatus.DONE, 0),
        "failed": by_status.get(UnitStatus.FAILED, 0),
        "invalid": by_status.get(UnitStatus.INVALID, 0),
        "in_flight": by_status.get(UnitStatus.IN_FLIGHT, 0),
        "remaining": by_status.get(UnitStatus.PENDING, 0) + by_status.get(UnitStatus.IN_FLIGHT, 0),
        "from_cache": Unit.objects.filter(run=run, from_cache=True).count(),
        "percent": round(100 * finished / units) if units else 100,
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "cost": round(run.cost, 6),
    }


def run_status_row(run: Run) -> dict[str, Any]:
    """One row of `llm_run status --format json` (the contract of DESIGN.md)."""
    counts = run_counts(run)
    kind = KINDS.get(run.kind)
    label = kind.endpoints_label if kind else "endpoints"
    return {
        "run": run.pk,
        "kind": run.kind,
        "status": run.status,
        "units": counts["units"],
        "done": counts["done"],
        "failed": counts["failed"],
        "invalid": counts["invalid"],
        "skipped_own_family": run.plan.get("skipped_own_family", 0),
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "cost": round(run.cost, 6),
        label: sorted(e.name for e in run.endpoints.all()),
    }


def runs_for_study(study) -> QuerySet[Run]:
    return Run.objects.filter(study=study).prefetch_related("endpoints").order_by("-created_at")


def run_failures(run: Run, *, limit: int = 200) -> QuerySet[Unit]:
    return (
        Unit.objects.filter(run=run, status__in=[UnitStatus.FAILED, UnitStatus.INVALID])
        .select_related("endpoint")
        .order_by("id")[:limit]
    )


def endpoints_all() -> QuerySet[Endpoint]:
    return Endpoint.objects.order_by("-is_demo", "name")


def unit_counts_of_running_runs() -> list[tuple[str, str, int]]:
    """(run kind, unit status, units) over the runs that are running now: their progress."""
    rows = (
        Unit.objects.filter(run__status=RunStatus.RUNNING)
        .values_list("run__kind", "status")
        .annotate(n=Count("id"))
        .order_by()
    )
    return [(kind, status, n) for kind, status, n in rows]


def run_counts_by_kind_and_status() -> list[tuple[str, str, int]]:
    """(run kind, run status, runs) over every run."""
    rows = Run.objects.values_list("kind", "status").annotate(n=Count("id")).order_by()
    return [(kind, status, n) for kind, status, n in rows]
