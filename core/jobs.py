"""Leases for background jobs (imports, refits) so that a job whose worker died is redone.

A worker that claims a job sets `lease_until` a minute ahead and keeps renewing it from a
small thread while the job runs. If the worker is killed (SIGKILL, out of memory, a lost
machine), the renewals stop; `jobs_stalled` finds running jobs whose lease has run out, and
beat (every minute) and every worker that starts put them back in the queue. The claim that
starts a job takes a queued job or a running one whose lease has run out, in one conditional
UPDATE, so two workers never run the same job at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Model, Q, QuerySet
from django.utils import timezone


def lease_seconds() -> float:
    return float(getattr(settings, "JOB_LEASE_SECONDS", 60.0))


def job_claim(model: type[Model], pk: int, **fields: Any) -> bool:
    """queued (or running with a lapsed lease) -> running, leased; True if this call won."""
    now = timezone.now()
    claimable = Q(status="queued") | Q(status="running", lease_until__lt=now)
    return (
        model._default_manager.filter(claimable, pk=pk).update(
            status="running",
            started_at=now,
            lease_until=now + timedelta(seconds=lease_seconds()),
            **fields,
        )
        == 1
    )


def jobs_stalled(model: type[Model]) -> QuerySet[Model]:
    """Running jobs whose worker stopped renewing their lease."""
    return model._default_manager.filter(status="running", lease_until__lt=timezone.now())


@contextmanager
def lease_kept(model: type[Model], pk: int) -> Iterator[None]:
    """Renew the job's lease from a thread while the block runs (not with eager Celery, where
    the job runs inside the request and no worker can die under it)."""
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        yield
        return
    stop = threading.Event()
    every = lease_seconds() / 3

    def renew() -> None:
        try:
            while not stop.wait(every):
                model._default_manager.filter(pk=pk, status="running").update(
                    lease_until=timezone.now() + timedelta(seconds=lease_seconds())
                )
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=renew, name=f"lease-{model.__name__}-{pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def failure_reason(exc: BaseException) -> str:
    """What the page shows for a job that raised: the kind of error and its message, short."""
    if isinstance(exc, RecursionError):
        return "the file is nested too deep to read"
    text = str(exc).strip().replace("\x00", "")
    return f"{type(exc).__name__}: {text}"[:500] if text else type(exc).__name__
