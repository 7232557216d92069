"""gunicorn settings for the web service (`gunicorn -c gunicorn.conf.py heart_site.wsgi`).

Tuned with benchmarks/bench_rater_throughput.py on the 2-core target machine: the rater round
trip is CPU-bound Python with short PostgreSQL waits (commit fsyncs included), so one process per
core with a few threads each (to overlap those waits) beat 4 x 4 threads (they fight over the
GIL), 2 x 2 (idle during fsyncs) and sync workers (no keep-alive). PostgreSQL, Redis and Celery
share the same cores. Every value can be overridden from the environment (GUNICORN_WORKERS, ...).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "30"))  # raters post every few seconds
backlog = 2048
# Access log off by default: one line per request costs CPU on the hot path; the reverse proxy
# in front keeps the access log. GUNICORN_ACCESS_LOG=- turns it back on.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# Recycle workers now and then (bounded memory); jitter so they do not restart together.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "20000"))
max_requests_jitter = 2000
timeout = 30
graceful_timeout = 30
# gunicorn's control socket (for `gunicornc`) is one path per user by default, so two web nodes
# on one host would take each other's: GUNICORN_CONTROL_SOCKET gives each its own path, or
# "off" turns it off (docs/deployment.md).
if (_control := os.environ.get("GUNICORN_CONTROL_SOCKET", "")) == "off":
    control_socket_disable = True
elif _control:
    control_socket = _control

# Metrics (core/metrics.py): with several workers, each writes its values in one directory
# and /metrics sums them, whichever worker answers. prometheus_client reads the directory when a
# worker first imports it, so it is chosen here, in the master, before any worker starts: a fresh
# one per start (stale values would be summed in), or PROMETHEUS_MULTIPROC_DIR emptied.
if os.environ.get("METRICS_TOKEN") or os.environ.get("METRICS_ALLOWED_IPS"):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        for _stale in Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).glob("*.db"):
            _stale.unlink()
    else:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="heart-web-metrics-")
        _made_metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"]


def child_exit(server: Any, worker: Any) -> None:  # gunicorn's hook signature
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def on_exit(server: Any) -> None:  # gunicorn's hook signature
    made = globals().get("_made_metrics_dir")
    if made:
        shutil.rmtree(made, ignore_errors=True)
