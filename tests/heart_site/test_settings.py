"""Settings come from the environment: embedded default vs services, deploy checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _settings(**env: str) -> dict:
    """Import heart_site.settings in a clean interpreter with exactly this environment."""
    script = (
        "import json, heart_site.settings as s;"
        "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'],"
        "'name': str(s.DATABASES['default']['NAME']), 'eager': s.CELERY_TASK_ALWAYS_EAGER,"
        "'broker': s.CELERY_BROKER_URL, 'debug': s.DEBUG}))"
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DEBUG", "CELERY_TASK_ALWAYS_EAGER"}
    }
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    return json.loads(out.stdout)


def test_with_nothing_set_it_uses_sqlite_eager_celery_and_no_debug():
    conf = _settings()
    assert conf["engine"] == "django.db.backends.sqlite3"
    assert conf["eager"] is True
    assert conf["debug"] is False


def test_with_services_set_it_uses_postgresql_and_the_redis_broker():
    conf = _settings(
        DATABASE_URL="postgres://u@db.example:5432/heart", REDIS_URL="redis://cache.example:6379/0"
    )
    # Django's PostgreSQL backend with a health check that needs no round trip.
    assert conf["engine"] == "heart_site.pgbackend"
    assert conf["name"] == "heart"
    assert conf["eager"] is False
    assert conf["broker"] == "redis://cache.example:6379/0"


def test_deploy_checks_pass_with_production_settings():
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "DEBUG",
            "SECURE_SSL_REDIRECT",
            "SESSION_COOKIE_SECURE",
            "CSRF_COOKIE_SECURE",
            "DJANGO_ALLOW_ASYNC_UNSAFE",
        }
    }
    env.update(
        SECRET_KEY="k" * 20 + "3vQ9x!Zr7#Lm2@Pw8$Nt5^Hy1&Bc6*Df4(Gs0)Jk",
        DEBUG="0",
        DJANGO_SETTINGS_MODULE="heart_site.settings",
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_the_health_endpoint_answers(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert {"redis", "broker"} <= set(body)  # details: tests/heart_site/test_faults.py


def test_the_embedded_default_migrates_from_scratch_and_keeps_its_pair_triggers(tmp_path):
    """`make demo` migrates a new SQLite file: every migration must apply there too (CI's own
    test database is PostgreSQL, so only this test walks the SQLite path from zero)."""
    import sqlite3

    database = tmp_path / "fresh.sqlite3"
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    out = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env={**clean, "DATABASE_URL": f"sqlite:///{database}"},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    triggers = sqlite3.connect(database).execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
    )
    assert [name for (name,) in triggers] == [
        "pair_same_context_insert",
        "pair_same_context_update",
    ]


def _test_settings(**env: str) -> dict:
    """heart_site.settings_test's test database and Redis db in a clean interpreter."""
    script = (
        "import json, heart_site.settings_test as s;"
        "print(json.dumps({'test_db': s.DATABASES['default'].get('TEST', {}).get('NAME'),"
        "'checkout': s.CHECKOUT_ID, 'redis_db': s.TEST_REDIS_DB}))"
    )
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "TEST_DB_NAME"}}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    return json.loads(out.stdout)


def test_the_test_database_and_redis_db_are_this_checkouts_own_by_default():
    import hashlib

    expected = hashlib.sha1(str(ROOT).encode()).hexdigest()[:8]
    conf = _test_settings(DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres")
    assert conf["checkout"] == expected
    assert conf["test_db"] == f"test_heart_{expected}"
    assert 1 <= conf["redis_db"] <= 15  # never db 0, where a real installation keeps its data
    chosen = _test_settings(
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres", TEST_DB_NAME="test_heart_ci"
    )
    assert chosen["test_db"] == "test_heart_ci"
