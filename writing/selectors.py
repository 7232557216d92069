"""Reads for writer pages and the review page."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from django.db.models import QuerySet

from .models import Writer, Writing, WritingContext


@dataclass
class WriterProgress:
    written: int  # pending or accepted
    accepted: int
    rejected: int
    open_contexts: int


def writer_progress(*, writer: Writer) -> WriterProgress:
    counts: dict[str, int] = {}
    for status in writer.writings.values_list("status", flat=True):
        counts[status] = counts.get(status, 0) + 1
    return WriterProgress(
        written=counts.get("pending", 0) + counts.get("accepted", 0),
        accepted=counts.get("accepted", 0),
        rejected=counts.get("rejected", 0),
        open_contexts=WritingContext.objects.filter(study_id=writer.study_id).count(),
    )


def writings_for_review(*, study_id: int, status: str = "") -> QuerySet[Writing]:
    qs = Writing.objects.filter(study_id=study_id).exclude(status__in=["draft", "expired"])
    if status:
        qs = qs.filter(status=status)
    return qs.select_related("writer", "context").order_by("submitted_at", "id")


@dataclass
class WriterStats:
    pseudonym: str
    system: str
    source: str
    submitted: int = 0
    accepted: int = 0
    rejected: int = 0
    flagged: int = 0
    flag_counts: dict[str, int] = field(default_factory=dict)
    median_active_s: float | None = None
    win_rate: float | None = None
    n_judged: int = 0

    @property
    def acceptance_rate(self) -> float | None:
        decided = self.accepted + self.rejected
        return self.accepted / decided if decided else None


def writer_stats(*, study_id: int) -> list[WriterStats]:
    """Per writer: texts submitted, decisions, flags and the median active writing time."""
    rows: dict[int, WriterStats] = {}
    times: dict[int, list[int]] = {}
    for writer in Writer.objects.filter(study_id=study_id).select_related("system"):
        rows[writer.pk] = WriterStats(writer.pseudonym, writer.system.name, writer.source)
        times[writer.pk] = []
    writings = Writing.objects.filter(study_id=study_id).exclude(status__in=["draft", "expired"])
    for writer_id, status, flags, active_ms in writings.values_list(
        "writer_id", "status", "flags", "active_ms"
    ):
        stats = rows[writer_id]
        stats.submitted += 1
        stats.accepted += status == "accepted"
        stats.rejected += status == "rejected"
        stats.flagged += bool(flags)
        for flag in flags or []:
            stats.flag_counts[flag] = stats.flag_counts.get(flag, 0) + 1
        times[writer_id].append(active_ms)
    for writer_id, values in times.items():
        if values:
            rows[writer_id].median_active_s = statistics.median(values) / 1000
    return sorted(rows.values(), key=lambda s: s.pseudonym)


def context_fill(*, study_id: int) -> dict[str, int]:
    """How many open contexts have 0, 1, ... written texts (pending or accepted)."""
    counts: dict[int, int] = {
        pk: 0
        for pk in WritingContext.objects.filter(study_id=study_id).values_list(
            "context_id", flat=True
        )
    }
    for context_id in Writing.objects.filter(
        study_id=study_id, status__in=["pending", "accepted"]
    ).values_list("context_id", flat=True):
        counts[context_id] = counts.get(context_id, 0) + 1
    histogram: dict[str, int] = {}
    for n in counts.values():
        histogram[str(n)] = histogram.get(str(n), 0) + 1
    return dict(sorted(histogram.items(), key=lambda kv: int(kv[0])))
