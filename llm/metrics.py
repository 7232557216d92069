"""The LLM run engine's Prometheus metrics, counted where units finish (in the worker).

Counters only: in a prefork worker each child writes its own file under PROMETHEUS_MULTIPROC_DIR
and the worker's exporter (core/worker_metrics.py) sums them. No study, run or endpoint
label: a label per run would grow without bound.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterable

from prometheus_client import Counter

LLM_UNITS_FINISHED = Counter(
    "heart_llm_units_finished",
    "LLM run units finished, per run kind and outcome (done, failed, invalid).",
    ["kind", "status"],
)


def llm_units_finished(*, kind: str, statuses: Iterable[str]) -> None:
    """Count units that were just stored with their final status."""
    for status, n in Tally(statuses).items():
        LLM_UNITS_FINISHED.labels(kind=kind, status=status).inc(n)
