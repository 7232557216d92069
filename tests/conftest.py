"""Shared fixtures: services detection, a real Celery worker, Playwright's Debian chromium."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in the test thread; Django's ORM must still be usable.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parent.parent
REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing(reason: str) -> None:
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (REQUIRE_SERVICES=1: CI must run this test)")
    pytest.skip(reason)


@pytest.fixture
def postgres(settings):
    """Skip (or fail on CI) unless the test database is PostgreSQL."""
    from django.db import connection

    if connection.vendor != "postgresql":
        _missing("needs PostgreSQL (set DATABASE_URL)")
    return connection


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker):
    """A real `celery worker` subprocess on the test database and the Redis broker."""
    from django.conf import settings
    from django.db import connection

    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url or connection.vendor != "postgresql":
        _missing("needs REDIS_URL and PostgreSQL for a real Celery worker")
    db = settings.DATABASES["default"]
    env = dict(os.environ)
    env.update(
        DATABASE_URL=(
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        ),
        CELERY_TASK_ALWAYS_EAGER="0",
        DJANGO_SETTINGS_MODULE="heart_site.settings_test",
    )
    queues = "default,llm,refit"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "heart_site",
            "worker",
            "-Q",
            queues,
            "--concurrency",
            "2",
            "--pool",
            "prefork",
            "--loglevel",
            "WARNING",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
    )
    from heart_site.celery import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"celery worker exited with {proc.returncode}")
        try:
            if app.control.ping(timeout=1.0):
                break
        except Exception:  # broker not answering yet
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("celery worker did not answer a ping within 60 s")
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def celery_live(celery_worker_process):
    """Send tasks to the real worker (not eagerly) for the duration of a test."""
    from heart_site.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False
    yield app
    app.conf.task_always_eager = previous


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright (its own browser download does not work here)."""
    if not Path(CHROMIUM).exists():
        _missing(f"needs Debian chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}


@pytest.fixture(params=["desktop", "phone"])
def page(request, browser, live_server):
    """A fresh browser page on a desktop and on a phone-sized viewport."""
    context = browser.new_context(
        **(PHONE if request.param == "phone" else DESKTOP), base_url=live_server.url
    )
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    pg.viewport_name = request.param
    yield pg
    context.close()


@pytest.fixture
def desktop_page(browser, live_server):
    context = browser.new_context(**DESKTOP, base_url=live_server.url)
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def assert_accessible(pg) -> None:
    """axe-core: no serious or critical violation on the current page."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(pg)
    bad = [v for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert not bad, "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} -> {[n['target'] for n in v['nodes']][:5]}"
        for v in bad
    )


@pytest.fixture(scope="session")
def fake_llm_server():
    """The project's fake OpenAI/Anthropic server (fakes.llm) on a free port."""
    from fakes.llm import FakeServer

    with FakeServer() as server:
        yield server


@pytest.fixture
def fake_llm(fake_llm_server):
    """The fake server with its request counts reset for this test."""
    fake_llm_server.state.reset()
    return fake_llm_server


@pytest.fixture
def few_judgments_shown(monkeypatch):
    """For tests of other behaviour on a handful of hand-made verdicts: every row shown and
    the combined board fitted whatever its size (the minimums are tested on their own, in
    test_board_minimums.py and test_commands.py)."""
    from ranking import board

    for preset in board.PRESETS.values():
        monkeypatch.setitem(preset, "min_comparisons", 1)
        monkeypatch.setitem(preset, "min_source_judgments", 1)


@pytest.fixture(autouse=True)
def _no_request_left_open():
    """Each test starts outside a request. Django's test client sends `request_finished` for a
    streaming response (a CSV or JSONL download) only once its content is read to the end; a
    test that reads only the status left this thread "in a request", so `after_response` put
    off the refits of every later test on it (a server always closes the response)."""
    from core import after_response

    after_response._local.pending = None
