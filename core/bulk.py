"""Inserting many new rows at once: one binary `COPY` on PostgreSQL, with the new keys.

Django's `bulk_create` needs a model instance per row and sends each batch as an
`INSERT ... SELECT * FROM UNNEST(...)` whose arrays psycopg builds value by value in Python; a
binary `COPY` streams plain tuples in one statement. `COPY` returns no keys, so the primary keys
are taken from the table's sequence first (one `nextval` query for all of them) and written with
the rows. The columns a caller leaves out get their model defaults as `bulk_create` would give
them: a callable default is called for each row, `auto_now`/`auto_now_add` times are the time of
the insert. Constraints and checks apply as with any insert. Other databases get `bulk_create`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import Field, Model
from django.utils import timezone

BATCH = 2000


def copy_insert(
    model: type[Model], columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> list[int]:
    """Insert `rows` (values of `columns`, attribute names such as `context_id`, in that order)
    as new rows of `model`; their primary keys, in row order.

    Each value is written as given, so `columns` takes fields whose Python value is what the
    column stores (numbers, text, booleans, times, JSON, keys)."""
    if not rows:
        return []
    if connection.vendor != "postgresql":
        per_row = _defaults(model, columns)
        objs = [
            model(**dict(zip(columns, row, strict=True)), **{f.attname: d() for f, d in per_row})
            for row in rows
        ]
        model._default_manager.bulk_create(objs, batch_size=BATCH)
        return [int(obj.pk) for obj in objs]
    ids = new_ids(model, len(rows))
    pk = model._meta.pk
    assert pk is not None
    copy_rows(model, [pk.attname, *columns], ((i, *row) for i, row in zip(ids, rows, strict=True)))
    return ids


def new_ids(model: type[Model], n: int) -> list[int]:
    """PostgreSQL: `n` primary keys for new rows of `model`, taken from its table's sequence
    (rows may then be written with them later in the transaction, or by `copy_rows`)."""
    pk = model._meta.pk
    assert pk is not None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, pk.column, n],
        )
        return [i for (i,) in cursor.fetchall()]


def copy_rows(model: type[Model], columns: Sequence[str], rows: Iterable[tuple[Any, ...]]) -> None:
    """PostgreSQL: write `rows` (values of `columns`, in that order; the primary key among them
    if it is to be given) by one binary COPY; the other columns get their model defaults."""
    meta = model._meta
    per_row = _defaults(model, columns)
    table = meta.db_table
    names = [*(_field(model, c).column for c in columns), *(f.column for f, _ in per_row)]
    makers = [d for _, d in per_row]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = %s::regclass", [table]
        )
        types = dict(cursor.fetchall())
        quote = connection.ops.quote_name
        listed = ", ".join(quote(str(n)) for n in names)
        sql = f"COPY {quote(table)} ({listed}) FROM STDIN (FORMAT BINARY)"
        with cursor.cursor.copy(sql) as copy:
            copy.set_types([types[n] for n in names])
            for row in rows:
                copy.write_row((*row, *(d() for d in makers)) if makers else row)


def _defaults(
    model: type[Model], columns: Sequence[str]
) -> list[tuple[Field[Any, Any], Callable[[], Any]]]:
    """(field, a function giving its value for one new row) for each field not in `columns`
    (the primary key left to the database)."""
    meta = model._meta
    given = {_field(model, name).attname for name in columns}
    fields = [f for f in meta.concrete_fields if f is not meta.pk and f.attname not in given]
    now = timezone.now()
    out: list[tuple[Field[Any, Any], Callable[[], Any]]] = []
    for field in fields:
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            out.append((field, functools.partial(_same, now)))
        elif field.has_default() and callable(field.default):
            out.append((field, field.default))
        else:
            out.append((field, functools.partial(_same, field.get_default())))
    return out


def _same(value: Any) -> Any:
    return value


def _field(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)  # a name or an attribute name (`context_id`)
    assert isinstance(field, Field), name
    return field


#: Rows written at once above which the planner's statistics of the tables are refreshed.
ANALYZE_AFTER = 10_000


def statistics_refresh(models: Sequence[type[Model]], written: int) -> None:
    """PostgreSQL: once the transaction commits, ANALYZE the tables of `models` when `written`
    rows went into them at once. Until then the planner plans the next reads of those tables
    for the table as it was (a refit's join of 3,000,000 new judgments was planned for 2,447 and
    ran as nested loops); autovacuum analyzes later, or never where it is off."""
    if connection.vendor != "postgresql" or written < ANALYZE_AFTER:
        return
    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models)

    def analyze() -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {tables}")

    transaction.on_commit(analyze)
