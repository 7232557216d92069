"""A judge run through a real Celery worker on Redis, SIGKILLed mid-run and restarted: exactly
one verdict per (pair, judge, order), and no unit sent twice except those in flight at the kill."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from annotation.models import Judgment
from core.enqueue import enqueue
from llm import services
from llm.kinds import get_kind
from llm.models import Run, RunStatus, Unit, UnitStatus
from tests.conftest import ROOT, _missing
from tests.factories.llm import endpoint, study_with_pairs

pytestmark = pytest.mark.integration
QUEUE = "llm-kill-test"


def _worker(env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "heart_site", "worker", "-Q", QUEUE,
         "--concurrency", "1", "--pool", "prefork", "--loglevel", "WARNING",
         "--without-heartbeat", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip


def _worker_env() -> dict:
    from django.conf import settings
    from django.db import connection

    if not os.environ.get("REDIS_URL") or connection.vendor != "postgresql":
        _missing("needs REDIS_URL and PostgreSQL for a real Celery worker")
    db = settings.DATABASES["default"]
    env = dict(os.environ)
    env.update(
        DATABASE_URL=(
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        ),
        CELERY_TASK_ALWAYS_EAGER="0",
        DJANGO_SETTINGS_MODULE="heart_site.settings_test",
        LLM_QUEUE=QUEUE,  # the restarted worker's own resume goes to this queue
        LLM_LEASE_SECONDS="2",  # a killed executor's units come back after 2 s
        LLM_POLL_SECONDS="0.05",
    )
    return env


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def _server_key(unit: Unit, kind) -> str:
    """The fake server's request key of a unit: model | hash of (system, first message)."""
    request = kind.build_requests([unit])[unit.pk]
    root = [{"role": "system", "content": request.system}, request.messages[0]]
    digest = hashlib.sha256(json.dumps(root, sort_keys=True, ensure_ascii=False).encode())
    return f"{unit.endpoint.model.partition('@')[0]}|{digest.hexdigest()[:16]}"


def test_a_killed_worker_mid_run_leaves_one_verdict_per_pair_judge_and_order(
    transactional_db, fake_llm
):
    env = _worker_env()
    study = study_with_pairs(6)  # 36 pairs
    judges = [
        endpoint(fake_llm, "kill-gemini", model="kill-gemini@ttft=150", family="gemini"),
        endpoint(fake_llm, "kill-mistral", model="kill-mistral@ttft=150", family="mistral"),
    ]
    run = services.run_plan(study=study, kind="judge", endpoints=judges)
    assert run.plan["units"] == 144
    services.run_start(run=run, dispatch=False)

    from heart_site.celery import app

    first = _worker(env)
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    try:
        _wait(lambda: app.control.ping(timeout=0.5), 60, "the first worker")
        enqueue(services.RUN_TASK, run.pk, queue=QUEUE)
        _wait(
            lambda: Unit.objects.filter(run=run, status=UnitStatus.DONE).count() >= 30,
            90,
            "30 units done",
        )
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        app.conf.task_always_eager = eager
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    in_flight_at_kill = set(
        Unit.objects.filter(run=run, status=UnitStatus.IN_FLIGHT).values_list("id", flat=True)
    )
    done_at_kill = Unit.objects.filter(run=run, status=UnitStatus.DONE).count()
    assert done_at_kill < 144 and Run.objects.get(pk=run.pk).status == RunStatus.RUNNING

    second = _worker(env)  # its worker_ready hook queues the running run again
    try:
        _wait(
            lambda: Run.objects.get(pk=run.pk).status == RunStatus.FINISHED,
            120,
            "the run to finish",
        )
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        second.wait(30)

    units = list(Unit.objects.filter(run=run).select_related("endpoint"))
    assert all(u.status == UnitStatus.DONE for u in units)
    verdicts = Counter(
        Judgment.objects.filter(study=study).values_list("pair_id", "judge", "shown_left")
    )
    assert len(verdicts) == 144 and set(verdicts.values()) == {1}
    resent = {u.pk for u in units if u.sends > 1}
    assert resent <= in_flight_at_kill
    kind = get_kind("judge")
    sent = fake_llm.state.counts
    for unit in units:
        count = sent[_server_key(unit, kind)]
        assert count == 1 or (unit.pk in in_flight_at_kill and count == 2), unit.key
    assert sum(sent.values()) == fake_llm.state.total <= 144 + len(in_flight_at_kill)
