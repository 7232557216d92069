"""Celery tasks of batch mode (queue `llm`): thin, they call the services."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="llm.batch.tasks.llm_batch_submit", acks_late=True, ignore_result=True)
def llm_batch_submit(run_id: int) -> int:
    return len(services.batches_submit(run_id=run_id))


@shared_task(name="llm.batch.tasks.llm_batches_poll", acks_late=True, ignore_result=True)
def llm_batches_poll() -> list[int]:
    return services.batches_poll()
