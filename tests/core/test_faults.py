"""Faults: Redis unreachable (a closed port, never the shared server stopped), the database
gone, a PostgreSQL connection killed under a persistent connection; `/healthz` for each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.test import Client

from annotation.models import Judgment, Rater
from core.enqueue import enqueue
from core.models import DeferredTask
from core.tasks import deferred_tasks_send
from heart_site.celery import app as celery_app
from ranking.models import RefitJob
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
CLOSED = "redis://127.0.0.1:9/0"  # nothing listens on port 9 (discard): connection refused


@pytest.fixture
def redis_unreachable(settings):
    """Every Redis user (cache, rate limits, health probe, broker) pointed at a closed port."""
    with _celery_broker(CLOSED):  # first: it saves the app's real broker settings
        _django_redis_closed(settings)
        yield


def _django_redis_closed(settings) -> None:
    settings.REDIS_URL = CLOSED
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": CLOSED,
            "OPTIONS": {
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": 0.25,
                "SOCKET_TIMEOUT": 0.25,
            },
        }
    }
    settings.CELERY_BROKER_URL = CLOSED
    settings.CELERY_TASK_ALWAYS_EAGER = False


class _celery_broker:
    """Point the Celery app at another broker for a while (its producer pools follow)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _use(self, url: str, eager: bool) -> None:
        celery_app.conf.broker_url = url
        celery_app.conf.task_always_eager = eager
        celery_app._pool = None
        celery_app.amqp._producer_pool = None

    def __enter__(self):
        self.saved = (celery_app.conf.broker_url, celery_app.conf.task_always_eager)
        self._use(self.url, False)
        return self

    def __exit__(self, *exc):
        self._use(*self.saved)


def test_rater_pages_work_with_redis_unreachable(redis_unreachable):
    study = build_study(quality_check_rate=0)
    client = Client()
    assert client.get(f"/r/{study.invite_token}/").status_code == 302
    assert client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"}).status_code == 302
    page = client.get(f"/r/{study.invite_token}/item/")
    assert page.status_code == 200
    token = page.content.decode().split("/r/a/")[1].split("/")[0]
    answer = client.post(f"/r/a/{token}/submit/", {"choice": "4"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200
    assert Judgment.objects.filter(assignment__token=token).exists()
    assert Rater.objects.count() == 1


def test_admin_login_and_studio_pages_work_with_redis_unreachable(redis_unreachable):
    get_user_model().objects.create_superuser("boss", "b@example.org", "pw-123456")
    study = build_study()
    client = Client()
    login = client.post("/admin/login/", {"username": "boss", "password": "pw-123456"})
    assert login.status_code == 302  # sessions are in the database
    assert client.get("/admin/").status_code == 200
    assert client.get(f"/studio/{study.slug}/raters/").status_code == 200
    assert client.get(f"/studio/{study.slug}/leaderboard/").status_code == 200  # cache: a miss


def test_healthz_reports_redis_and_broker_down_as_degraded(redis_unreachable):
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "degraded",
        "database": "ok",
        "redis": "down",
        "broker": "down",
    }


def test_healthz_is_ok_when_everything_answers(settings):
    body = Client().get("/healthz").json()
    assert body["status"] == "ok" and body["database"] == "ok"
    if settings.REDIS_URL:
        assert body["redis"] == "ok"


def test_healthz_answers_503_when_the_database_is_down():
    env = dict(os.environ)
    env.update(
        DATABASE_URL="postgres://postgres@127.0.0.1:9/nothing",
        DJANGO_SETTINGS_MODULE="heart_site.settings_test",
    )
    code = (
        "import json, django; django.setup();"
        "from django.test import Client;"
        "r = Client().get('/healthz'); print(r.status_code, json.dumps(r.json()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    status, body = out.stdout.strip().splitlines()[-1].split(" ", 1)
    assert status == "503" and json.loads(body)["status"] == "down"
    assert json.loads(body)["database"] == "down"


def test_a_task_queued_while_the_broker_is_down_is_sent_once_it_is_back(settings):
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.skip("needs REDIS_URL for a real broker")
    with _celery_broker(CLOSED):
        assert enqueue("core.tasks.deferred_tasks_send") is False
    waiting = DeferredTask.objects.get()
    assert waiting.name == "core.tasks.deferred_tasks_send" and waiting.last_error
    with _celery_broker(CLOSED):
        assert deferred_tasks_send() == 0  # beat while still down: the row stays
    assert DeferredTask.objects.get().attempts == 1
    with _celery_broker(redis_url):
        assert deferred_tasks_send() == 1  # beat once Redis is back
        celery_app.control.purge()
    assert not DeferredTask.objects.exists()


def test_the_refit_button_does_not_fail_while_the_broker_is_down(
    redis_unreachable, django_capture_on_commit_callbacks
):
    admin = get_user_model().objects.create_superuser("boss", "b@example.org", "pw")
    study = build_study()
    client = Client()
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/studio/{study.slug}/leaderboard/refit/")
    assert response.status_code == 302
    waiting = DeferredTask.objects.get()
    job = RefitJob.objects.get(study=study)
    assert waiting.name == "ranking.tasks.refit_job_run" and waiting.args == [job.pk]
    assert job.status == "queued"


def test_a_killed_postgresql_connection_is_replaced_without_a_health_query(postgres):
    """What a PostgreSQL restart does to a persistent connection, on one connection only."""
    other = connections.create_connection("default")
    try:
        other.ensure_connection()
        assert other.is_usable()
        pid = other.connection.info.backend_pid
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 5
        while other.is_usable() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not other.is_usable()
    finally:
        other.close()
