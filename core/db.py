"""Database helpers shared by the apps: retrying a transaction that PostgreSQL chose to abort.

PostgreSQL breaks a deadlock by aborting one of the transactions in it (`40P01`), and a
REPEATABLE READ or SERIALIZABLE transaction may be refused with a serialisation failure
(`40001`). Both mean "run me again": nothing of the aborted transaction was kept. The rater pages
must never show them, so the services they call run under `retry_on_conflict`.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable

from django.db import OperationalError, connection

log = logging.getLogger(__name__)

#: SQLSTATEs that abort a transaction which may simply be run again.
RETRYABLE_SQLSTATES = frozenset({"40P01", "40001"})  # deadlock_detected, serialization_failure
RETRY_ATTEMPTS = 4


def is_retryable(error: BaseException) -> bool:
    """A deadlock or serialisation failure, as Django wraps psycopg's error."""
    cause = error.__cause__ or error
    return getattr(cause, "sqlstate", None) in RETRYABLE_SQLSTATES


def retry_on_conflict[**P, R](function: Callable[P, R]) -> Callable[P, R]:
    """Run `function` again (up to `RETRY_ATTEMPTS` times in all) when PostgreSQL aborted its
    transaction to break a deadlock or a serialisation conflict.

    `function` must open its own transactions (`transaction.atomic`) and be safe to run again
    after a rollback. Inside an outer transaction nothing is retried: the outer transaction is
    aborted as a whole and only its owner can run it again.
    """

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt in range(1, RETRY_ATTEMPTS + 1):
            try:
                return function(*args, **kwargs)
            except OperationalError as error:
                if not is_retryable(error) or connection.in_atomic_block:
                    raise
                if attempt == RETRY_ATTEMPTS:
                    raise
                log.warning("%s: %s; running it again", function.__qualname__, error)
                time.sleep(0.005 * attempt * (0.5 + random.random()))
        raise AssertionError("unreachable")  # the loop returns or raises

    return wrapper
