"""The studio's Prolific page in a browser: token, settings, publish with a dry run first, read
submissions back, pay with a dry run first, against the fake Prolific server."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from completions.access import STUDY_ADMINS
from recruitment.models import ProlificSettings
from tests.conftest import assert_accessible
from tests.recruitment.conftest import TOKEN, fake_prolific, fake_prolific_server, people

pytestmark = [pytest.mark.browser]
PASSWORD = "correct horse battery"
__all__ = ["fake_prolific", "fake_prolific_server", "people"]


@pytest.fixture
def study(transactional_db, postgres, people):
    admin = User.objects.create_user("lead", password=PASSWORD, is_staff=True)
    admin.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    return people


def test_a_study_admin_publishes_and_pays_on_prolific_from_the_page(
    desktop_page, study, fake_prolific
):
    page = desktop_page
    url = f"/studio/{study.slug}/prolific/"
    page.goto(f"/admin/login/?next={url}")
    page.fill("#id_username", "lead")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"**{url}")
    assert_accessible(page)

    page.get_by_label("Prolific API token").fill(TOKEN)
    page.get_by_role("button", name="Save token").click()
    page.wait_for_url(f"**{url}")
    assert "stored encrypted …6789" in page.content()
    page.get_by_label("Hourly rate").fill("12.00")
    page.get_by_label("Estimated minutes").fill("15")
    page.get_by_role("button", name="Save Prolific settings").click()
    page.wait_for_url(f"**{url}")
    assert ProlificSettings.objects.get(study=study).reward_cents == 300

    page.get_by_role("button", name="Publish: dry run").click()
    assert "Dry run of publish: nothing was sent" in page.locator("#dry-run").inner_text()
    assert fake_prolific.calls() == []
    page.get_by_role("button", name="Publish on Prolific").click()
    page.wait_for_url(f"**{url}")
    study_id = ProlificSettings.objects.get(study=study).prolific_study_id
    assert study_id and f"Prolific study: {study_id}" in page.locator("main").inner_text()

    for name, code in (
        ("completed", study.completion_code),
        ("screened", study.care.screenout_code),
    ):
        submission = fake_prolific.add_submission(study_id, f"PID-{name}")
        fake_prolific.move(submission["id"], "complete", code)
    page.get_by_role("button", name="Read submissions back").click()
    page.wait_for_url(f"**{url}")
    assert "Sync done" in page.locator("main").inner_text()

    page.get_by_role("button", name="Pay: dry run").click()
    report = page.locator("#dry-run").inner_text()
    assert "PID-completed: APPROVE" in report and "PID-screened: SCREEN_OUT" in report
    page.get_by_role("button", name="Approve, screen out, reject and pay bonuses").click()
    page.wait_for_url(f"**{url}")
    assert "Pay done" in page.locator("main").inner_text()
    statuses = {
        s["participant_id"]: s["status"] for s in fake_prolific.state()["submissions"].values()
    }
    assert statuses == {"PID-completed": "APPROVED", "PID-screened": "SCREENED-OUT"}
