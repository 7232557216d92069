"""`retry_on_conflict`: a transaction PostgreSQL aborts to break a real deadlock runs again."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import Group
from django.db import OperationalError, connection, connections, transaction

from core.db import is_retryable, retry_on_conflict


def _rows() -> tuple[int, int]:
    first = Group.objects.create(name="first")
    second = Group.objects.create(name="second")
    return first.pk, second.pk


def _lock_both(order: tuple[int, int], barrier: threading.Barrier, calls: list[str]) -> None:
    """Lock two rows in the given order, meeting the other thread between the two locks."""
    calls.append("run")
    with transaction.atomic(), connection.cursor() as cursor:
        table = Group._meta.db_table
        cursor.execute(f"SELECT id FROM {table} WHERE id = %s FOR UPDATE", [order[0]])
        if len(calls) <= 2:  # only the first runs meet: a run again takes both freely
            barrier.wait(10)
        cursor.execute(f"SELECT id FROM {table} WHERE id = %s FOR UPDATE", [order[1]])


def _deadlock(wrapped) -> tuple[list[str], list[BaseException]]:
    a, b = _rows()
    barrier = threading.Barrier(2)
    calls: list[str] = []
    errors: list[BaseException] = []

    def run(order: tuple[int, int]) -> None:
        try:
            wrapped(order, barrier, calls)
        except BaseException as exc:  # shown by the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(o,)) for o in ((a, b), (b, a))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return calls, errors


def test_a_deadlock_without_the_retry_reaches_the_caller(postgres, transactional_db):
    calls, errors = _deadlock(_lock_both)
    assert len(errors) == 1 and isinstance(errors[0], OperationalError)
    assert is_retryable(errors[0])


def test_the_transaction_aborted_by_a_deadlock_runs_again(postgres, transactional_db):
    calls, errors = _deadlock(retry_on_conflict(_lock_both))
    assert not errors
    assert len(calls) == 3  # both ran, and the one PostgreSQL aborted ran again


def test_nothing_is_retried_inside_an_outer_transaction(postgres, transactional_db):
    runs: list[int] = []

    @retry_on_conflict
    def aborted() -> None:
        runs.append(1)
        error = OperationalError("deadlock detected")
        error.__cause__ = type("Deadlock", (Exception,), {"sqlstate": "40P01"})()
        raise error

    with pytest.raises(OperationalError), transaction.atomic():
        aborted()
    assert runs == [1]
    with pytest.raises(OperationalError):
        aborted()
    assert len(runs) == 1 + 4  # outside a transaction: run again up to four times in all
