"""The Celery workers' Prometheus metrics and their exporter.

Each task's outcome and run time are counted from Celery's signals in the process that runs it
(in a prefork worker: the pool's children), and the LLM engine counts its finished units
(llm/metrics.py). A worker started with CELERY_METRICS_PORT serves them: its main
process starts a small HTTP server (prometheus_client's WSGI server, behind the same token or
address allow-list as the web's /metrics) in the `worker_init` signal, and sums the files that
every child writes under PROMETHEUS_MULTIPROC_DIR (heart_site/celery.py makes a fresh one when
the port is set and the directory is not).
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from celery.signals import (
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_shutdown,
    worker_shutdown,
)
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    make_wsgi_app,
    multiprocess,
)
from prometheus_client.exposition import ThreadingWSGIServer

log = logging.getLogger(__name__)

TASKS = Counter(
    "heart_celery_tasks",
    "Celery tasks finished, per task name, queue and final state (SUCCESS, FAILURE, RETRY, ...).",
    ["task", "queue", "state"],
)
TASK_SECONDS = Histogram(
    "heart_celery_task_seconds",
    "Run time of Celery tasks, per task name and queue.",
    ["task", "queue"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 1200.0, 1800.0),
)
_started: dict[str, float] = {}


def _queue(task: Any) -> str:
    request = getattr(task, "request", None)
    if request is None or getattr(request, "is_eager", False):
        return "eager"
    return (getattr(request, "delivery_info", None) or {}).get("routing_key") or "unknown"


@task_prerun.connect
def _task_started(task_id: str | None = None, **_: Any) -> None:
    if task_id:
        _started[task_id] = time.monotonic()


@task_postrun.connect
def _task_finished(
    task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any
) -> None:
    started = _started.pop(task_id, None) if task_id else None
    name, queue = getattr(task, "name", "unknown"), _queue(task)
    TASKS.labels(name, queue, state or "UNKNOWN").inc()
    if started is not None:
        TASK_SECONDS.labels(name, queue).observe(time.monotonic() - started)


@worker_process_shutdown.connect
def _child_gone(pid: int | None = None, **_: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(pid or os.getpid())


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass


def guarded(app: Any) -> Any:
    """A WSGI app that answers 403 unless the scraper has the token or an allowed address."""

    def guarded_app(environ: dict[str, Any], start_response: Any) -> Any:
        from .metrics import REFUSED, metrics_access_allowed  # Django is set up by now

        if not metrics_access_allowed(
            environ.get("REMOTE_ADDR", ""), environ.get("HTTP_AUTHORIZATION", "")
        ):
            start_response("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8")])
            return [REFUSED.encode()]
        return app(environ, start_response)

    return guarded_app


def exporter_start(port: int, addr: str = "0.0.0.0") -> WSGIServer:
    """Serve this worker's metrics (every pool process's) on addr:port, in a daemon thread."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY  # a solo or threads pool: everything happens in this process
    server = make_server(
        addr, port, guarded(make_wsgi_app(registry)), ThreadingWSGIServer, _QuietHandler
    )
    threading.Thread(target=server.serve_forever, name="metrics-exporter", daemon=True).start()
    log.info("worker metrics on http://%s:%s/metrics", addr, port)
    return server


@worker_shutdown.connect
def _remove_made_directory(**_: Any) -> None:
    made = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
    if os.environ.get("CELERY_METRICS_PORT") and "heart-worker-metrics-" in made:
        shutil.rmtree(made, ignore_errors=True)  # made by heart_site/celery.py for this start


@worker_init.connect
def _exporter_on_worker_start(**_: Any) -> None:
    port = os.environ.get("CELERY_METRICS_PORT")
    if port:
        exporter_start(int(port), os.environ.get("CELERY_METRICS_ADDR", "0.0.0.0"))
