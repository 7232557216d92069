from __future__ import annotations

import os
import tempfile

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heart_site.settings")
# A worker that serves metrics (CELERY_METRICS_PORT) sums the values its pool processes write
# in one directory (a fresh one per start: no stale values). prometheus_client picks in-memory or
# per-process files when it is first imported, and the `celery` command has already imported it
# (Flower's command plugin does): choose again, before any of our metrics exists.
if os.environ.get("CELERY_METRICS_PORT") and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="heart-worker-metrics-")
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    from prometheus_client import values

    values.ValueClass = values.get_value_class()

app = Celery("heart_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

from core import worker_metrics  # noqa: E402,F401 - connects the task signals and the exporter
