"""The outbox: every task published through one function, by name; nothing lost with the broker
down; imports and refits that raise end as failed with their reason; stalled jobs come back.

The broker is made unreachable by pointing the Celery app at a closed port (never by stopping
the shared Redis). A real worker: tests/integration/test_outbox_worker.py.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from core.enqueue import deferred_tasks_publish, enqueue
from core.models import DeferredTask
from llm.models import Run
from ranking import services as ranking_services
from ranking.models import RefitJob
from ranking.tasks import refit_jobs_resume_stalled
from studio import services as studio_services
from studio.models import ImportJob
from studio.tasks import import_jobs_resume_stalled
from tests.core.test_faults import CLOSED, _celery_broker
from tests.factories import EndpointFactory, ImportJobFactory, RefitJobFactory, StudyFactory
from tests.factories.files import contexts_jsonl
from tests.factories.llm import study_with_pairs

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
OUTBOX = ROOT / "core" / "enqueue.py"
PUBLISHING = re.compile(r"\.(delay|apply_async|send_task)\(")


def _python_files(skip_tests: bool = False) -> list[Path]:
    skip = {".venv", ".git", "node_modules", "site", "build"} | ({"tests"} if skip_tests else set())
    return [p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)]


def test_nothing_publishes_a_task_outside_the_outbox():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _python_files(skip_tests=True)  # tests may run a task themselves
        if path != OUTBOX
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PUBLISHING.search(line)
    ]
    assert offenders == [], "publish through core.enqueue.enqueue(name, ...):\n" + "\n".join(
        offenders
    )


def test_no_service_imports_its_own_tasks_module():
    services = [p for p in _python_files() if p.name == "services.py" or "services" in p.parts]
    cycles = [
        str(p.relative_to(ROOT))
        for p in services
        if re.search(
            r"from \.+tasks import|from \. import tasks|import \w+\.tasks\b", p.read_text()
        )
    ]
    assert cycles == []


@pytest.fixture
def admin_client():
    admin = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client = Client()
    client.force_login(admin)
    return client


@pytest.fixture
def broker_down(settings):
    with _celery_broker(CLOSED):  # first: it saves the app's real settings
        settings.CELERY_TASK_ALWAYS_EAGER = False
        yield


def test_an_upload_with_the_broker_down_answers_normally_and_is_kept(
    admin_client, broker_down, django_capture_on_commit_callbacks
):
    study = study_with_pairs(1)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("studio:material", args=[study.slug]),
            {"kind": "contexts", "file": SimpleUploadedFile("c.jsonl", contexts_jsonl())},
            follow=True,
        )
    assert response.status_code == 200
    page = response.content.decode()
    assert "c.jsonl looks like JSON Lines contexts: queued for a worker" in page
    job = ImportJob.objects.get(study=study)
    assert job.status == "queued" and bytes(job.data) == contexts_jsonl()
    waiting = DeferredTask.objects.get()
    assert waiting.name == "studio.tasks.import_job_run_task" and waiting.args == [job.pk]


def test_a_run_launch_with_the_broker_down_answers_normally_and_is_kept(
    admin_client, broker_down, django_capture_on_commit_callbacks
):
    study = study_with_pairs(1)
    judge = EndpointFactory(
        name="judge-gpt", provider="openai", model="m", family="gpt", base_url="http://x/v1"
    )
    admin_client.post(f"/studio/{study.slug}/llm/plan/", {"kind": "judge", "endpoints": [judge.pk]})
    run = Run.objects.get(study=study)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(f"/studio/{study.slug}/llm/runs/{run.pk}/start/")
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == "running"  # it starts as soon as beat can publish its executor
    waiting = DeferredTask.objects.get()
    assert waiting.name == "llm.tasks.llm_run_execute" and waiting.args == [run.pk]


def test_beat_publishes_what_waited_once_the_broker_is_back(settings):
    import os

    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.skip("needs REDIS_URL for a real broker")
    with _celery_broker(CLOSED):
        assert enqueue("studio.tasks.import_jobs_resume_stalled", queue="secweb-nobody") is False
        assert deferred_tasks_publish() == 0
    row = DeferredTask.objects.get()
    assert row.queue == "secweb-nobody" and row.attempts == 1 and row.last_error
    with _celery_broker(redis_url):
        from heart_site.celery import app

        assert deferred_tasks_publish() == 1
        with app.connection_for_write() as conn:  # it waits on the queue it was meant for
            queue = conn.default_channel.queue_declare("secweb-nobody", passive=True)
            assert queue.message_count == 1
            conn.default_channel.queue_purge("secweb-nobody")
    assert not DeferredTask.objects.exists()


def test_an_import_that_raises_ends_failed_with_its_reason(monkeypatch):
    study = study_with_pairs(1)
    job = ImportJobFactory(study=study, kind="contexts", filename="c.jsonl", data=b"{}")

    def explode(study, path):
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(studio_services.IMPORTERS, "contexts", explode)
    finished = studio_services.import_job_run(job_id=job.pk)
    assert finished.status == "failed" and finished.finished
    assert finished.error == "import failed, nothing changed: RuntimeError: disk on fire"
    assert bytes(finished.data) == b""


def test_a_refit_that_raises_ends_failed_and_the_history_page_says_why(admin_client, monkeypatch):
    study = study_with_pairs(1)

    def explode(**kwargs):
        raise MemoryError("the fit needed more memory")

    monkeypatch.setattr(ranking_services, "snapshot_refit_study", explode)
    job = ranking_services.refit_job_create(study_id=study.pk, trigger="manual")
    assert ranking_services.refit_job_run(job_id=job.pk) is None
    job.refresh_from_db()
    assert job.status == "failed" and "the fit needed more memory" in job.error
    page = admin_client.get(reverse("ranking:history", args=[study.slug])).content.decode()
    assert "failed</strong>: MemoryError: the fit needed more memory" in page


def test_jobs_left_running_by_a_dead_worker_are_run_again():
    study = StudyFactory()
    lapsed = timezone.now() - timedelta(seconds=5)
    imp = ImportJobFactory(
        study=study, kind="contexts", filename="c.jsonl", data=contexts_jsonl(), status="running"
    )
    ImportJob.objects.filter(pk=imp.pk).update(lease_until=lapsed)
    refit = RefitJobFactory(study=study, trigger="nightly", status="running")
    RefitJob.objects.filter(pk=refit.pk).update(lease_until=lapsed)
    alive = RefitJobFactory(study=study, trigger="manual", status="running")
    RefitJob.objects.filter(pk=alive.pk).update(lease_until=timezone.now() + timedelta(minutes=1))
    # What beat runs every minute (eager here: runs at once).
    assert import_jobs_resume_stalled() == [imp.pk]
    assert refit_jobs_resume_stalled() == [refit.pk]
    imp.refresh_from_db()
    refit.refresh_from_db()
    alive.refresh_from_db()
    assert imp.status == "done", imp.error
    assert study.contexts.count() >= 3
    assert refit.status == "done", refit.error
    assert alive.status == "running"  # its worker still renews it: left alone


def test_a_job_is_claimed_once():
    from core.jobs import job_claim

    study = study_with_pairs(1)
    job = RefitJobFactory(study=study, trigger="manual")
    assert job_claim(RefitJob, job.pk) is True
    assert job_claim(RefitJob, job.pk) is False  # running, lease held
