"""Prometheus metrics of the web processes, served at `/metrics` to the monitoring system only.

- Request latency and responses per view (URL name) and method, under django-prometheus's
  metric names so its dashboards work (django-prometheus itself does not install next to
  Django 6.1 yet: docs/running.md#operations). One middleware, one histogram observation and one
  counter increment per request.
- The rater round trip: the submit view's time (judgment stored, next item rendered), labelled by
  HTTP status only: never a rater, study, item or system.
- Read when Prometheus scrapes: Celery queue lengths on the Redis broker, and the progress of the
  LLM runs that are running (units per run kind and status).

With several gunicorn workers, each process writes its values under PROMETHEUS_MULTIPROC_DIR
(gunicorn.conf.py sets one up) and `/metrics` sums them, whichever worker answers.

Access: a request with `Authorization: Bearer <METRICS_TOKEN>`, or from an address in
METRICS_ALLOWED_IPS (the connecting address, never a forwarded header). Nothing else gets in;
with neither setting, `/metrics` answers 403 to everyone and the middleware is not installed.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import time
from collections.abc import Callable, Iterator
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from core.roles import role

log = logging.getLogger(__name__)

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
RATER_SUBMIT_VIEW = "annotation:submit"
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

REQUEST_LATENCY = Histogram(
    "django_http_requests_latency_seconds_by_view_method",
    "Time from a request's arrival in Django to its response, per view (URL name) and method.",
    ["view", "method"],
    buckets=LATENCY_BUCKETS,
)
RESPONSES = Counter(
    "django_http_responses_total_by_status_view_method",
    "Responses per HTTP status, view (URL name) and method.",
    ["status", "view", "method"],
)
RATER_ROUND_TRIP = Histogram(
    "heart_rater_round_trip_seconds",
    "A rater's submit (judgment stored, next item rendered), server side, per HTTP status.",
    ["status"],
    buckets=(0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5),
)


class MetricsMiddleware:
    """Times every request (first in MIDDLEWARE, so the whole stack is inside the timing)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        match = request.resolver_match
        view = match.view_name if match is not None else "<unresolved>"
        method = request.method if request.method in METHODS else "other"
        status = str(response.status_code)
        REQUEST_LATENCY.labels(view, method).observe(elapsed)
        RESPONSES.labels(status, view, method).inc()
        if view == RATER_SUBMIT_VIEW:
            RATER_ROUND_TRIP.labels(status).observe(elapsed)
        return response


# --- who may read the metrics ----------------------------------------------------------------


@lru_cache(maxsize=8)
def _networks(allowed: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in allowed)


def metrics_access_allowed(remote_addr: str, authorization: str) -> bool:
    """The bearer token matches METRICS_TOKEN, or the client address is in METRICS_ALLOWED_IPS."""
    token = settings.METRICS_TOKEN
    scheme, _, credentials = authorization.partition(" ")
    bearer = scheme.lower() == "bearer"
    if token and bearer and hmac.compare_digest(credentials.strip().encode(), token.encode()):
        return True
    allowed = tuple(settings.METRICS_ALLOWED_IPS)
    if not allowed or not remote_addr:
        return False
    try:
        address = ipaddress.ip_address(remote_addr)
    except ValueError:
        return False
    return any(address in network for network in _networks(allowed))


# --- what is read at scrape time ---------------------------------------------------------------


def celery_queues() -> list[str]:
    """Every queue a task is routed to (settings.CELERY_TASK_ROUTES) and the default queue."""
    routes = getattr(settings, "CELERY_TASK_ROUTES", {}) or {}
    names = {settings.CELERY_TASK_DEFAULT_QUEUE}
    names |= {route["queue"] for route in routes.values() if "queue" in route}
    return sorted(names)


# kombu's Redis transport keeps a queue's messages in one list per priority step (0, 3, 6, 9):
# the queue's own name for priority 0, "<queue>\x06\x16<step>" for the others.
_PRIORITY_SEPARATOR = "\x06\x16"
_PRIORITY_STEPS = (3, 6, 9)


def celery_queue_lengths(timeout: float = 0.5) -> dict[str, int]:
    """Messages waiting in each queue on the Redis broker ({} for another or no broker)."""
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return {}
    import redis

    queues = celery_queues()
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        pipe = client.pipeline(transaction=False)
        for queue in queues:
            pipe.llen(queue)
            for step in _PRIORITY_STEPS:
                pipe.llen(f"{queue}{_PRIORITY_SEPARATOR}{step}")
        lengths = pipe.execute()
    finally:
        client.close()
    per_queue = 1 + len(_PRIORITY_STEPS)
    return {q: sum(lengths[i * per_queue : (i + 1) * per_queue]) for i, q in enumerate(queues)}


# Gauges an app reads from its own tables when Prometheus scrapes (the LLM runs' progress):
# registered by the app (its AppConfig.ready), so this base module imports no app.
SCRAPE_READERS: dict[str, Callable[[], list[GaugeMetricFamily]]] = {}


def scrape_reader_register(part: str, read: Callable[[], list[GaugeMetricFamily]]) -> None:
    """Add the gauges `read` returns to every scrape (`part` names them in a warning)."""
    SCRAPE_READERS[part] = read


class ScrapeCollector(Collector):
    """Queue lengths and the apps' gauges, read when Prometheus scrapes."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from self._guarded("queues", self._queues)
        for part, read in SCRAPE_READERS.items():
            yield from self._guarded(part, read)

    @staticmethod
    def _guarded(part: str, read: Callable[[], list[GaugeMetricFamily]]) -> list[GaugeMetricFamily]:
        try:
            return read()
        except Exception:  # a broker or database outage must not take /metrics down with it
            log.warning("metrics: could not read the %s", part, exc_info=True)
            return []

    @staticmethod
    def _queues() -> list[GaugeMetricFamily]:
        lengths = celery_queue_lengths()
        if not lengths:
            return []
        family = GaugeMetricFamily(
            "heart_celery_queue_length", "Tasks waiting in each Celery queue.", labels=["queue"]
        )
        for queue, n in lengths.items():
            family.add_metric([queue], n)
        return [family]


def metrics_exposition() -> bytes:
    """The text Prometheus reads: every process's metrics, then the scrape-time ones."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        processes = CollectorRegistry()
        multiprocess.MultiProcessCollector(processes)
    else:
        processes = REGISTRY  # one process: its own metrics, with process and GC collectors
    live = CollectorRegistry()
    live.register(ScrapeCollector())
    return generate_latest(processes) + generate_latest(live)


REFUSED = (
    "Metrics are served to the monitoring system only: send Authorization: Bearer "
    "<METRICS_TOKEN>, or scrape from an address in METRICS_ALLOWED_IPS.\n"
)


@require_GET
@role("monitoring")
def metrics(request: HttpRequest) -> HttpResponse:
    allowed = metrics_access_allowed(
        request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_AUTHORIZATION", "")
    )
    if not allowed:
        return HttpResponse(REFUSED, status=403, content_type="text/plain; charset=utf-8")
    return HttpResponse(metrics_exposition(), content_type=CONTENT_TYPE_LATEST)
