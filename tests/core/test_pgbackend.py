"""core.pgbackend: the rater round trip's statements are really prepared, run their
generic plan, and are planned again now and then (PostgreSQL only)."""

from __future__ import annotations

import pytest
from django.db import connection

from core.pgbackend import base as pgbackend

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's"
    ),
]

PROBE = "SELECT %s::int + 1 AS heart_prepared_probe"


def _prepared_probes() -> list[tuple[int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE %s",
            ["%heart_prepared_probe%"],
        )
        return cursor.fetchall()


def test_prepared_cursor_prepares_its_statements_and_runs_the_generic_plan():
    # Django connects with prepare_threshold=None, which silently turns `prepare=True` off.
    before = _prepared_probes() or [(0, 0)]  # the connection may have run the probe before
    for value in range(3):
        with connection.prepared_cursor() as cursor:
            cursor.execute(PROBE, [value])
            assert cursor.fetchone() == (value + 1,)
    (generic, custom), *others = _prepared_probes()
    assert others == []  # one prepared statement, reused
    # Every call ran the generic plan; none was planned for its own parameters.
    assert (generic - before[0][0], custom - before[0][1]) == (3, 0)
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone() == ("force_generic_plan",)


def test_the_orm_is_not_prepared():
    list(connection.introspection.table_names())  # ORM and introspection: client-side binding
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        before = cursor.fetchone()[0]
        for value in range(3):
            cursor.execute("SELECT %s::int", [value])
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == before


def test_plans_are_refreshed_after_the_refresh_period(monkeypatch):
    with connection.prepared_cursor() as cursor:
        cursor.execute(PROBE, [1])
    clock = [pgbackend.time.monotonic() + pgbackend.PLAN_REFRESH_SECONDS + 1]
    monkeypatch.setattr(pgbackend.time, "monotonic", lambda: clock[0])
    sent: list[str] = []
    real_execute = connection.connection.execute
    monkeypatch.setattr(
        connection.connection,
        "execute",
        lambda sql, *a, **k: sent.append(sql) or real_execute(sql, *a, **k),
    )
    with connection.prepared_cursor() as cursor:  # the period is over: plans discarded first
        cursor.execute(PROBE, [2])
        assert cursor.fetchone() == (3,)
    with connection.prepared_cursor() as cursor:  # and not again within the next period
        cursor.execute(PROBE, [3])
    assert sent == ["DISCARD PLANS"]
    assert connection.plans_refresh_at == clock[0] + pgbackend.PLAN_REFRESH_SECONDS
    # The statement stayed prepared: it was planned again, not prepared again.
    assert len(_prepared_probes()) == 1
