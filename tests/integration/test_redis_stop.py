"""Redis stops and comes back: on a redis-server this test starts itself (tests/servers.py),
never the one others use. Rater pages keep working while it is down (the cache degrades to a
miss, rate limits fail open), /healthz says so, and everything reconnects once it is back."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client

from annotation.models import Rater
from tests.factories.annotation import build_study
from tests.servers import throwaway_redis

pytestmark = [pytest.mark.integration, pytest.mark.django_db]
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture
def own_redis(settings):
    """Cache, rate limits, health probe and broker setting on a throw-away redis-server."""
    with throwaway_redis() as server:
        url = server.url(0)
        settings.REDIS_URL = url
        settings.CELERY_BROKER_URL = url
        settings.CELERY_TASK_ALWAYS_EAGER = False
        settings.CACHES = {
            "default": {
                "BACKEND": "django_redis.cache.RedisCache",
                "LOCATION": url,
                "OPTIONS": {
                    "IGNORE_EXCEPTIONS": True,
                    "SOCKET_CONNECT_TIMEOUT": 0.25,
                    "SOCKET_TIMEOUT": 0.25,
                },
            }
        }
        yield server


def _join(client: Client, invite: str) -> int:
    consent = client.get(f"/r/{invite}/", follow=True)
    token = CSRF_INPUT.search(consent.content.decode()).group(1)
    client.post(f"/r/{invite}/consent/", {"agree": "on", "csrfmiddlewaretoken": token})
    return client.get(f"/r/{invite}/item/").status_code


def test_rater_pages_and_health_ride_out_a_redis_stop(own_redis):
    study = build_study(quality_check_rate=0, status="open")
    cache.set("probe", "before")
    assert cache.get("probe") == "before"
    assert Client().get("/healthz").json()["redis"] == "ok"

    own_redis.stop()
    assert cache.get("probe") is None  # a miss, not an error
    health = Client().get("/healthz")
    assert health.status_code == 200
    assert health.json() == {
        "status": "degraded",
        "database": "ok",
        "redis": "down",
        "broker": "down",
    }
    assert _join(Client(), study.invite_token) == 200  # the rater starts and gets an item
    assert Rater.objects.filter(study=study).count() == 1

    own_redis.start()  # the same port: the pools reconnect by themselves
    cache.set("probe", "after")
    assert cache.get("probe") == "after"
    assert Client().get("/healthz").json() == {
        "status": "ok",
        "database": "ok",
        "redis": "ok",
        "broker": "ok",
    }
    assert _join(Client(), study.invite_token) == 200
