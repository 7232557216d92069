"""A real PostgreSQL restart under a running gunicorn with persistent connections.

The server is shared with other test runs, so this test restarts it once and keeps the outage
short (a few seconds). Before the restart a rater holds an item; after it the same gunicorn
worker (its connection was killed by the restart) must serve the item page and store the
answer without an error: the backend's health check notices the dead socket and reconnects.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.db import connection

from annotation.models import Judgment
from tests.annotation.rater_data import build_study

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SUBMIT = re.compile(r'action="(/r/a/([^/"]+)/submit/)"')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.2)
    return False


def _restart_postgresql() -> None:
    clusters = list(Path("/etc/postgresql").iterdir())
    if len(clusters) != 1 or not Path("/usr/bin/pg_ctlcluster").exists():
        pytest.skip("needs the local PostgreSQL cluster (pg_ctlcluster)")
    version = clusters[0].name
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
        check=True,
        timeout=60,
        capture_output=True,
    )


def _postgres_accepts() -> bool:
    import psycopg

    db = settings.DATABASES["default"]
    dsn = f"postgresql://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/postgres"
    with psycopg.connect(dsn, connect_timeout=2) as conn:
        conn.execute("SELECT 1")
    return True


@pytest.fixture
def gunicorn(postgres, transactional_db):
    db = settings.DATABASES["default"]
    port = _free_port()
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}",
        DJANGO_SETTINGS_MODULE="heart_site.settings",
        DEBUG="1",  # plain static storage (no collectstatic manifest needed here)
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        CONN_MAX_AGE="600",  # persistent: the restart kills a connection the worker keeps
        GUNICORN_BIND=f"127.0.0.1:{port}",
        GUNICORN_WORKERS="1",
        GUNICORN_THREADS="1",
        RATER_CREATE_RATE="1000/m",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "heart_site.wsgi"],
        cwd=ROOT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    if not _wait_for(lambda: httpx.get(base + "/healthz").status_code == 200, 30):
        proc.terminate()
        pytest.fail("gunicorn did not start")
    yield base
    proc.terminate()
    proc.wait(timeout=20)


def test_rater_pages_survive_a_postgresql_restart(gunicorn):
    study = build_study(quality_check_rate=0)
    invite = study.invite_token
    with httpx.Client(base_url=gunicorn, follow_redirects=True, timeout=20) as client:
        consent = client.get(f"/r/{invite}/")
        token = CSRF_INPUT.search(consent.text).group(1)
        client.post(f"/r/{invite}/consent/", data={"agree": "on", "csrfmiddlewaretoken": token})
        page = client.get(f"/r/{invite}/item/")
        assert page.status_code == 200
        url, assignment = SUBMIT.search(page.text).groups()

        connection.close()  # this process's own connection dies with the restart too
        _restart_postgresql()
        # Wait for PostgreSQL itself (not through gunicorn: the next page must be the
        # worker's first request on its dead connection).
        assert _wait_for(_postgres_accepts, 60)

        again = client.get(f"/r/{invite}/item/")
        assert again.status_code == 200 and assignment in again.text
        headers = {"HX-Request": "true", "X-CSRFToken": client.cookies["csrftoken"]}
        answer = client.post(url, data={"choice": "3"}, headers=headers)
        assert answer.status_code == 200
    assert Judgment.objects.filter(assignment__token=assignment).count() == 1
