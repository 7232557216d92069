"""Celery tasks of the studio: thin wrappers that take ids and call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, ignore_result=True)
def import_job_run_task(job_id: int) -> None:
    from .studio.services import import_job_run

    import_job_run(job_id=job_id)
