"""`/healthz`: each dependency's state and an overall status a load balancer can act on.

- `database` down: HTTP 503, status "down" (nothing works without PostgreSQL: take the instance
  out of rotation);
- `redis` or `broker` down: HTTP 200, status "degraded" (rater, writer and admin pages keep
  working: sessions are in the database, the cache degrades to a miss, rate limits fail open,
  and background tasks wait in the database until the broker is back);
- all answer: HTTP 200, status "ok".
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.templatetags.static import static

from core.roles import role

PROBE_TIMEOUT = 0.5


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return "ok"
    except Exception:
        connection.close()  # a broken connection is not reused by the next request
        return "down"


def _redis_ping(url: str) -> str:
    import redis

    try:
        client = redis.Redis.from_url(
            url, socket_connect_timeout=PROBE_TIMEOUT, socket_timeout=PROBE_TIMEOUT
        )
        client.ping()
        client.close()
        return "ok"
    except Exception:
        return "down"


def _redis() -> str:
    return _redis_ping(settings.REDIS_URL) if settings.REDIS_URL else "not configured"


def _broker() -> str:
    url = settings.CELERY_BROKER_URL
    if settings.CELERY_TASK_ALWAYS_EAGER or url.startswith("memory://"):
        return "eager"  # the embedded default runs tasks in-process
    if url.startswith(("redis://", "rediss://")):
        return _redis_ping(url)
    from celery import current_app as app

    try:
        with app.connection_for_write() as conn:
            # kombu takes any number of seconds; its stubs say int.
            conn.ensure_connection(max_retries=1, timeout=PROBE_TIMEOUT)  # type: ignore[arg-type]
        return "ok"
    except Exception:
        return "down"


def health() -> tuple[dict[str, str], int]:
    checks = {"database": _database(), "redis": _redis(), "broker": _broker()}
    if checks["database"] != "ok":
        status, code = "down", 503
    elif "down" in (checks["redis"], checks["broker"]):
        status, code = "degraded", 200
    else:
        status, code = "ok", 200
    return {"status": status, **checks}, code


@role("public")
def healthz(request: HttpRequest) -> JsonResponse:
    body, code = health()
    return JsonResponse(body, status=code)


@role("public")
def favicon(request: HttpRequest) -> HttpResponse:
    """`/favicon.ico`, asked for by browsers on pages that name no icon (Django's admin)."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))
