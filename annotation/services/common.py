"""Shared definitions of the rater services: the scale, results and errors."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, cast

from django.db import connection
from django.db.models import Model

from ..models import Judgment
from ..selectors import QueueState, hot_cursor

SCALE = {
    1: "A is significantly better than B",
    2: "A is slightly better than B",
    3: "A and B are about the same",
    4: "B is slightly better than A",
    5: "B is significantly better than A",
}
HUMAN_STRENGTH_MAX = 2


class AssignmentNotFound(Exception):
    """The assignment does not exist or is not this rater's."""


class ClaimBusy(Exception):
    """Every pair with room stayed locked by other raters' claims: the rater should try again
    in a moment (the pages answer 503 with Retry-After; nothing was lost)."""


class _Unread:
    """No claim has been run yet for this request (unlike None: a claim found nothing)."""


UNREAD = _Unread()


# Why an answer was refused (`SubmitResult.refusal`), so the rater is told the true reason.
LEASE_RAN_OUT = "lease-ran-out"  # the reservation had run out and others completed the item
PAIR_FULL = "pair-full"  # the item had all its answers although the reservation still ran
STOPPED = "stopped"  # the rater stopped (or withdrew) while the item was open: never stored


@dataclass(frozen=True)
class SubmitResult:
    """`judgment` is None when an answer was refused; `refusal` says why (see above)."""

    judgment: Judgment | None
    created: bool
    queue: QueueState | None = None  # the rater's queue after this submit, when already read
    candidate: int | None | _Unread = UNREAD  # the next pair's claim, when already run
    refusal: str = ""

    @property
    def refused(self) -> bool:
        return self.judgment is None


def insert_statement(obj: Model, *, typed: bool = False) -> tuple[str, str, str, list[Any]]:
    """(table, "(cols)", placeholders, values) of a new instance, prepared as the ORM would.

    `typed` casts each placeholder to its column type, for an INSERT ... SELECT (where an
    untyped NULL or string would otherwise be read as text).
    """
    fields, table, columns, placeholders = _insert_shape(type(obj), typed, connection.vendor)
    values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    return table, columns, placeholders, values


@functools.cache
def _insert_shape(model: type[Model], typed: bool, vendor: str) -> tuple[list[Any], str, str, str]:
    """The fixed part of a model's INSERT (computed once: column types cost CPU each call)."""
    meta = model._meta
    fields = [f for f in meta.concrete_fields if f is not meta.pk]
    qn = connection.ops.quote_name
    columns = "(" + ", ".join(qn(cast(str, f.column)) for f in fields) + ")"
    if typed:
        placeholders = ", ".join(f"%s::{f.cast_db_type(connection)}" for f in fields)
    else:
        placeholders = ", ".join(["%s"] * len(fields))
    return fields, qn(meta.db_table), columns, placeholders


def model_insert[M: Model](obj: M) -> M:
    """INSERT a new instance with a hand-built statement: the round trip's two creates.

    The same values as `obj.save(force_insert=True)` (field defaults from __init__, each
    field's pre_save such as auto_now_add, and its database preparation) without compiling an
    ORM insert. No pre/post_save signals are sent (nothing in the project listens for them).
    """
    meta = obj._meta
    if not connection.features.can_return_columns_from_insert:
        obj.save(force_insert=True)
        return obj
    table, columns, placeholders, values = insert_statement(obj)
    pk = connection.ops.quote_name(cast(str, meta.pk.column))  # every model has a pk
    sql = f"INSERT INTO {table} {columns} VALUES ({placeholders}) RETURNING {pk}"
    with hot_cursor() as cursor:
        cursor.execute(sql, values)
        obj.pk = cursor.fetchone()[0]
    mark_saved(obj)
    return obj


def mark_saved(obj: Model) -> None:
    obj._state.adding = False
    obj._state.db = connection.alias
