"""Celery tasks of the `llm` queue: thin, they take ids and call the engine."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from core.enqueue import enqueue

from . import services
from .executor import run_execute
from .services import batches


# No time limit: an executor gives up its slice itself (celery-types has no None here).
@shared_task(  # type: ignore[call-overload, untyped-decorator]
    name="llm.tasks.llm_run_execute",
    acks_late=True,
    ignore_result=True,
    time_limit=None,
    soft_time_limit=None,
)
def llm_run_execute(run_id: int) -> str:
    outcome = run_execute(run_id)
    if outcome == "sliced":
        enqueue(services.RUN_TASK, run_id)  # a fresh task for the next slice: none runs for hours
    return outcome


@shared_task(name="llm.tasks.llm_runs_resume", acks_late=True, ignore_result=True)
def llm_runs_resume() -> list[int]:
    return services.runs_resume_stalled()


@worker_ready.connect
def _resume_after_restart(sender: object = None, **kwargs: object) -> None:
    """A worker that (re)starts picks up running runs whose executor may have died with it
    (queued on the LLM queue: a refit-only worker just passes it on)."""
    enqueue("llm.tasks.llm_runs_resume")


@shared_task(name=batches.BATCH_SUBMIT_TASK, acks_late=True, ignore_result=True)
def llm_batch_submit(run_id: int) -> int:
    return len(batches.batches_submit(run_id=run_id))


@shared_task(name=batches.BATCH_POLL_TASK, acks_late=True, ignore_result=True)
def llm_batches_poll() -> list[int]:
    return batches.batches_poll()
