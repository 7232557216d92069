"""Celery tasks for the refit queue: thin wrappers that take ids and call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from completions.models import Study
from core.enqueue import enqueue

from . import selectors, services
from .models import RefitTrigger


@shared_task(name="ranking.tasks.refit_job_run", acks_late=True, ignore_result=True)
def refit_job_run(job_id: int) -> list[int] | None:
    """Run one requested refit (the button, a stale board, the nightly job); failures are kept
    on the job."""
    return services.refit_job_run(job_id=job_id)


@shared_task(name="ranking.tasks.refit_study", acks_late=True, ignore_result=True)
def refit_study(
    study_id: int, trigger: str = RefitTrigger.NIGHTLY, boards: list[Any] | None = None
) -> list[int] | None:
    """Refit one study's boards now, as a job of its own ([judges, subset, preset] each;
    default: human, LLM and all judges on all contexts); unchanged inputs store nothing new."""
    job = services.refit_job_create(study_id=study_id, trigger=trigger, boards=boards)
    return services.refit_job_run(job_id=job.pk)


@shared_task(name="ranking.tasks.refit_all_studies", acks_late=True, ignore_result=True)
def refit_all_studies() -> list[int]:
    """The nightly beat job: one refit job per active study, so one slow study delays none."""
    study_ids = list(selectors.studies_active().values_list("pk", flat=True))
    for study in Study.objects.filter(pk__in=study_ids):
        services.snapshot_request_refit(study=study, trigger=RefitTrigger.NIGHTLY)
    return study_ids


@shared_task(name="ranking.tasks.adaptive_plans_refresh", ignore_result=True)
def adaptive_plans_refresh() -> list[int]:
    """Beat: adaptive studies whose judgments moved on get a refit, hence a fresh draw order."""
    return services.adaptive_plans_refresh()


@shared_task(name="ranking.tasks.refit_jobs_resume_stalled", ignore_result=True)
def refit_jobs_resume_stalled() -> list[int]:
    """Beat and worker start: refits whose worker died are queued again."""
    return services.refit_jobs_resume()


@worker_ready.connect
def _resume_after_restart(sender: Any = None, **kwargs: Any) -> None:
    """A worker that (re)starts looks for refits a dead worker left running."""
    enqueue("ranking.tasks.refit_jobs_resume_stalled")
