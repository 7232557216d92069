"""Celery tasks of the platform: deferred-task housekeeping (beat) and the studio's imports."""

from __future__ import annotations

from celery import current_app, shared_task
from django.db import transaction

from .models import DeferredTask

BATCH = 500


@shared_task(ignore_result=True)
def deferred_tasks_send() -> int:
    """Send waiting tasks in order; rows stay (with the error) while the broker still fails."""
    sent = 0
    with transaction.atomic():
        rows = list(DeferredTask.objects.select_for_update(skip_locked=True)[:BATCH])
        for row in rows:
            try:
                current_app.send_task(row.name, args=row.args, kwargs=row.kwargs, retry=False)
            except Exception as exc:
                DeferredTask.objects.filter(pk=row.pk).update(
                    attempts=row.attempts + 1, last_error=str(exc)[:500]
                )
                break  # the broker is still away: try again at the next beat
            row.delete()
            sent += 1
    return sent


@shared_task(acks_late=True, ignore_result=True)
def import_job_run_task(job_id: int) -> None:
    from .studio.services import import_job_run

    import_job_run(job_id=job_id)
