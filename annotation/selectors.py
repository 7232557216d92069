"""Reads for the rater experience and the rater-quality admin page."""

from __future__ import annotations

import functools
import random
import statistics
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from cachetools import TTLCache
from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import Model

from completions.models import Study

from .models import Assignment, Judgment, Pair, QualityCheckItem, Rater

ITEM_RELATED = (
    "pair__context",
    "pair__completion_a",
    "pair__completion_b",
    "quality_item",
)


@dataclass(frozen=True)
class QueuePlan:
    """A rater's queue: how many real items, and at which positions the quality checks sit."""

    n_real: int
    check_positions: frozenset[int]

    @property
    def n_checks(self) -> int:
        return len(self.check_positions)

    @property
    def total(self) -> int:
        return self.n_real + self.n_checks


@dataclass(frozen=True)
class Progress:
    done_real: int
    done_checks: int

    @property
    def done(self) -> int:
        return self.done_real + self.done_checks


@dataclass(frozen=True)
class ItemView:
    """What the judging page shows: no ids, no system, family or writer."""

    token: str
    turns: list[dict[str, Any]]
    left_text: str
    right_text: str


def queue_plan(*, study: Study, rater: Rater, n_quality_items: int) -> QueuePlan:
    """Checks make up `quality_check_rate` of the queue, at positions drawn per rater.

    The draw is seeded by the pseudonym, so a returning rater gets the same plan.
    """
    return _queue_plan(
        rater.pseudonym, study.items_per_rater, study.quality_check_rate, n_quality_items
    )


@functools.lru_cache(maxsize=4096)  # read twice per round trip; a pure function of its keys
def _queue_plan(pseudonym: str, n_real: int, rate: float, n_quality_items: int) -> QueuePlan:
    wanted = round(n_real * rate / (1 - rate)) if rate > 0 else 0
    n_checks = min(wanted, n_quality_items)
    positions = random.Random(pseudonym).sample(range(n_real + n_checks), n_checks)
    return QueuePlan(n_real=n_real, check_positions=frozenset(positions))


@dataclass(frozen=True)
class QueueState:
    progress: Progress
    leased_id: int | None


# The rater round trip reads through hand-written statements (no ORM compile on the hot path:
# compiling a select_related query costs more CPU than PostgreSQL spends running it).


def hot_cursor() -> CursorWrapper:
    """A cursor for the round trip's hand-written statements: prepared on PostgreSQL, so each
    is planned once per connection instead of on every call (core/pgbackend), a plain
    cursor on other databases."""
    prepared: Callable[[], CursorWrapper] | None = getattr(connection, "prepared_cursor", None)
    return prepared() if prepared is not None else connection.cursor()


# Counted by PostgreSQL (one row back, not one per item the rater has had). Also the tail of
# the submit statement (services/judgments.py), which reads it before its own changes.
QUEUE_COUNTS_SQL = """
SELECT COUNT(*) FILTER (WHERE status = 'submitted' AND pair_id IS NOT NULL),
       COUNT(*) FILTER (WHERE status = 'submitted' AND pair_id IS NULL),
       MAX(id) FILTER (WHERE status = 'leased' AND id <> %s)
FROM {assignment} WHERE rater_id = %s
"""


def rater_queue_state(*, rater: Rater) -> QueueState:
    """Progress and the current lease, counted in one statement."""
    with hot_cursor() as cursor:
        cursor.execute(QUEUE_COUNTS_SQL.format(assignment=Assignment._meta.db_table), [0, rater.pk])
        real, checks, leased_id = cursor.fetchone()
    return queue_state_from_counts(real, checks, leased_id)


def queue_state_from_counts(real: int, checks: int, leased_id: int | None) -> QueueState:
    return QueueState(progress=Progress(done_real=real, done_checks=checks), leased_id=leased_id)


def sql_columns(model: type[Model], alias: str) -> str:
    """Every concrete column of `model`, in field order, for a hand-written SELECT."""
    return ", ".join(
        # A concrete field always has its column (the type allows None for the others).
        f"{alias}.{connection.ops.quote_name(cast(str, f.column))}"
        for f in model._meta.concrete_fields
    )


_converters: dict[tuple[Any, ...], list[Any]] = {}


def _row_converters(model: type[Model]) -> list[Any]:
    key = (model, connection.vendor)
    if key not in _converters:
        cols = [f.get_col(model._meta.db_table) for f in model._meta.concrete_fields]
        _converters[key] = [
            (col, connection.ops.get_db_converters(col) + col.get_db_converters(connection))
            for col in cols
        ]
    return _converters[key]


def row_parts(row: Sequence[Any], *models: type[Model]) -> list[Sequence[Any]]:
    """A row of several models' `sql_columns`, one after the other, split into each model's
    columns (in the order given)."""
    parts, start = [], 0
    for model in models:
        width = len(model._meta.concrete_fields)
        parts.append(row[start : start + width])
        start += width
    return parts


def model_from_row[M: Model](model: type[M], values: Sequence[Any]) -> M:
    """An instance from the columns of `sql_columns`, converted exactly as the ORM would."""
    converted = []
    for (col, converters), value in zip(_row_converters(model), values, strict=True):
        for converter in converters:
            value = converter(value, col, connection)
        converted.append(value)
    # Every concrete column is given, so Django never reads the field names (None).
    return model.from_db(connection.alias, None, converted)  # type: ignore[arg-type]


def item_view(*, assignment: Assignment) -> ItemView:
    """The two replies in the order drawn for this assignment; page "A" is the left one."""
    if assignment.pair_id is not None:
        pair = assignment.pair
        assert pair is not None  # pair_id is set
        turns, text_a, text_b = pair.context.turns, pair.completion_a.text, pair.completion_b.text
    else:
        item = assignment.quality_item
        assert item is not None  # an assignment holds a pair or a quality-check item
        turns, text_a, text_b = item.turns, item.text_a, item.text_b
    left, right = (text_a, text_b) if assignment.shown_left == "a" else (text_b, text_a)
    return ItemView(token=assignment.token, turns=turns, left_text=left, right_text=right)


# Per process, for a minute: both counts are read on every rater request and change only when
# an admin seeds checks or designs pairs (a queue plan then follows within a minute). The key
# holds the study's creation time, so a recreated study never reads an old count.
_COUNT_TTL = 60.0
_qc_counts: TTLCache[tuple[Any, ...], int] = TTLCache(maxsize=1024, ttl=_COUNT_TTL)
_context_counts: TTLCache[tuple[Any, ...], int] = TTLCache(maxsize=1024, ttl=_COUNT_TTL)
_counts_lock = threading.Lock()  # a TTLCache is not safe across threads (gthread workers)


def _study_key(study: Study) -> tuple[Any, ...]:
    return (study.pk, study.created_at)


def quality_item_count(*, study: Study) -> int:
    """The study's quality-check items in use, not retired (kept a minute per process: see
    `_COUNT_TTL`)."""
    if not study.quality_check_rate:
        return 0
    active = QualityCheckItem.objects.filter(study=study, retired_at__isnull=True)
    return _counted(_qc_counts, study, active.count)


def quality_item_count_forget(*, study: Study) -> None:
    with _counts_lock:
        _qc_counts.pop(_study_key(study), None)
        _context_counts.pop(_study_key(study), None)


def _contexts_with_pairs(study: Study) -> int:
    pairs = Pair.objects.filter(study=study)
    return _counted(_context_counts, study, pairs.values("context_id").distinct().count)


def _counted(cache: TTLCache[tuple[Any, ...], int], study: Study, count: Callable[[], int]) -> int:
    key = _study_key(study)
    with _counts_lock:
        cached = cache.get(key)
    if cached is None:
        cached = count()
        with _counts_lock:
            cache[key] = cached
    return cached


def per_context_limit(*, study: Study) -> int:
    """How many items of one context a rater may get: the study's setting, where the design
    allows it. A study with fewer contexts than `items_per_rater` could not fill a queue at
    one item per context, so the limit rises to the fewest items per context that can.
    """
    limit = max(1, study.max_items_per_context)
    contexts = _contexts_with_pairs(study)
    if contexts and contexts * limit < study.items_per_rater:
        limit = -(-study.items_per_rater // contexts)  # ceiling division
    return limit


# --- The study admin's view of rater quality ---------------------------------------------


@dataclass(frozen=True)
class RaterStats:
    rater: Rater
    n_real: int
    n_checks: int
    n_passed: int
    median_ms: float | None

    @property
    def check_accuracy(self) -> float | None:
        return self.n_passed / self.n_checks if self.n_checks else None


def rater_stats(*, study: Study, raters: list[Rater] | None = None) -> list[RaterStats]:
    """Per rater: real items judged, checks answered and passed, median time on real items."""
    raters = (
        raters
        if raters is not None
        else list(Rater.objects.filter(study=study).order_by("created_at", "pk"))
    )
    rows = Judgment.objects.filter(
        study=study, rater__in=[r.pk for r in raters], judge_kind="human"
    ).values_list("rater_id", "quality_check", "passed_check", "duration_ms")
    per_rater: dict[int, list[Any]] = {r.pk: [] for r in raters}
    for rater_id, is_check, passed, duration in rows:
        per_rater[rater_id].append((is_check, passed, duration))
    return [_stats_for(rater, per_rater[rater.pk]) for rater in raters]


def _stats_for(rater: Rater, rows: list[Any]) -> RaterStats:
    durations = [d for is_check, _, d in rows if not is_check and d is not None]
    checks = [passed for is_check, passed, _ in rows if is_check]
    return RaterStats(
        rater=rater,
        n_real=sum(1 for is_check, _, _ in rows if not is_check),
        n_checks=len(checks),
        n_passed=sum(1 for passed in checks if passed),
        median_ms=statistics.median(durations) if durations else None,
    )
