"""Celery tasks for the refit queue: thin wrappers that take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from . import selectors, services
from .models import RefitTrigger


@shared_task(acks_late=True, ignore_result=True)
def refit_study(
    study_id: int, trigger: str = RefitTrigger.NIGHTLY, boards: list | None = None
) -> list[int]:
    """Refit one study's boards ([judges, subset, preset] each; default: human, LLM and all
    judges on all contexts); unchanged inputs store nothing new."""
    snapshots = services.snapshot_refit_study(study_id=study_id, trigger=trigger, boards=boards)
    return [snapshot.pk for snapshot in snapshots]


@shared_task(acks_late=True, ignore_result=True)
def refit_all_studies() -> list[int]:
    """The nightly beat job: one refit task per active study, so one slow study delays none."""
    study_ids = list(selectors.studies_active().values_list("pk", flat=True))
    for study_id in study_ids:
        refit_study.delay(study_id, RefitTrigger.NIGHTLY)
    return study_ids
