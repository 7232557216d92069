"""A browser upload imported by a real Celery worker: queued, then done, the page polls it."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from completions.models import DialogueContext
from studio.models import ImportJob
from tests.factories import StudyFactory
from tests.factories.files import bad_contexts_jsonl, contexts_jsonl

pytestmark = pytest.mark.integration


def _wait_until_finished(job: ImportJob, timeout: float = 30.0) -> ImportJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.finished:
            return job
        time.sleep(0.25)
    pytest.fail(f"the worker left the import {job.status} after {timeout} s")


def test_a_real_worker_imports_an_upload_and_the_page_follows(
    client, transactional_db, celery_live
):
    study = StudyFactory(slug="worker-import", name="Worker import", status="draft")
    admin = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(admin)
    url = reverse("studio:material", args=[study.slug])
    page = client.post(
        url,
        {"kind": "contexts", "file": SimpleUploadedFile("c.jsonl", contexts_jsonl())},
        follow=True,
    ).content.decode()
    assert "c.jsonl looks like JSON Lines contexts: queued for a worker" in page
    job = _wait_until_finished(ImportJob.objects.get(study=study, filename="c.jsonl"))
    assert job.status == "done" and "contexts created: 3" in job.report
    assert DialogueContext.objects.filter(study=study).count() == 3
    poll = client.get(
        reverse("studio:import_job", args=[study.slug, job.pk]), HTTP_HX_REQUEST="true"
    )
    fragment = poll.content.decode()
    assert "imported" in fragment and "every 2s" not in fragment  # finished: polling stops

    client.post(
        url, {"kind": "contexts", "file": SimpleUploadedFile("bad.jsonl", bad_contexts_jsonl())}
    )
    refused = _wait_until_finished(ImportJob.objects.get(study=study, filename="bad.jsonl"))
    assert refused.status == "failed" and "line 2:" in refused.error
    assert DialogueContext.objects.filter(study=study).count() == 3
