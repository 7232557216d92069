"""The outbox and the job leases with a real Celery worker: an upload made while the broker is
unreachable is imported once it is back; an import whose worker is killed mid-run is redone.

The broker is "down" by pointing the app at a closed port; the shared Redis is never stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Judgment
from completions.models import DialogueContext
from core.enqueue import deferred_tasks_publish, enqueue
from core.models import DeferredTask
from studio.models import ImportJob
from studio.tasks import import_jobs_resume_stalled
from tests.conftest import ROOT
from tests.core.test_faults import CLOSED, _celery_broker
from tests.factories import ImportJobFactory, StudyFactory
from tests.factories.files import contexts_jsonl

pytestmark = pytest.mark.integration
QUEUE = "secweb-import-kill-test"


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


def test_an_upload_while_the_broker_is_down_is_imported_once_it_is_back(
    transactional_db, celery_live
):
    study = StudyFactory(slug="broker-down-upload", name="Broker down", status="draft")
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("boss", "b@example.org", "pw"))
    with _celery_broker(CLOSED):
        page = client.post(
            reverse("studio:material", args=[study.slug]),
            {"kind": "contexts", "file": SimpleUploadedFile("c.jsonl", contexts_jsonl())},
            follow=True,
        )
    assert (
        page.status_code == 200
        and "c.jsonl looks like JSON Lines contexts: queued for a worker" in page.content.decode()
    )
    job = ImportJob.objects.get(study=study)
    assert DeferredTask.objects.filter(name="studio.tasks.import_job_run_task").exists()
    time.sleep(1)
    job.refresh_from_db()
    assert job.status == "queued"  # nothing could reach the worker meanwhile
    assert deferred_tasks_publish() >= 1  # beat, once the broker is back
    _wait(lambda: ImportJob.objects.get(pk=job.pk).finished, 60, "the import")
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert DialogueContext.objects.filter(study=study).count() == 3


def _judgments_file(contexts: int, judges: int) -> bytes:
    pairs = [("model-a", "model-b"), ("model-a", "model-c"), ("model-b", "model-c")]
    return "".join(
        json.dumps(
            {"context_id": f"c{c}", "system_a": a, "system_b": b, "judge": f"j{j}", "winner": "a"}
        )
        + "\n"
        for c in range(contexts)
        for a, b in pairs
        for j in range(judges)
    ).encode()


def _worker(env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "heart_site", "worker", "-Q", QUEUE,
         "--concurrency", "1", "--pool", "prefork", "--loglevel", "WARNING",
         "--without-heartbeat", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip


def test_an_import_whose_worker_is_killed_mid_run_is_redone_once(transactional_db, celery_live):
    from django.conf import settings

    db = settings.DATABASES["default"]
    env = dict(os.environ)
    env.update(
        DATABASE_URL=(
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        ),
        CELERY_TASK_ALWAYS_EAGER="0",
        DJANGO_SETTINGS_MODULE="heart_site.settings_test",
        JOB_LEASE_SECONDS="2",  # the killed worker's lease lapses 2 s after its last renewal
    )
    study = StudyFactory(slug="killed-import", name="Killed import", status="draft")
    data = _judgments_file(contexts=1000, judges=50)  # 150,000 lines
    job = ImportJobFactory(
        study=study, kind="judgments", filename="j.jsonl", size=len(data), data=data
    )
    doomed = _worker(env)
    try:
        enqueue("studio.tasks.import_job_run_task", job.pk, queue=QUEUE)
        _wait(
            lambda: ImportJob.objects.filter(pk=job.pk, status="running").exists(),
            60,
            "the first worker to start the import",
        )
        time.sleep(1.5)  # well into reading and writing 150,000 lines
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(10)
    finally:
        if doomed.poll() is None:
            os.killpg(doomed.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    assert ImportJob.objects.get(pk=job.pk).status == "running"
    assert Judgment.objects.filter(study=study).count() == 0  # its transaction died with it

    # Beat's every-minute job, until the lease has lapsed and the job is queued again.
    _wait(lambda: job.pk in import_jobs_resume_stalled(), 30, "the lease to lapse")
    _wait(lambda: ImportJob.objects.get(pk=job.pk).finished, 120, "the redone import")
    redone_after = time.monotonic() - killed_at
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert "created: 150000" in job.report
    assert Judgment.objects.filter(study=study).count() == 150_000  # once, not twice
    assert redone_after < 180
