"""The API's rate limit holds under parallel requests: counted atomically in Redis.

Eight threads send requests at once to a live server (its own threads, the real Redis the
settings name). The old read-modify-write of a Redis list let parallel requests each see the
same count and pass together; now exactly the limit passes and the rest get 429.
"""

from __future__ import annotations

import os
import threading
import uuid

import httpx
import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.throttling import UserRateThrottle

from core.throttling import take_a_place
from tests.conftest import _missing
from tests.factories import StudyFactory

LIMIT = 40
THREADS = 8
PER_THREAD = 15  # 120 requests against 40 a minute


@pytest.fixture
def redis_cache():
    from django.core.cache import cache

    if not os.environ.get("REDIS_URL") or not hasattr(cache, "client"):
        _missing("needs REDIS_URL (the rate limit's counting happens in Redis)")
    return cache


@pytest.fixture
def limited(monkeypatch):
    monkeypatch.setattr(
        UserRateThrottle, "THROTTLE_RATES", {"user": f"{LIMIT}/minute", "anon": "1000/minute"}
    )


def _hammer(url: str, headers: dict[str, str]) -> list[int]:
    codes: list[int] = []
    start = threading.Barrier(THREADS)

    def one() -> None:
        with httpx.Client(headers=headers, timeout=60) as client:
            start.wait()
            for _ in range(PER_THREAD):
                codes.append(client.get(url).status_code)

    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes


@pytest.mark.django_db(transaction=True)
def test_parallel_requests_never_pass_the_per_user_limit(redis_cache, limited, live_server):
    study = StudyFactory(slug=f"throttled-{uuid.uuid4().hex[:6]}")
    user = User.objects.create_superuser(f"busy-{uuid.uuid4().hex[:6]}", password="pw")
    token = Token.objects.create(user=user)
    url = live_server.url + reverse("api:systems", args=[study.slug])
    codes = _hammer(url, {"Authorization": f"Token {token.key}"})
    assert len(codes) == THREADS * PER_THREAD
    assert codes.count(200) == LIMIT, sorted(set(codes))
    assert codes.count(429) == THREADS * PER_THREAD - LIMIT


def test_take_a_place_counts_exactly_the_limit_from_many_threads(redis_cache):
    key = f"throttle_test_{uuid.uuid4().hex}"
    waits: list[float | None] = []
    start = threading.Barrier(THREADS)

    def one() -> None:
        start.wait()
        waits.extend(take_a_place(key, 25, 60) for _ in range(20))

    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert waits.count(None) == 25
    refused = [w for w in waits if w is not None]
    assert len(refused) == THREADS * 20 - 25 and all(0 < w <= 60 for w in refused)
