"""The LLM run engine's Prometheus metrics, counted where units finish (in the worker).

Counters only: in a prefork worker each child writes its own file under PROMETHEUS_MULTIPROC_DIR
and the worker's exporter (core/worker_metrics.py) sums them. No study, run or endpoint
label: a label per run would grow without bound.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterable

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily

LLM_UNITS_FINISHED = Counter(
    "heart_llm_units_finished",
    "LLM run units finished, per run kind and outcome (done, failed, invalid).",
    ["kind", "status"],
)


def llm_units_finished(*, kind: str, statuses: Iterable[str]) -> None:
    """Count units that were just stored with their final status."""
    for status, n in Tally(statuses).items():
        LLM_UNITS_FINISHED.labels(kind=kind, status=status).inc(n)


def llm_run_families() -> list[GaugeMetricFamily]:
    """Read at each scrape: units of the running runs, and runs, per kind and status."""
    from .selectors import (
        run_counts_by_kind_and_status,
        unit_counts_of_running_runs,
    )

    units = GaugeMetricFamily(
        "heart_llm_running_units",
        "Units of the LLM runs running now, per run kind and unit status "
        "(pending, in_flight, done, failed, invalid).",
        labels=["kind", "status"],
    )
    for kind, status, n in unit_counts_of_running_runs():
        units.add_metric([kind, status], n)
    runs = GaugeMetricFamily(
        "heart_llm_runs", "LLM runs per kind and status.", labels=["kind", "status"]
    )
    for kind, status, n in run_counts_by_kind_and_status():
        runs.add_metric([kind, status], n)
    return [units, runs]
