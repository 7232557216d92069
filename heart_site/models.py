"""Platform plumbing that belongs to no domain app: tasks waiting for the broker."""

from __future__ import annotations

from django.db import models


class DeferredTask(models.Model):
    """A Celery task that could not be queued (broker unreachable): sent again by beat.

    `heart_site.enqueue.enqueue` writes it when publishing fails, so a click on "refit now"
    while Redis is down is not lost; `heart_site.tasks.deferred_tasks_send` (every minute)
    publishes the waiting rows once the broker answers. Tasks are idempotent by convention
    (CONVENTIONS.md), so a row sent twice after a crash mid-send does no harm.
    """

    name = models.CharField(max_length=200)
    args = models.JSONField(default=list)
    kwargs = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} (waiting since {self.created_at:%Y-%m-%d %H:%M})"
