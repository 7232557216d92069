"""The benchmark server's URLs: the platform's, plus the run's nonce (bench_settings.py).

`GET /_bench/nonce` answers the value of HEART_BENCH_NONCE this server was started with, so the
benchmark knows it measures the server it started, not another one on the same port.
"""

from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponse
from django.urls import path

from heart_site.urls import *  # noqa: F403 - the error handlers too
from heart_site.urls import urlpatterns as platform_urlpatterns


def bench_nonce(request: HttpRequest) -> HttpResponse:
    return HttpResponse(os.environ.get("HEART_BENCH_NONCE", ""), content_type="text/plain")


urlpatterns = [path("_bench/nonce", bench_nonce), *platform_urlpatterns]
