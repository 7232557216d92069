"""PostgreSQL backend whose connection health check costs no round trip.

Django's `CONN_HEALTH_CHECKS` runs `SELECT 1` before each request's first query (about a tenth
of a rater round trip's time). An idle connection in autocommit mode has nothing to read: when
its socket is readable, the server has sent something on its own, which for an idle session
means it is going away (restart, `pg_terminate_backend`, idle timeout) or has gone (EOF). Only
then is the full check run. A persistent connection to a restarted PostgreSQL is therefore
replaced before the request uses it, at the cost of one `select()` system call.

`prepared_cursor()` gives the rater round trip's hand-written statements server-side binding
and a prepared statement per connection (psycopg `prepare=True`) that runs its generic plan
(`plan_cache_mode = force_generic_plan`, set per connection): PostgreSQL does not parse and plan
them on every call. Parsing and planning had been most of PostgreSQL's time per round trip.
The ORM keeps Django's default client-side binding and is never prepared. Behind PgBouncer
this needs session pooling (the prepared statements and the setting belong to the session).

Django connects with psycopg's `prepare_threshold=None`, which turns prepared statements off
for the whole connection, an explicit `prepare=True` included. This backend connects with a
threshold no query reaches instead: nothing is prepared automatically (the ORM's client-side
cursors never prepare anyway), and `prepared_cursor()` statements are.

A prepared statement keeps its generic plan for the life of the connection, until an ANALYZE
invalidates it. A plan made while a table was nearly empty (a new database, a new study's first
minutes) can be far off once the table has grown, and autovacuum may not analyse it for a
while: the benchmark measured 55 round trips/s instead of 300 with such plans. So every
`PLAN_REFRESH_SECONDS` a connection sends `DISCARD PLANS` before its next prepared statement:
the statements stay prepared and are planned again, against the table as it is now. At one
planning per statement every few seconds, this costs nothing measurable.
"""

from __future__ import annotations

import select
import time
from typing import TYPE_CHECKING, Any, Self

from django.db.backends.postgresql.base import TIMESTAMPTZ_OID
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.db.backends.utils import CursorWrapper
from psycopg.pq import Format

if TYPE_CHECKING:
    import psycopg

    # Django's class is psycopg's Cursor with a callproc() added; its stubs name no base.
    ServerBindingCursor = psycopg.Cursor[Any]
else:
    from django.db.backends.postgresql.base import ServerBindingCursor


class PreparedCursor(ServerBindingCursor):
    """Server-side binding; every statement is prepared on its first execution."""

    def execute(
        self,
        query: Any,
        params: Any = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Self:
        prepare = True if prepare is None else prepare
        return super().execute(query, params, prepare=prepare, binary=binary)


# Executions before psycopg would prepare a statement by itself: never, in practice.
NEVER_AUTO_PREPARE = 2**31 - 1
PLAN_REFRESH_SECONDS = 5.0


class DatabaseWrapper(PostgresDatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        if params.get("prepare_threshold") is None:  # Django's default: prepared statements off
            params["prepare_threshold"] = NEVER_AUTO_PREPARE
        return params

    def init_connection_state(self) -> None:
        super().init_connection_state()
        # Prepared statements (only prepared_cursor()'s) always run their generic plan: left
        # to choose, PostgreSQL may keep planning one on every call, which is what preparing
        # them saves. Each of them has one plan that suits every parameter (unique keys, one
        # study's pairs in fill order), and DISCARD PLANS below keeps it fitted to the tables.
        with self.connection.cursor() as cursor:
            cursor.execute("SET plan_cache_mode = force_generic_plan")
        if not self.get_autocommit():
            self.connection.commit()
        self.plans_refresh_at = time.monotonic() + PLAN_REFRESH_SECONDS

    def is_usable(self) -> bool:
        conn = self.connection
        if conn is None or conn.closed or conn.broken:
            return False
        try:
            readable, _, _ = select.select([conn.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        if readable:
            return super().is_usable()
        return True

    def prepared_cursor(self) -> CursorWrapper:
        """A cursor (Django's wrapper: error mapping, query logging) over a PreparedCursor."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            if time.monotonic() >= self.plans_refresh_at:
                self.connection.execute("DISCARD PLANS")
                self.plans_refresh_at = time.monotonic() + PLAN_REFRESH_SECONDS
            cursor = PreparedCursor(self.connection)
            loader = self.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
            if self.timezone != loader.timezone:  # as Django's create_cursor
                register_tzloader(self.timezone, cursor)
            # Django's own wrapping, as its _cursor() does (docs/internals/django-upgrades.md).
            wrapped: CursorWrapper = self._prepare_cursor(cursor)  # type: ignore[attr-defined]
            return wrapped
