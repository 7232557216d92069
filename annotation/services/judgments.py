"""Submitting a judgment: canonical orientation, exactly once, counted under the pair lock."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from core.db import retry_on_conflict

from ..models import Assignment, Judgment, Pair, QualityCheckItem, Rater
from ..selectors import QUEUE_COUNTS_SQL, hot_cursor, queue_state_from_counts
from .adaptive import is_adaptive
from .assignments import (
    _assignment_next,
    _Busy,
    _pair_has_room,
    assignment_next,
    claim_candidate_sql,
    claim_params,
)
from .common import (
    HUMAN_STRENGTH_MAX,
    LEASE_RAN_OUT,
    PAIR_FULL,
    STOPPED,
    UNREAD,
    AssignmentNotFound,
    SubmitResult,
    insert_statement,
    mark_saved,
    model_insert,
)


def choice_to_verdict(*, choice: int, shown_left: str) -> tuple[str, int | None]:
    """Page scale point (1 = A significantly better ... 5) -> canonical (winner, strength)."""
    if choice == 3:
        return "tie", None
    shown_right = "b" if shown_left == "a" else "a"
    winner = shown_left if choice < 3 else shown_right
    strength = 2 if choice in (1, 5) else 1
    return winner, strength


def axes_to_canonical(*, marks: dict[str, str], shown_left: str) -> dict[str, dict[str, Any]]:
    """Per-axis page marks {"H": "A"|"B"|"same"} -> {"H": {"winner": "a"|"b"|"tie"}}."""
    shown_right = "b" if shown_left == "a" else "a"
    page_to_side = {"A": shown_left, "B": shown_right, "same": "tie"}
    return {
        axis: {"winner": page_to_side[mark]} for axis, mark in marks.items() if mark in page_to_side
    }


@retry_on_conflict
def judgment_submit(
    *,
    rater: Rater,
    assignment: Assignment,
    choice: int,
    axes: dict[str, str] | None = None,
    rationale: str = "",
    now: datetime | None = None,
) -> SubmitResult:
    """Store the rater's verdict on one assignment, exactly once (see `_judgment_submit`)."""
    with transaction.atomic():
        return _judgment_submit(
            rater=rater,
            assignment=assignment,
            choice=choice,
            axes=axes or {},
            rationale=rationale,
            now=now or timezone.now(),
        )


def judgment_submit_and_next(
    *,
    rater: Rater,
    assignment: Assignment,
    choice: int,
    axes: dict[str, str] | None = None,
    rationale: str = "",
    now: datetime | None = None,
    allow_new: bool = True,
) -> tuple[SubmitResult, Assignment | None]:
    """The rater's round trip: store the verdict and lease the next item in ONE transaction
    (one commit, i.e. one WAL flush, per round trip: the hot path of the rater pages).

    Only when every candidate pair is locked by others does the next item come from a second
    transaction (`assignment_next`, which tries again until one is free).
    """
    result, following = _submit_and_claim(
        rater=rater,
        assignment=assignment,
        choice=choice,
        axes=axes or {},
        rationale=rationale,
        now=now or timezone.now(),
        allow_new=allow_new,
    )
    if isinstance(following, _Busy):  # the one instance, BUSY
        following = assignment_next(rater=rater, allow_new=allow_new)
    return result, following


@retry_on_conflict
def _submit_and_claim(
    *,
    rater: Rater,
    assignment: Assignment,
    choice: int,
    axes: dict[str, str],
    rationale: str,
    now: datetime,
    allow_new: bool,
) -> tuple[SubmitResult, Assignment | None | _Busy]:
    """The verdict and the next lease in one transaction; run again whole if PostgreSQL
    aborts it (a rolled-back submit stored nothing, so running it again stores it once)."""
    with transaction.atomic():
        result = _judgment_submit(
            rater=rater,
            assignment=assignment,
            choice=choice,
            axes=axes,
            rationale=rationale,
            now=now,
            claim_next=allow_new,
        )
        following = _assignment_next(
            rater=rater,
            now=now,
            may_wait=False,
            allow_new=allow_new,
            state=result.queue,
            candidate=result.candidate,
        )
    return result, following


def _judgment_submit(
    *,
    rater: Rater,
    assignment: Assignment,
    choice: int,
    axes: dict[str, str],
    rationale: str,
    now: datetime,
    claim_next: bool = False,
) -> SubmitResult:
    """Store the rater's verdict on one assignment, exactly once.

    The assignment is claimed with a conditional UPDATE (leased/expired -> submitted): of two
    concurrent or replayed POSTs exactly one changes the row, the other returns the stored
    judgment and stores nothing new. Raises AssignmentNotFound for another rater's assignment.
    A late submit whose pair was filled by others meanwhile is refused: the assignment is
    marked expired and the result carries no judgment. With `claim_next`, the same statement
    also claims the rater's next pair when it can (`SubmitResult.candidate`).
    """
    if assignment.rater_id != rater.pk:
        raise AssignmentNotFound(assignment.token)
    if assignment.status == Assignment.Status.RELEASED:
        return SubmitResult(judgment=None, created=False, refusal=STOPPED)
    if _can_submit_in_one_statement(assignment=assignment, now=now):
        return _submit_in_one_statement(
            rater=rater,
            assignment=assignment,
            choice=choice,
            axes=axes,
            rationale=rationale,
            now=now,
            claim_next=claim_next,
        )
    if not _claim_assignment(assignment_id=assignment.pk, now=now):
        return _not_claimed(assignment_id=assignment.pk)
    if assignment.pair_id is not None and not _count_pair_judgment(assignment=assignment, now=now):
        Assignment.objects.filter(pk=assignment.pk).update(
            status=Assignment.Status.EXPIRED, submitted_at=None
        )
        ran_out = _lease_ran_out(assignment=assignment, now=now)
        return SubmitResult(
            judgment=None, created=False, refusal=LEASE_RAN_OUT if ran_out else PAIR_FULL
        )
    judgment = _judgment_create(
        rater=rater,
        assignment=assignment,
        choice=choice,
        axes=axes or {},
        rationale=rationale,
        now=now,
    )
    if assignment.quality_item_id is not None:
        from ..quality import rater_quality_update

        rater_quality_update(rater=rater, with_timing=False)
    return SubmitResult(judgment=judgment, created=True)


def _can_submit_in_one_statement(*, assignment: Assignment, now: datetime) -> bool:
    """The common case: a real pair under a running lease (its place in the quota is held)."""
    return (
        connection.vendor == "postgresql"  # data-modifying CTEs
        and assignment.pair_id is not None
        and assignment.status == Assignment.Status.LEASED
        and assignment.lease_expires_at > now
    )


# Claim the assignment, count the pair and insert the judgment in ONE statement (one round trip
# instead of three). Each step runs only if the one before it changed a row; the SELECT says
# which did, so a replay (nothing claimed) and a full pair (claimed, not counted) are told apart.
# It also counts the rater's queue (selectors.QUEUE_COUNTS_SQL) for the next item. That count
# reads the rows as they were before this statement: the claimed assignment is left out of the
# running leases, and added to the judged ones when its judgment was stored.
# With `claim_next` it also runs the claim for the rater's next pair (assignments._CLAIM_SQL,
# which locks the pair it picks). The just-submitted pair is among the rater's assignments in
# that snapshot, so it is never picked again; the lease statement rechecks the room under the
# lock with a fresh snapshot, as after a claim of its own. The rater's next item is a pair nine
# times in ten; when it is not (a check is due, the queue is done), the lock is simply released
# at the commit.
_SUBMIT_SQL = """
WITH claimed AS (
  UPDATE {assignment} SET status = %s, submitted_at = %s
  WHERE id = %s AND status IN (%s, %s) RETURNING id
), counted AS (
  UPDATE {pair} SET n_judgments = n_judgments + 1
  WHERE id = %s AND n_judgments < quota AND EXISTS (SELECT 1 FROM claimed) RETURNING id
), inserted AS (
  INSERT INTO {judgment} {columns} SELECT {placeholders} WHERE EXISTS (SELECT 1 FROM counted)
  RETURNING id
){candidate_cte}
SELECT (SELECT id FROM claimed), (SELECT id FROM inserted), queue.*{candidate_column}
FROM ({queue}) queue
"""


@functools.cache
def _submit_sql(
    table: str, columns: str, placeholders: str, claim_next: bool, vendor: str, adaptive: bool
) -> str:
    """The submit statement, built once per shape (it is sent on every round trip)."""
    return _SUBMIT_SQL.format(
        assignment=Assignment._meta.db_table,
        pair=Pair._meta.db_table,
        judgment=table,
        columns=columns,
        placeholders=placeholders,
        candidate_cte=f", candidate AS ({claim_candidate_sql(adaptive=adaptive)})"
        if claim_next
        else "",
        candidate_column=", (SELECT id FROM candidate)" if claim_next else "",
        queue=QUEUE_COUNTS_SQL.format(assignment=Assignment._meta.db_table),
    )


def _submit_in_one_statement(
    *,
    rater: Rater,
    assignment: Assignment,
    choice: int,
    axes: dict[str, str],
    rationale: str,
    now: datetime,
    claim_next: bool,
) -> SubmitResult:
    judgment = _judgment_build(
        rater=rater, assignment=assignment, choice=choice, axes=axes, rationale=rationale, now=now
    )
    table, columns, placeholders, values = insert_statement(judgment, typed=True)
    sql = _submit_sql(
        table, columns, placeholders, claim_next, connection.vendor, is_adaptive(rater)
    )
    status = Assignment.Status
    params = [
        status.SUBMITTED.value,
        connection.ops.adapt_datetimefield_value(now),
        assignment.pk,
        status.LEASED.value,
        status.EXPIRED.value,
        assignment.pair_id,
        *values,
        *(claim_params(rater=rater, now=now) if claim_next else ()),
        assignment.pk,
        rater.pk,
    ]
    with hot_cursor() as cursor:
        cursor.execute(sql, params)
        claimed, inserted, real, checks, leased_id, *candidate = cursor.fetchone()
    if claimed is None:  # a replay or a second tab: the first answer stands
        return _not_claimed(assignment_id=assignment.pk)
    if inserted is None:  # claimed, but the pair was full although this lease still ran
        Assignment.objects.filter(pk=assignment.pk).update(
            status=Assignment.Status.EXPIRED, submitted_at=None
        )
        return SubmitResult(judgment=None, created=False, refusal=PAIR_FULL)
    judgment.pk = inserted
    mark_saved(judgment)
    queue = queue_state_from_counts(real + 1, checks, leased_id)  # + the judgment just stored
    following = candidate[0] if candidate else UNREAD
    return SubmitResult(judgment=judgment, created=True, queue=queue, candidate=following)


def _not_claimed(*, assignment_id: int) -> SubmitResult:
    """The first answer stands (a replay, a second tab), unless the rater stopped meanwhile
    and the item was released: then nothing is stored and the refusal says so."""
    stored = Judgment.objects.filter(assignment_id=assignment_id).first()
    if (
        stored is None
        and Assignment.objects.filter(pk=assignment_id, status=Assignment.Status.RELEASED).exists()
    ):
        return SubmitResult(judgment=None, created=False, refusal=STOPPED)
    return SubmitResult(judgment=stored, created=False)


def _lease_ran_out(*, assignment: Assignment, now: datetime) -> bool:
    return assignment.status == Assignment.Status.EXPIRED or assignment.lease_expires_at <= now


def _count_pair_judgment(*, assignment: Assignment, now: datetime) -> bool:
    """Increment the pair's counter under its row lock; False (nothing counted) if no room.

    Room is only in doubt for a late submit on an expired lease: a running lease already
    holds one of the pair's free places.
    """
    expired = _lease_ran_out(assignment=assignment, now=now)
    assert assignment.pair_id is not None  # only pairs' judgments are counted
    if expired and not _pair_has_room(
        pair_id=assignment.pair_id, now=now, exclude_assignment_id=assignment.pk
    ):
        return False
    return _execute(_COUNT_SQL.format(pair=Pair._meta.db_table), [assignment.pair_id]) == 1


# Both run on every round trip, so they are hand-written (no ORM compile on the hot path).
# Leased/expired -> submitted: of two concurrent or replayed POSTs exactly one changes the row.
_CLAIM_SQL = """
UPDATE {assignment} SET status = %s, submitted_at = %s WHERE id = %s AND status IN (%s, %s)
"""
_COUNT_SQL = "UPDATE {pair} SET n_judgments = n_judgments + 1 WHERE id = %s AND n_judgments < quota"


def _claim_assignment(*, assignment_id: int, now: datetime) -> bool:
    status = Assignment.Status
    params = [
        status.SUBMITTED.value,
        connection.ops.adapt_datetimefield_value(now),
        assignment_id,
        status.LEASED.value,
        status.EXPIRED.value,
    ]
    return _execute(_CLAIM_SQL.format(assignment=Assignment._meta.db_table), params) == 1


def _execute(sql: str, params: list[Any]) -> int:
    with hot_cursor() as cursor:
        cursor.execute(sql, params)
        count: int = cursor.rowcount
        return count


def _judgment_create(
    *,
    rater: Rater,
    assignment: Assignment,
    choice: int,
    axes: dict[str, str],
    rationale: str,
    now: datetime,
) -> Judgment:
    return model_insert(
        _judgment_build(
            rater=rater,
            assignment=assignment,
            choice=choice,
            axes=axes,
            rationale=rationale,
            now=now,
        )
    )


def _judgment_build(
    *,
    rater: Rater,
    assignment: Assignment,
    choice: int,
    axes: dict[str, str],
    rationale: str,
    now: datetime,
) -> Judgment:
    winner, strength = choice_to_verdict(choice=choice, shown_left=assignment.shown_left)
    item = assignment.quality_item
    return Judgment(
        study_id=rater.study_id,
        pair_id=assignment.pair_id,
        quality_item=item,
        assignment=assignment,
        judge_kind="human",
        rater=rater,
        judge=rater.pseudonym,
        winner=winner,
        strength=strength,
        strength_max=HUMAN_STRENGTH_MAX,
        axes=axes_to_canonical(marks=axes, shown_left=assignment.shown_left),
        rationale=rationale.strip(),
        shown_left=assignment.shown_left,
        duration_ms=max(0, int((now - assignment.served_at).total_seconds() * 1000)),
        submitted_at=now,
        quality_check=item is not None,
        passed_check=_check_passed(item=item, choice=choice, winner=winner),
        metadata={"choice": choice},
    )


def _check_passed(*, item: QualityCheckItem | None, choice: int, winner: str) -> bool | None:
    """Gold: the expected side at either strength. Attention: exactly the asked scale point."""
    if item is None:
        return None
    if item.kind == QualityCheckItem.Kind.ATTENTION and item.expected_choice:
        return choice == item.expected_choice
    return winner == item.expected
