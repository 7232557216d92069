"""The study admin's rater-quality page: progress, per-rater figures, reversible exclusion."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from annotation.models import Pair, Rater
from completions.access import STUDY_ADMINS
from tests.conftest import assert_accessible
from tests.factories import JudgmentFactory, RaterFactory
from tests.factories.annotation import build_study

pytestmark = [pytest.mark.browser]
PASSWORD = "correct horse battery"


@pytest.fixture
def study(transactional_db, postgres):
    study = build_study(slug="quality-study", n_contexts=2, quota=2)
    careful = RaterFactory(
        study=study, pseudonym="r-careful", external_id="PROLIFIC-A", consented_at=None
    )
    hasty = RaterFactory(
        study=study,
        pseudonym="r-hasty",
        external_id="PROLIFIC-B",
        flagged=True,
        flag_reason="failed 2 of 2 quality checks",
        consented_at=None,
    )
    pair = Pair.objects.filter(study=study).order_by("pk").first()
    for rater in (careful, hasty):
        JudgmentFactory(
            study=study,
            pair=pair,
            rater=rater,
            judge=rater.pseudonym,
            judge_kind="human",
            winner="a",
            strength=1,
            strength_max=2,
            shown_left="a",
            duration_ms=12_000,
            submitted_at=timezone.now(),
        )
    Pair.objects.filter(pk=pair.pk).update(n_judgments=2)
    admin = User.objects.create_user("lead", password=PASSWORD, is_staff=True)
    admin.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    return study


def test_a_study_admin_reads_progress_and_reverses_an_exclusion(desktop_page, study):
    page = desktop_page
    url = f"/studio/{study.slug}/raters/"
    page.goto(f"/admin/login/?next={url}")
    page.fill("#id_username", "lead")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"**{url}")

    progress = page.locator("#progress-heading + p").inner_text()
    assert "Judgments: 2 of 12" in progress
    hasty = page.locator("tr", has_text="r-hasty")
    assert "failed 2 of 2 quality checks" in hasty.inner_text()
    assert "PROLIFIC-B" in hasty.inner_text()  # the admin pays by panel id
    assert_accessible(page)

    hasty.get_by_label("Reason for r-hasty").fill("checks were ambiguous")
    hasty.get_by_role("button", name="Include r-hasty").click()
    page.wait_for_url(f"**{url}")
    assert "included by lead" in page.locator("tr", has_text="r-hasty").inner_text()
    assert Rater.objects.get(pseudonym="r-hasty").excluded is False

    page.locator("tr", has_text="r-careful").get_by_role("button", name="Exclude r-careful").click()
    page.wait_for_url(f"**{url}")
    assert Rater.objects.get(pseudonym="r-careful").excluded is True


def test_a_rater_cannot_open_the_quality_page(desktop_page, study):
    page = desktop_page
    page.goto(f"/r/{study.invite_token}/?PROLIFIC_PID=P9&STUDY_ID=S&SESSION_ID=X")
    response = page.goto(f"/studio/{study.slug}/raters/")
    assert "/admin/login/" in page.url  # sent to the login page, never shown the table
    assert response is not None and "r-hasty" not in page.content()
