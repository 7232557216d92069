"""The assignment engine: which item a rater gets next, under row locks.

Engine invariants (paper 9.6: each pair gets exactly its quota of judgments from distinct raters):
- a pair never holds more than `quota - n_judgments` running leases: a claimer locks the pair
  row (PostgreSQL `FOR NO KEY UPDATE SKIP LOCKED`) and recounts the leases *after* taking the
  lock, so every earlier claimer of that pair has committed and is seen;
- `Pair.n_judgments` moves only in `judgments.py`, with F() under the pair's row lock, guarded by
  `n_judgments < quota` (the check constraint `pair_within_quota` backs it up);
- a rater has at most one assignment per pair (constraint `assignment_rater_pair_once`).

No deadlocks: a transaction waits for at most one row lock sequence, taken first and always in
the same order (the rater's assignment row, then its pair: a submit, a late submit, a renewal).
Every other pair lock is taken with SKIP LOCKED, which never waits. When every candidate pair is
locked by others for a moment, the claim does not wait on one (two claimers holding a pair each
could wait on each other's: PostgreSQL's deadlock detector then kills one, and a rater saw the
error page); `assignment_next` commits and tries again a few milliseconds later, in a new
transaction, for up to `CLAIM_PATIENCE_SECONDS` (then `ClaimBusy`: the page asks the rater to try
again). Any deadlock that could still happen (a lock order outside this module) is retried
inside the request by `core.db.retry_on_conflict`.

Leases: an item stays reserved for `Study.lease_seconds`. Expired leases are ignored when
counting and marked expired lazily. A rater who comes back after their lease ran out gets the
same item again if its pair still has room (the lease is renewed); otherwise it is marked
expired and they get another item. A late submit on an expired lease is accepted when the pair
still has room without it, and politely refused (`SubmitResult.refused`) otherwise.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from completions.models import Completion, DialogueContext
from core.db import retry_on_conflict

from ..models import Assignment, Pair, QualityCheckItem, Rater
from ..selectors import (
    ITEM_RELATED,
    QueueState,
    hot_cursor,
    per_context_limit,
    quality_item_count,
    queue_plan,
    rater_queue_state,
)
from .adaptive import adaptive_claim_sql, is_adaptive, rank_bump_cte
from .common import UNREAD, ClaimBusy, _Unread, insert_statement, mark_saved, model_insert

CLAIM_ATTEMPTS = 8
#: How long a claim keeps trying while every pair with room is locked by other claimers.
CLAIM_PATIENCE_SECONDS = 5.0


@retry_on_conflict
def assignment_next(
    *, rater: Rater, now: datetime | None = None, allow_new: bool = True
) -> Assignment | None:
    """The rater's current item (resume), else a newly claimed one; None when they are done.

    `allow_new=False` (a paused study) only gives back an item the rater still holds. Raises
    `ClaimBusy` when every pair with room stayed locked by others for `CLAIM_PATIENCE_SECONDS`.
    """
    deadline = time.monotonic() + CLAIM_PATIENCE_SECONDS
    pause = 0.002
    while True:
        with transaction.atomic():
            found = _assignment_next(rater=rater, now=now or timezone.now(), allow_new=allow_new)
        if not isinstance(found, _Busy):
            return found
        # Other claimers hold every candidate for the few milliseconds of their transactions:
        # this one committed (it holds no lock now) and tries again a moment later.
        if time.monotonic() + pause > deadline:
            raise ClaimBusy(rater.pk)
        time.sleep(pause * (0.5 + random.random()))
        pause = min(pause * 2, 0.05)


def assignment_keepalive(*, assignment: Assignment, now: datetime | None = None) -> bool:
    """Extend a running lease while its page is open and the rater active (the heartbeat).

    One conditional UPDATE: only a lease that is still running is extended, so a heartbeat
    never revives an item that has already gone back to the pool.
    """
    now = now or timezone.now()
    expires = now + timedelta(seconds=assignment.rater.study.lease_seconds)
    return (
        Assignment.objects.filter(
            pk=assignment.pk, status=Assignment.Status.LEASED, lease_expires_at__gt=now
        ).update(lease_expires_at=expires)
        == 1
    )


class _Busy:
    """Every candidate pair is locked by others (or, with `may_wait` False, the rater's own
    item needs a lock this transaction may not wait for): try again in a new transaction."""


BUSY = _Busy()


def _assignment_next(
    *,
    rater: Rater,
    now: datetime,
    may_wait: bool = True,
    allow_new: bool = True,
    state: QueueState | None = None,
    candidate: int | None | _Unread = UNREAD,
) -> Assignment | None | _Busy:
    """Assignment, None (done, or nothing new allowed) or BUSY (try again, see `_claim_pair`).

    `may_wait`: this transaction holds no lock yet, so renewing the rater's own item may wait
    for its assignment's and pair's locks (in that order). A transaction that already holds a
    pair lock (the submit of the round trip) must not: two raters could each wait for the
    other's pair (a deadlock).
    `state` is the rater's queue and `candidate` the pair a claim picked (and locked) when the
    caller has already read them: the submit statement does both.
    """
    if state is None:
        state = rater_queue_state(rater=rater)
    if state.leased_id is not None:
        current = Assignment.objects.select_related(*ITEM_RELATED).get(pk=state.leased_id)
        current.rater = rater
        if current.lease_expires_at > now:
            return current
        if not allow_new:
            return None
        if not may_wait:
            return BUSY  # renewing locks a pair
        if (renewed := _lease_renew(assignment=current, now=now)) is not None:
            return renewed
    if not allow_new:
        return None
    study = rater.study
    progress = state.progress
    plan = queue_plan(study=study, rater=rater, n_quality_items=quality_item_count(study=study))
    position = progress.done
    wants_check = position in plan.check_positions and progress.done_checks < plan.n_checks
    if wants_check and (check := _lease_check(rater=rater, now=now, position=position)):
        return check
    if progress.done_real < plan.n_real:
        return _claim_pair(rater=rater, now=now, position=position, candidate=candidate)
    if progress.done_checks < plan.n_checks:
        return _lease_check(rater=rater, now=now, position=position)
    return None


_LOCK_ASSIGNMENT_SQL = "SELECT id FROM {assignment} WHERE id = %s FOR NO KEY UPDATE"


def _lease_renew(*, assignment: Assignment, now: datetime) -> Assignment | None:
    """Give a returning rater the same item again if its pair still has room.

    Locks the assignment row before the pair's, the order a submit takes them in."""
    if connection.features.has_select_for_update:
        with hot_cursor() as cursor:
            sql = _LOCK_ASSIGNMENT_SQL.format(assignment=Assignment._meta.db_table)
            cursor.execute(sql, [assignment.pk])
    if assignment.pair_id is not None and not _pair_has_room(
        pair_id=assignment.pair_id, now=now, exclude_assignment_id=assignment.pk
    ):
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED)
        return None
    assignment.served_at = now  # time on task restarts with the page shown again
    assignment.lease_expires_at = now + timedelta(seconds=assignment.rater.study.lease_seconds)
    assignment.save(update_fields=["served_at", "lease_expires_at"])
    return assignment


def _pair_has_room(*, pair_id: int, now: datetime, exclude_assignment_id: int | None) -> bool:
    """Lock the pair's row and check its room (judgments + running leases < quota)."""
    return (
        _pair_locked_with_room(
            pair_id=pair_id, now=now, exclude_assignment_id=exclude_assignment_id
        )
        is not None
    )


# Read after the pair's row lock is held, so every earlier claimer has committed and is
# counted. Hand-written for the same reason as the claim below: it runs on every round trip.
_ROOM_SQL = """
SELECT p.n_judgments, p.quota, (
    SELECT COUNT(*) FROM {assignment} l
    WHERE l.pair_id = p.id AND l.status = 'leased' AND l.lease_expires_at > %s AND l.id <> %s
  ), p.study_id, p.context_id, p.completion_a_id, p.completion_b_id, c.turns, ca.text, cb.text
FROM {pair} p
JOIN {context} c ON c.id = p.context_id
JOIN {completion} ca ON ca.id = p.completion_a_id
JOIN {completion} cb ON cb.id = p.completion_b_id
WHERE p.id = %s {lock}
"""

_LOCK_SQL = "SELECT id FROM {pair} WHERE id = %s FOR NO KEY UPDATE"


def _pair_locked_with_room(
    *, pair_id: int, now: datetime, exclude_assignment_id: int | None = None
) -> Pair | None:
    """The pair (with what the judging page shows) if it has room, under its row lock.

    The lock is taken by a statement of its own and the places are counted by the next one:
    in READ COMMITTED each statement reads the rows as they were when it began, so a count
    made by the statement that waited for the lock would miss the lease that the holder of
    the lock renewed or took meanwhile (two renewals 10 ms apart both saw the last place).
    Renewals and late submits take this path; the claim of a new item has the same two steps
    (its claim statement locks, `_LEASE_SQL` counts).
    """
    sql = _ROOM_SQL.format(
        assignment=Assignment._meta.db_table,
        pair=Pair._meta.db_table,
        context=DialogueContext._meta.db_table,
        completion=Completion._meta.db_table,
        lock="",
    )
    params = [connection.ops.adapt_datetimefield_value(now), exclude_assignment_id or 0, pair_id]
    with hot_cursor() as cursor:
        if connection.features.has_select_for_update:
            cursor.execute(_LOCK_SQL.format(pair=Pair._meta.db_table), [pair_id])
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None or row[0] + row[2] >= row[1]:
        return None
    n_judgments, quota, _, study_id, context_id, a_id, b_id, turns, text_a, text_b = row
    return Pair(
        id=pair_id,
        study_id=study_id,
        n_judgments=n_judgments,
        quota=quota,
        context=DialogueContext(id=context_id, turns=_json(turns)),
        completion_a=Completion(id=a_id, text=text_a),
        completion_b=Completion(id=b_id, text=text_b),
    )


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


# The claim runs on every "next item", so it is one hand-written statement (no ORM compile
# on the hot path): the least-judged pair of the study that this rater has not had and whose
# judgments plus running leases leave room, locked without waiting on rows others hold. A pair
# with a text-unknown completion (a judgments-import placeholder) is never served. NO KEY
# UPDATE is the lock an UPDATE of the counter takes anyway; unlike FOR UPDATE it lets others
# insert rows that reference the pair (an LLM verdict, a judgment) while a rater holds it.
_CLAIM_SQL = """
SELECT p.id FROM {pair} p
WHERE p.study_id = %s AND p.n_judgments < p.quota {excluded}
  AND NOT EXISTS (
    SELECT 1 FROM {completion} c
    WHERE c.id IN (p.completion_a_id, p.completion_b_id) AND c.text_unknown
  )
  AND p.n_judgments + (
    SELECT COUNT(*) FROM {assignment} l
    WHERE l.pair_id = p.id AND l.status = 'leased' AND l.lease_expires_at > %s
  ) < p.quota
  AND NOT EXISTS (SELECT 1 FROM {assignment} h WHERE h.rater_id = %s AND h.pair_id = p.id)
  AND p.context_id NOT IN (
    SELECT hp.context_id FROM {assignment} h JOIN {pair} hp ON hp.id = h.pair_id
    WHERE h.rater_id = %s GROUP BY hp.context_id HAVING COUNT(*) >= %s
  )
ORDER BY p.n_judgments
LIMIT 1 {lock}
"""


def claim_candidate_sql(*, n_excluded: int = 0, locked: bool = True, adaptive: bool = False) -> str:
    """The claim statement (`_CLAIM_SQL`) for this database; its parameters: `claim_params`.

    It never waits for a lock: rows others hold are skipped. ``locked=False``: the same
    question without taking any lock (is any pair left at all, held by others or not?).
    ``adaptive``: the same statement in the order an adaptive study's refit planned."""
    lock = ""
    if locked and connection.features.has_select_for_update:
        lock = "FOR NO KEY UPDATE OF p SKIP LOCKED"
    sql = _CLAIM_SQL.format(
        pair=Pair._meta.db_table,
        assignment=Assignment._meta.db_table,
        completion=Completion._meta.db_table,
        lock=lock,
        excluded=f"AND p.id NOT IN ({', '.join(['%s'] * n_excluded)})" if n_excluded else "",
    )
    return adaptive_claim_sql(sql) if adaptive else sql


def claim_params(*, rater: Rater, now: datetime, excluded: Sequence[int] = ()) -> list[Any]:
    return [
        rater.study_id,
        *excluded,
        connection.ops.adapt_datetimefield_value(now),
        rater.pk,
        rater.pk,
        per_context_limit(study=rater.study),
    ]


def _claim_candidate(*, rater: Rater, now: datetime, excluded: list[int]) -> int | None:
    adaptive = is_adaptive(rater)
    pair_id = _claim_run(rater=rater, now=now, excluded=excluded, adaptive=adaptive)
    if pair_id is None and adaptive:  # priorities not written yet, or every one taken
        pair_id = _claim_run(rater=rater, now=now, excluded=excluded, adaptive=False)
    return pair_id


def _claim_run(
    *, rater: Rater, now: datetime, excluded: list[int], adaptive: bool, locked: bool = True
) -> int | None:
    sql = claim_candidate_sql(n_excluded=len(excluded), locked=locked, adaptive=adaptive)
    with hot_cursor() as cursor:
        cursor.execute(sql, claim_params(rater=rater, now=now, excluded=excluded))
        row = cursor.fetchone()
    pair_id: int | None = row[0] if row else None
    return pair_id


def _claim_pair(
    *,
    rater: Rater,
    now: datetime,
    position: int,
    candidate: int | None | _Unread = UNREAD,
) -> Assignment | None | _Busy:
    """Lease the least-filled pair this rater has not had and that still has room.

    SKIP LOCKED lets concurrent raters take different pairs instead of queueing on one, and
    never waits. When it finds nothing, a second look without locks tells "every pair with
    room is held by others for a moment" (BUSY: the caller tries again in a new transaction)
    from "nothing left" (None): the rater is never wrongly told the study is full. The room
    check is repeated after the lock because the lease count in the claiming query was read
    before it; a pair that turns out full stays locked (and excluded) until the commit, which
    is harmless because nobody waits for it while holding another. `candidate` is the first
    claim's result when the caller has already run it (the submit statement does).
    """
    excluded: list[int] = []
    for _attempt in range(CLAIM_ATTEMPTS):
        if isinstance(candidate, _Unread):  # the one instance, UNREAD
            pair_id = _claim_candidate(rater=rater, now=now, excluded=excluded)
        else:
            pair_id, candidate = candidate, UNREAD
        if pair_id is None:
            held = _claim_run(rater=rater, now=now, excluded=excluded, adaptive=False, locked=False)
            return None if held is None else BUSY
        if leased := _lease_if_room(rater=rater, pair_id=pair_id, now=now, position=position):
            return leased
        excluded.append(pair_id)
    return BUSY


def _new_lease(*, rater: Rater, now: datetime, position: int, **item: Any) -> Assignment:
    return Assignment(
        rater=rater,
        position=position,
        shown_left=random.choice("ab"),
        served_at=now,
        lease_expires_at=now + timedelta(seconds=rater.study.lease_seconds),
        **item,
    )


def _lease(*, rater: Rater, now: datetime, position: int, **item: Any) -> Assignment:
    return model_insert(_new_lease(rater=rater, now=now, position=position, **item))


# The room recheck and the new lease in ONE statement (PostgreSQL): the claim above already
# holds the pair's row lock, so this statement's fresh snapshot counts every earlier lease; the
# INSERT runs only if there is room, and the same statement returns what the page shows.
_LEASE_SQL = """
WITH room AS (
  SELECT p.id FROM {pair} p
  WHERE p.id = %s AND p.n_judgments < p.quota AND p.n_judgments + (
    SELECT COUNT(*) FROM {assignment} l
    WHERE l.pair_id = p.id AND l.status = 'leased' AND l.lease_expires_at > %s
  ) < p.quota
), leased AS (
  INSERT INTO {assignment} {columns} SELECT {placeholders} WHERE EXISTS (SELECT 1 FROM room)
  RETURNING id
){bump}
SELECT (SELECT id FROM leased), p.study_id, p.context_id, p.completion_a_id, p.completion_b_id,
       p.n_judgments, p.quota, c.turns, ca.text, cb.text
FROM {pair} p
JOIN {context} c ON c.id = p.context_id
JOIN {completion} ca ON ca.id = p.completion_a_id
JOIN {completion} cb ON cb.id = p.completion_b_id
WHERE p.id = %s
"""


def _lease_if_room(
    *, rater: Rater, pair_id: int, now: datetime, position: int
) -> Assignment | None:
    """A new lease on the locked pair if it still has room, else None."""
    if connection.vendor != "postgresql":
        pair = _pair_locked_with_room(pair_id=pair_id, now=now)
        return None if pair is None else _lease(rater=rater, now=now, position=position, pair=pair)
    assignment = _new_lease(rater=rater, now=now, position=position, pair_id=pair_id)
    table, columns, placeholders, values = insert_statement(assignment, typed=True)
    adaptive = is_adaptive(rater)
    sql = _LEASE_SQL.format(
        bump=rank_bump_cte() if adaptive else "",
        pair=Pair._meta.db_table,
        assignment=table,
        context=DialogueContext._meta.db_table,
        completion=Completion._meta.db_table,
        columns=columns,
        placeholders=placeholders,
    )
    stamp = connection.ops.adapt_datetimefield_value(now)
    with hot_cursor() as cursor:
        cursor.execute(sql, [pair_id, stamp, *values, *([pair_id] if adaptive else []), pair_id])
        row = cursor.fetchone()
    if row is None or row[0] is None:
        return None
    leased_id, study_id, context_id, a_id, b_id, n_judgments, quota, turns, text_a, text_b = row
    assignment.pk = leased_id
    mark_saved(assignment)
    assignment.pair = Pair(
        id=pair_id,
        study_id=study_id,
        n_judgments=n_judgments,
        quota=quota,
        context=DialogueContext(id=context_id, turns=_json(turns)),
        completion_a=Completion(id=a_id, text=text_a),
        completion_b=Completion(id=b_id, text=text_b),
    )
    return assignment


def _lease_check(*, rater: Rater, now: datetime, position: int) -> Assignment | None:
    used = Assignment.objects.filter(rater=rater, quality_item=OuterRef("pk"))
    item = (
        QualityCheckItem.objects.filter(study_id=rater.study_id, retired_at__isnull=True)
        .filter(~Exists(used))
        .order_by("?")
        .first()
    )
    if item is None:
        return None
    # An attention check's instruction names a page side ("choose B ..."), so its replies keep
    # their stored order; gold items are drawn like real pairs.
    shown_left = "a" if item.kind == QualityCheckItem.Kind.ATTENTION else random.choice("ab")
    assignment = _lease(rater=rater, now=now, position=position, quality_item=item)
    if assignment.shown_left != shown_left:
        assignment.shown_left = shown_left
        assignment.save(update_fields=["shown_left"])
    return assignment
