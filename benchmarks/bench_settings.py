"""Production settings for the rater benchmark's gunicorn, minus the collectstatic manifest."""

from __future__ import annotations

from heart_site.settings import *  # noqa: F403
from heart_site.settings import STORAGES

STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# The platform's URLs plus /_bench/nonce (bench_urls.py): the benchmark checks it talks to the
# server it started.
ROOT_URLCONF = "bench_urls"
