"""Reads of the LLM engine: live counts of a run, the status rows of `llm_run status`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Left
from django.shortcuts import get_object_or_404

from .kinds import KINDS
from .models import Endpoint, ProviderBatch, Run, RunStatus, Unit, UnitStatus

if TYPE_CHECKING:
    from completions.models import Study


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
    """One row of `llm_run status --format json` (a contract other tools read: docs/llm-runs.md)."""
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


def runs_for_study(study: Study) -> QuerySet[Run]:
    return Run.objects.filter(study=study).prefetch_related("endpoints").order_by("-created_at")


# Characters of a raw reply shown on the run page; the rest is a download away.
RAW_PREVIEW_CHARS = 2000


def run_failures(run: Run) -> QuerySet[Unit]:
    """Failed and invalid units for the run page: the raw reply's first RAW_PREVIEW_CHARS
    characters only (as `raw_preview`), so a page of them stays small whatever was stored."""
    return (
        Unit.objects.filter(run=run, status__in=[UnitStatus.FAILED, UnitStatus.INVALID])
        .select_related("endpoint")
        .defer("raw_reply", "payload", "result")
        .annotate(raw_preview=Left("raw_reply", RAW_PREVIEW_CHARS))
        .order_by("id")
    )


def run_unit_raw(run: Run, unit_id: int) -> Unit:
    return get_object_or_404(
        Unit.objects.only("id", "key", "raw_reply", "raw_reply_chars", "raw_reply_sha256"),
        run=run,
        pk=unit_id,
    )


def endpoints_all() -> QuerySet[Endpoint]:
    """Every endpoint (the command line, superusers)."""
    return Endpoint.objects.select_related("study").order_by("-is_demo", "name")


def endpoint_named(name: str) -> Endpoint | None:
    return Endpoint.objects.filter(name=name).first() if name else None


def endpoints_for_study(study: Study) -> QuerySet[Endpoint]:
    """The endpoints a study may use and its admins may see: its own and the shared ones."""
    return (
        Endpoint.objects.filter(Q(study=study) | Q(study__isnull=True))
        .select_related("study")
        .order_by("-is_demo", "study_id", "name")
    )


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


def batches_for_run(run: Run) -> QuerySet[ProviderBatch]:
    """What the run page shows of batch mode: each provider batch and its state."""
    return ProviderBatch.objects.filter(run=run).select_related("endpoint").order_by("id")
