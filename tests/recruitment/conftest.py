"""The fake Prolific server (`python -m fakes.prolific`) started on a free port, and a study
with one rater of every kind."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from django.utils import timezone

from annotation.models import Assignment, Pair, QualityCheckItem
from care.models import CareSettings, Outcome, RaterCare
from tests.factories import (
    AssignmentFactory,
    JudgmentFactory,
    QualityCheckItemFactory,
    RaterFactory,
)
from tests.factories.annotation import build_study
from tests.servers import free_port, wait_for

TOKEN = "prolific-test-token-0123456789"
ROOT = Path(__file__).resolve().parents[2]


class FakeProlific:
    def __init__(self, url: str) -> None:
        self.url = url

    def calls(self) -> list[dict]:
        return httpx.get(f"{self.url}/_control/calls").json()

    def api_calls(self) -> list[tuple[str, str]]:
        return [(c["method"], c["path"]) for c in self.calls()]

    def state(self) -> dict:
        return httpx.get(f"{self.url}/_control/state").json()

    def add_submission(self, study_id: str, participant_id: str) -> dict:
        body = {"study_id": study_id, "participant_id": participant_id}
        response = httpx.post(f"{self.url}/_control/submissions", json=body)
        assert response.status_code == 201, response.text
        return response.json()

    def move(self, submission_id: str, move: str, code: str | None = None) -> dict:
        url = f"{self.url}/_control/submissions/{submission_id}/{move}"
        response = httpx.post(url, json={"code": code} if code else {})
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="session")
def fake_prolific_server():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "fakes.prolific", "--port", str(port), "--token", TOKEN],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        assert wait_for(lambda: httpx.get(f"{url}/healthz").status_code == 200, 20), (
            process.stderr.read().decode() if process.poll() is not None else "no answer"
        )
        yield FakeProlific(url)
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def fake_prolific(fake_prolific_server, settings):
    httpx.post(f"{fake_prolific_server.url}/_control/reset")
    settings.PROLIFIC_API_URL = fake_prolific_server.url
    return fake_prolific_server


def _judge_check(study, rater, *, kind: str, passed: bool):
    item = QualityCheckItemFactory(study=study, kind=kind)
    return JudgmentFactory(
        quality_item=item,
        rater=rater,
        judge=rater.pseudonym,
        quality_check=True,
        passed_check=passed,
        duration_ms=20_000,
    )


@pytest.fixture
def people():
    """One rater of each kind, every one from Prolific (PID-<kind>)."""
    study = build_study(slug="paid", quality_check_rate=0.2)
    CareSettings.objects.create(
        study=study,
        fail_outcome=Outcome.CODE,
        stop_outcome=Outcome.CODE,
        qualification_enabled=True,
    )
    start = timezone.now() - timedelta(minutes=30)

    def rater(name: str, **fields):
        return RaterFactory(
            study=study,
            pseudonym=f"r-{name}",
            external_id=f"PID-{name}",
            source="prolific",
            consented_at=start,
            **fields,
        )

    done = rater("completed", finished_at=start + timedelta(minutes=12))
    JudgmentFactory(
        study=study,
        pair=Pair.objects.filter(study=study).first(),
        rater=done,
        judge=done.pseudonym,
        duration_ms=60_000,
        submitted_at=start + timedelta(minutes=12),
    )
    screened = rater("screened", finished_at=start + timedelta(minutes=3))
    RaterCare.objects.create(rater=screened, qualification="failed", qualified_at=start)
    stopped = rater("stopped", finished_at=start + timedelta(minutes=6))
    RaterCare.objects.create(
        rater=stopped,
        qualification="passed",
        stopped_at=start + timedelta(minutes=6),
        stop_outcome=Outcome.CODE,
        seconds_worked=360,
    )
    cheat = rater("cheat", finished_at=start + timedelta(minutes=10), flagged=True)
    cheat.flag_reason = "failed 2 of 3 quality checks"
    cheat.save()
    _judge_check(study, cheat, kind=QualityCheckItem.Kind.ATTENTION, passed=False)
    _judge_check(study, cheat, kind=QualityCheckItem.Kind.ATTENTION, passed=False)
    sloppy = rater("sloppy", finished_at=start + timedelta(minutes=10), flagged=True)
    _judge_check(study, sloppy, kind=QualityCheckItem.Kind.ATTENTION, passed=False)
    _judge_check(study, sloppy, kind=QualityCheckItem.Kind.GOLD, passed=False)
    _judge_check(study, sloppy, kind=QualityCheckItem.Kind.GOLD, passed=False)
    leaving = rater("leaving")
    AssignmentFactory(rater=leaving, pair=Pair.objects.filter(study=study).last())
    working = rater("working")
    AssignmentFactory(rater=working, pair=Pair.objects.filter(study=study).order_by("-pk")[1])
    RaterFactory(study=study, pseudonym="r-invited")  # an invitation rater: no Prolific id
    return study


def assignment_leased(rater) -> bool:
    return Assignment.objects.filter(rater=rater, status=Assignment.Status.LEASED).exists()


BONUS = Decimal("0.50")
