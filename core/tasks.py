"""The base app's beat job: the outbox sends what it kept while the broker was down."""

from __future__ import annotations

from celery import shared_task

from .enqueue import deferred_tasks_publish


@shared_task(name="core.tasks.deferred_tasks_send", ignore_result=True)
def deferred_tasks_send() -> int:
    """Beat: publish the tasks the outbox kept while the broker was down."""
    return deferred_tasks_publish()
