"""Rows of the base app: tasks waiting for the broker (the outbox)."""

from __future__ import annotations

from django.db import models


class DeferredTask(models.Model):
    """A Celery task that could not be queued (broker unreachable): sent again by beat.

    `core.enqueue.enqueue` (the outbox) writes it when publishing fails, so an upload, a
    run launch or a refit while Redis is down is not lost; `core.tasks.deferred_tasks_send`
    (beat, every minute) publishes the waiting rows once the broker answers. Tasks are
    idempotent by convention (docs/internals/outbox-and-faults.md), so a row sent twice
    after a crash does no harm.
    """

    name = models.CharField(max_length=200)
    args = models.JSONField(default=list)
    kwargs = models.JSONField(default=dict)
    queue = models.CharField(max_length=100, blank=True, help_text="Empty: the task's route.")
    created_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True)

    class Meta:
        db_table = "heart_site_deferredtask"  # made before the base app existed
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} (waiting since {self.created_at:%Y-%m-%d %H:%M})"
