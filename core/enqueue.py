"""The outbox: the one way any code publishes a Celery task.

`enqueue("app.tasks.name", *args)` publishes a task by its NAME, so a service never imports its
own tasks module (no service <-> task import cycles). One publish attempt, no retry loop: a
request must not hang on an unreachable broker. When the broker does not answer, the task is
kept in the database (`DeferredTask`) and `deferred_tasks_publish` (beat, every minute) sends
it once the broker is back; nothing is lost and the request answers as usual. Tasks are
idempotent by convention (docs/internals/outbox-and-faults.md), so a row sent twice
after a crash does no harm.

With eager Celery (the embedded default and the unit tests) the task runs in-process, and its
own errors show. `tests/core/test_outbox.py` fails if `.delay(` or `.apply_async(`
appears anywhere else in the source tree.

This module imports nothing of the project at import time (the model is looked up when
needed), so that any app, however low, may publish through it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from celery import current_app
from django.apps import apps
from django.db import transaction

if TYPE_CHECKING:
    from .models import DeferredTask

logger = logging.getLogger(__name__)
BATCH = 500


def _deferred_model() -> type[DeferredTask]:
    return apps.get_model("core", "DeferredTask")


def enqueue(name: str, *args: Any, queue: str | None = None) -> bool:
    """Publish the task called `name` now (True), or keep it for beat to send later (False).

    (A task object is taken for its name, for callers written before tasks went by name.)
    """
    name = getattr(name, "name", name)
    app = current_app
    if app.conf.task_always_eager:  # in-process: the task's own errors must show
        if name not in app.tasks:  # no code imported its module: import them all, as a worker
            app.loader.import_default_modules()
        options: dict[str, Any] = {"queue": queue} if queue else {}
        app.tasks[name].apply_async(args=args, **options)
        return True
    try:
        _publish(name, list(args), queue)
        return True
    except Exception as exc:  # kombu OperationalError, redis ConnectionError, timeouts
        logger.warning("broker unavailable, %s deferred: %s", name, exc)
        _deferred_model().objects.create(
            name=name, args=list(args), queue=queue or "", last_error=str(exc)[:500]
        )
        return False


def _publish(
    name: str, args: list[Any], queue: str | None, kwargs: dict[str, Any] | None = None
) -> None:
    options: dict[str, Any] = {"queue": queue} if queue else {}
    current_app.send_task(name, args=args, kwargs=kwargs or {}, retry=False, **options)


def deferred_tasks_publish() -> int:
    """Send waiting tasks in order; rows stay (with the error) while the broker still fails."""
    model = _deferred_model()
    sent = 0
    with transaction.atomic():
        rows = list(model.objects.select_for_update(skip_locked=True)[:BATCH])
        for row in rows:
            try:
                _publish(row.name, row.args, row.queue or None, row.kwargs)
            except Exception as exc:
                model.objects.filter(pk=row.pk).update(
                    attempts=row.attempts + 1, last_error=str(exc)[:500]
                )
                break  # the broker is still away: try again at the next beat
            row.delete()
            sent += 1
    return sent
