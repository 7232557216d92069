"""Celery tasks of batch mode (queue `llm`): thin, they call the services."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(acks_late=True, ignore_result=True)
def llm_batch_submit(run_id: int) -> int:
    return len(services.batches_submit(run_id=run_id))


@shared_task(acks_late=True, ignore_result=True)
def llm_batches_poll() -> list[int]:
    return services.batches_poll()
