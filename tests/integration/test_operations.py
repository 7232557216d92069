"""The operations services as docker-compose.yml starts them (its commands, run here without
Docker): a queue's worker serving its metrics to the scraper only, and Flower behind its
password."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import _missing

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "worker-metrics-token"


def _service(name: str) -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"][name]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLOWER_", "PROMETHEUS_"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
        DJANGO_SETTINGS_MODULE="heart_site.settings_test",
        CELERY_TASK_ALWAYS_EAGER="0",
        **extra,
    )
    return env


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def _task_count(text: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "heart_celery_tasks_total" and sample.labels == labels:
                return sample.value
    return 0.0


def test_a_queue_worker_serves_its_task_metrics_to_the_scraper_only(transactional_db, postgres):
    from core.enqueue import enqueue
    from heart_site.celery import app

    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        _missing("needs REDIS_URL for a real Celery worker")
    db = postgres.settings_dict  # the test database
    database_url = (
        f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    )
    # worker-default's command, on a queue of its own so no other worker takes the tasks.
    queue, port = f"ops-metrics-{uuid.uuid4().hex[:8]}", _free_port()
    command = _service("worker-default")["command"]
    command = [sys.executable, "-m", *command]
    command[command.index("-Q") + 1] = queue
    command[command.index("--hostname") + 1] = f"{queue}@%h"
    env = _env(
        DATABASE_URL=database_url,
        CELERY_METRICS_PORT=str(port),
        CELERY_METRICS_ADDR="127.0.0.1",
        METRICS_TOKEN=TOKEN,
        METRICS_ALLOWED_IPS="",
    )
    proc = subprocess.Popen(command, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}/metrics"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        deadline = time.monotonic() + 60
        while not app.control.ping(destination=[f"{queue}@{socket.gethostname()}"], timeout=1):
            assert proc.poll() is None, f"the worker exited with {proc.returncode}"
            assert time.monotonic() < deadline, "the worker did not answer a ping in 60 s"
        eager, app.conf.task_always_eager = app.conf.task_always_eager, False
        try:
            for _ in range(3):
                enqueue("core.tasks.deferred_tasks_send", queue=queue)
        finally:
            app.conf.task_always_eager = eager
        labels = {"task": "core.tasks.deferred_tasks_send", "queue": queue}
        deadline = time.monotonic() + 30
        while _task_count(httpx.get(url, headers=auth).text, **labels, state="SUCCESS") < 3:
            assert time.monotonic() < deadline, httpx.get(url, headers=auth).text[-3000:]
            time.sleep(0.3)
        text = httpx.get(url, headers=auth).text
        assert _task_count(text, **labels, state="SUCCESS") == 3
        assert f'heart_celery_task_seconds_count{{queue="{queue}"' in text
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-Forwarded-For": "127.0.0.1"}):
            refused = httpx.get(url, headers=headers)
            assert refused.status_code == 403 and "heart_" not in refused.text
    finally:
        _stop(proc)


def _flower_script() -> str:
    return _service("flower")["command"][-1].replace("$$", "$")


def test_flower_refuses_to_start_without_a_password():
    port = _free_port()
    result = subprocess.run(
        ["sh", "-c", _flower_script()],
        cwd=ROOT,
        env=_env(FLOWER_PORT=str(port)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 64
    assert "set FLOWER_BASIC_AUTH=user:password" in result.stderr
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/")


def test_flower_shows_the_queues_only_with_its_password():
    if not os.environ.get("REDIS_URL"):
        _missing("needs REDIS_URL (Flower reads the broker)")
    port = _free_port()
    env = _env(FLOWER_BASIC_AUTH="ops:a-long-password", FLOWER_PORT=str(port))
    env["FLOWER_ADDRESS"] = "127.0.0.1"
    proc = subprocess.Popen(["sh", "-c", _flower_script()], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"Flower exited with {proc.returncode}"
            try:
                if httpx.get(f"{base}/healthcheck").status_code == 200:
                    break
            except httpx.ConnectError:
                pass
            assert time.monotonic() < deadline, "Flower did not answer in 60 s"
            time.sleep(0.3)
        for path in ("/", "/workers", "/tasks", "/broker", "/api/workers", "/api/tasks"):
            assert httpx.get(base + path).status_code == 401, path
            wrong = httpx.get(base + path, auth=("ops", "guess"))
            assert wrong.status_code == 401, path
        page = httpx.get(f"{base}/", auth=("ops", "a-long-password"), follow_redirects=True)
        assert page.status_code == 200 and "Flower" in page.text
    finally:
        _stop(proc)
