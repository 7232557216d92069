"""A real PostgreSQL restart under a running gunicorn with persistent connections.

The restart happens on a throw-away cluster this test starts itself (initdb into a temporary
folder, a free port: tests/servers.py), never on a server others use. Before the restart a
rater holds an item; after it the same gunicorn worker (its connection was killed by the
restart) must serve the item page and store the answer without an error: the backend's health
check notices the dead socket and reconnects.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.servers import PostgresCluster, free_port, throwaway_postgres, wait_for

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SUBMIT = re.compile(r'action="(/r/a/([^/"]+)/submit/)"')
DATABASE = "heart_restart"
# Builds the rater test study in the cluster's database and prints its invitation token.
BUILD_STUDY = (
    "import django; django.setup();"
    "from tests.factories.annotation import build_study;"
    "print(build_study(quality_check_rate=0, status='open').invite_token)"
)


def _environment(database_url: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("REDIS_URL", None)  # nothing here needs Redis
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="heart_site.settings",
        DEBUG="1",  # plain static storage (no collectstatic manifest needed here)
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        **extra,
    )
    return env


def _run(cluster_url: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=_environment(cluster_url),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def cluster():
    with throwaway_postgres() as cluster:
        cluster.create_database(DATABASE)
        _run(cluster.url(DATABASE), "manage.py", "migrate", "--noinput", "-v0")
        yield cluster


@pytest.fixture
def gunicorn(cluster: PostgresCluster):
    port = free_port()
    env = _environment(
        cluster.url(DATABASE),
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
    if not wait_for(lambda: httpx.get(base + "/healthz").status_code == 200, 60):
        proc.terminate()
        pytest.fail("gunicorn did not start")
    yield base
    proc.terminate()
    proc.wait(timeout=20)


def _judgments_for(cluster: PostgresCluster, assignment: str) -> int:
    import psycopg

    with psycopg.connect(cluster.url(DATABASE)) as conn:
        row = conn.execute(
            "SELECT count(*) FROM annotation_judgment j"
            " JOIN annotation_assignment a ON a.id = j.assignment_id WHERE a.token = %s",
            [assignment],
        ).fetchone()
    return row[0]


def _accepts(cluster: PostgresCluster) -> bool:
    import psycopg

    with psycopg.connect(cluster.url(), connect_timeout=2) as conn:
        conn.execute("SELECT 1")
    return True


def test_rater_pages_survive_a_postgresql_restart(cluster, gunicorn):
    invite = _run(cluster.url(DATABASE), "-c", BUILD_STUDY).strip().splitlines()[-1]
    with httpx.Client(base_url=gunicorn, follow_redirects=True, timeout=20) as client:
        consent = client.get(f"/r/{invite}/")
        token = CSRF_INPUT.search(consent.text).group(1)
        client.post(f"/r/{invite}/consent/", data={"agree": "on", "csrfmiddlewaretoken": token})
        page = client.get(f"/r/{invite}/item/")
        assert page.status_code == 200
        url, assignment = SUBMIT.search(page.text).groups()

        cluster.restart()
        # Wait for PostgreSQL itself (not through gunicorn: the next page must be the
        # worker's first request on its dead connection).
        assert wait_for(lambda: _accepts(cluster), 60)

        again = client.get(f"/r/{invite}/item/")
        assert again.status_code == 200 and assignment in again.text
        headers = {"HX-Request": "true", "X-CSRFToken": client.cookies["csrftoken"]}
        answer = client.post(url, data={"choice": "3"}, headers=headers)
        assert answer.status_code == 200
    assert _judgments_for(cluster, assignment) == 1


def test_the_throwaway_cluster_is_gone_afterwards(tmp_path):
    """What the fixture promises: its own port and folder, both gone once it is stopped."""
    with throwaway_postgres() as cluster:
        folder, port = cluster.folder, cluster.port
        assert port != 5432 and _accepts(cluster)
    assert not folder.exists()
    assert not wait_for(lambda: _accepts(cluster), 1)
