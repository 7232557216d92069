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
    clean.setdefault("SECRET_KEY", STRONG_KEY)
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
    assert conf["engine"] == "core.pgbackend"
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
        PSEUDONYM_KEY="p" * 20 + "7hT2w!Qe9#Rb4@Ys1$Uk6^Io3&Pa8*Sd5(Fg0)Lz",
        DEBUG="0",
        DJANGO_SETTINGS_MODULE="heart_site.settings",
    )
    out = _deploy_check(env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def _deploy_check(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def _production_env(**extra: str) -> dict:
    drop = {"DEBUG", "SECRET_KEY", "PSEUDONYM_KEY", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE"}
    drop |= {"CSRF_COOKIE_SECURE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "DEBUG": "0", "DJANGO_SETTINGS_MODULE": "heart_site.settings", **extra}


STRONG_KEY = "s" * 20 + "9vQ2x!Zr7#Lm4@Pw8$Nt5^Hy1&Bc6*Df3(Gs0)Jk"


def test_the_deploy_check_fails_without_a_pseudonym_key_of_its_own():
    out = _deploy_check(_production_env(SECRET_KEY=STRONG_KEY))
    assert out.returncode != 0
    assert "heart_site.E001" in out.stderr and "PSEUDONYM_KEY is not set" in out.stderr
    same = _deploy_check(_production_env(SECRET_KEY=STRONG_KEY, PSEUDONYM_KEY=STRONG_KEY))
    assert same.returncode != 0 and "heart_site.E002" in same.stderr


def test_debug_off_refuses_the_insecure_demo_key_with_a_clear_startup_error():
    for key in ("django-insecure-heart-studio-embedded-default", "django-insecure-abc"):
        out = _deploy_check(_production_env(SECRET_KEY=key))
        assert out.returncode != 0
        assert "SECRET_KEY is the insecure demo key and DEBUG is off" in out.stderr


def test_a_deployment_without_a_secret_key_does_not_start():
    env = _production_env(DATABASE_URL="postgres://u@db.example:5432/heart")
    out = _deploy_check(env)
    assert out.returncode != 0
    assert "SECRET_KEY is not set and DEBUG is off" in out.stderr


def test_the_embedded_default_makes_its_own_random_key_once(tmp_path):
    from core.deploy import INSECURE_DEFAULT, secret_key

    first = secret_key("", debug=False, embedded=True, folder=tmp_path)
    again = secret_key("", debug=False, embedded=True, folder=tmp_path)
    (tmp_path / "other").mkdir()
    other = secret_key("", debug=False, embedded=True, folder=tmp_path / "other")
    assert first == again and len(first) >= 50 and first != INSECURE_DEFAULT
    assert (tmp_path / ".secret_key").stat().st_mode & 0o077 == 0  # readable by its owner only
    assert other != first
    assert secret_key("", debug=True, embedded=True, folder=tmp_path) == INSECURE_DEFAULT


def test_the_health_endpoint_answers(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert {"redis", "broker"} <= set(body)  # details: tests/core/test_faults.py


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


def test_healthz_is_exempt_from_the_https_redirect_and_other_pages_are_not(db, settings):
    from django.test import Client

    settings.SECURE_SSL_REDIRECT = True
    client = Client()  # a new client builds its middleware with these settings
    health = client.get("/healthz")
    assert health.status_code == 200 and health.json()["database"] == "ok"
    assert client.get("/studio/").status_code == 301


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
