"""The per-rater table: payment details for the admin, reversible exclusion, Prolific CSV."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from annotation.models import Pair, Rater
from tests.factories import JudgmentFactory, RaterFactory
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def study():
    study = build_study(quality_check_rate=0)
    done = RaterFactory(
        study=study,
        pseudonym="r-done",
        external_id="PID-DONE",
        consented_at=timezone.now(),
        finished_at=timezone.now(),
    )
    RaterFactory(
        study=study,
        pseudonym="r-flagged",
        external_id="=HYPERLINK(1)",
        flagged=True,
        flag_reason="failed 2 of 2 quality checks",
        consented_at=timezone.now(),
    )
    RaterFactory(study=study, pseudonym="r-invite", consented_at=None)  # no panel id
    for pair in Pair.objects.filter(study=study)[:2]:
        JudgmentFactory(
            study=study,
            pair=pair,
            rater=done,
            judge="r-done",
            judge_kind="human",
            winner="a",
            strength=1,
            strength_max=2,
            duration_ms=90_000,
            submitted_at=timezone.now(),
            shown_left="",
        )
    return study


def test_the_table_shows_payment_details_to_the_admin(admin_client, study):
    html = admin_client.get(reverse("studio:raters", args=[study.slug])).content.decode()
    row = html[html.index("r-done") : html.index("r-flagged")]
    assert "PID-DONE" in row and "<td>2</td>" in row and "3 min" in row
    assert "failed 2 of 2 quality checks" in html
    assert "1 active, 1 finished, 1 flagged or excluded, 3 in all" in html


def test_an_exclusion_records_who_and_why_and_can_be_reversed(admin_client, study):
    url = reverse("studio:rater_exclusion", args=[study.slug, "r-done"])
    admin_client.post(url, {"action": "exclude", "reason": "copied the same rationale"})
    rater = Rater.objects.get(pseudonym="r-done")
    assert rater.excluded and rater.exclusion_by.username == "boss"
    assert rater.exclusion_reason == "copied the same rationale" and rater.exclusion_at
    html = admin_client.get(reverse("studio:raters", args=[study.slug])).content.decode()
    assert "excluded by boss" in html and "copied the same rationale" in html
    admin_client.post(url, {"action": "auto", "reason": "checked again"})
    rater.refresh_from_db()
    assert rater.exclusion_override is None and not rater.excluded
    assert admin_client.post(url, {"action": "bogus"}).status_code == 400
    assert admin_client.get(url).status_code == 405


def test_recomputing_flags_reports_the_count(admin_client, study):
    response = admin_client.post(reverse("studio:raters_reflag", args=[study.slug]), follow=True)
    assert "Quality flags recomputed" in response.content.decode()


def test_the_prolific_csv_lists_panel_raters_with_an_outcome_and_action(admin_client, study):
    response = admin_client.get(reverse("studio:raters_csv", args=[study.slug]))
    assert "no-store" in response["Cache-Control"]
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:3] == ["participant_id", "outcome", "action"]
    by_id = {row[0]: row for row in rows[1:]}
    assert by_id["PID-DONE"][1:3] == ["completed", "APPROVE"]
    # A formula is neutralised; flagged but still working: no outcome yet, nothing to do.
    assert by_id["'=HYPERLINK(1)"][1:4] == ["", "NONE", "yes"]
    assert len(rows) == 3  # the invite-link rater has no panel id to approve


def test_the_raters_pages_are_for_study_admins_only(client, study):
    url = reverse("studio:raters", args=[study.slug])
    assert client.get(url).status_code == 302
    csv_url = reverse("studio:raters_csv", args=[study.slug])
    assert client.get(csv_url).status_code == 302
