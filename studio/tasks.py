"""Celery tasks of the platform: the outbox's beat job, the studio's imports, stalled jobs."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from core.enqueue import deferred_tasks_publish, enqueue


@shared_task(ignore_result=True)
def deferred_tasks_send() -> int:
    """Beat: publish the tasks the outbox kept while the broker was down."""
    return deferred_tasks_publish()


@shared_task(acks_late=True, ignore_result=True)
def import_job_run_task(job_id: int) -> None:
    from .services import import_job_run

    import_job_run(job_id=job_id)


@shared_task(ignore_result=True)
def jobs_resume_stalled() -> dict[str, list[int]]:
    """Beat and worker start: imports and refits whose worker died are queued again."""
    from ranking.services import refit_jobs_resume

    from .services import import_jobs_resume

    return {"imports": import_jobs_resume(), "refits": refit_jobs_resume()}


@worker_ready.connect
def _resume_after_restart(sender=None, **kwargs) -> None:
    """A worker that (re)starts looks for jobs a dead worker left running."""
    enqueue("studio.tasks.import_jobs_resume_stalled")
