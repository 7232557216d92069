"""Queue a Celery task without failing the request when the broker is down."""

from __future__ import annotations

import logging

from celery import Task

logger = logging.getLogger(__name__)


def enqueue(task: Task, *args, **kwargs) -> bool:
    """Publish `task` now (True), or keep it in the database for beat to send later (False).

    One publish attempt, no retry loop: a request must not hang on an unreachable broker.
    """
    from .models import DeferredTask

    if task.app.conf.task_always_eager:  # in-process: the task's own errors must show
        task.apply_async(args=args, kwargs=kwargs)
        return True
    try:
        task.apply_async(args=args, kwargs=kwargs, retry=False)
        return True
    except Exception as exc:  # kombu OperationalError, redis ConnectionError, timeouts
        logger.warning("broker unavailable, %s deferred: %s", task.name, exc)
        DeferredTask.objects.create(
            name=task.name, args=list(args), kwargs=kwargs, last_error=str(exc)[:500]
        )
        return False
