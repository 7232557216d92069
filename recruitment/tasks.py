"""Celery tasks: thin wrappers that call one service."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="recruitment.tasks.prolific_sync_published", acks_late=True, ignore_result=True)
def prolific_sync_published() -> list[int]:
    """Beat: read back every published study's submissions, so the places of a participant who
    returned or timed out are freed within PROLIFIC_SYNC_SECONDS, nobody pressing a button."""
    return services.prolific_sync_published()
