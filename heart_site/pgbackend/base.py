"""PostgreSQL backend whose connection health check costs no round trip.

Django's `CONN_HEALTH_CHECKS` runs `SELECT 1` before each request's first query (about a tenth
of a rater round trip's time). An idle connection in autocommit mode has nothing to read: when
its socket is readable, the server has sent something on its own, which for an idle session
means it is going away (restart, `pg_terminate_backend`, idle timeout) or has gone (EOF). Only
then is the full check run. A persistent connection to a restarted PostgreSQL is therefore
replaced before the request uses it, at the cost of one `select()` system call.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper


class DatabaseWrapper(PostgresDatabaseWrapper):
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
