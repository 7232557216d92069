from __future__ import annotations

import os
import tempfile

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heart_site.settings")
# A worker that serves metrics (CELERY_METRICS_PORT) sums the values its pool processes write
# in one directory; prometheus_client reads the variable when it is first imported, so it is set
# here, before anything imports it. A fresh directory per start: no stale values.
if os.environ.get("CELERY_METRICS_PORT") and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="heart-worker-metrics-")

app = Celery("heart_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

from . import worker_metrics  # noqa: E402,F401 - connects the task signals and the exporter
