"""The studio's tasks: browser uploads imported by a worker, and imports whose worker died."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from core.enqueue import enqueue

from . import services


@shared_task(name="studio.tasks.import_job_run_task", acks_late=True, ignore_result=True)
def import_job_run_task(job_id: int) -> None:
    services.import_job_run(job_id=job_id)


@shared_task(name="studio.tasks.import_jobs_resume_stalled", ignore_result=True)
def import_jobs_resume_stalled() -> list[int]:
    """Beat and worker start: imports whose worker died are queued again."""
    return services.import_jobs_resume()


@worker_ready.connect
def _resume_after_restart(sender: object = None, **kwargs: object) -> None:
    """A worker that (re)starts looks for imports a dead worker left running."""
    enqueue("studio.tasks.import_jobs_resume_stalled")
