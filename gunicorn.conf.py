"""gunicorn settings for the web service (`gunicorn -c gunicorn.conf.py heart_site.wsgi`).

Tuned with benchmarks/bench_rater_throughput.py on the 2-core target machine: the rater round
trip is CPU-bound Python with short PostgreSQL waits (commit fsyncs included), so one process per
core with a few threads each (to overlap those waits) beat 4 x 4 threads (they fight over the
GIL), 2 x 2 (idle during fsyncs) and sync workers (no keep-alive). PostgreSQL, Redis and Celery
share the same cores. Every value can be overridden from the environment (GUNICORN_WORKERS, ...).
"""

from __future__ import annotations

import os

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
