"""Cohorts in Chromium: a rater who comes by the clinician link is recorded as a clinician,
a forged link is refused with a readable page, and the studio shows one board per cohort."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from annotation.models import Judgment, Pair, Rater
from completions import cohorts
from tests.conftest import assert_accessible
from tests.factories import RaterFactory
from tests.factories.annotation import build_study
from writing.services import writing_settings

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ITEMS = 3


def _crowd_judgments(study) -> None:
    """Two crowd raters who judged every pair (always the first reply)."""
    for n in range(2):
        rater = RaterFactory(study=study, pseudonym=f"r-crowd{n}", consented_at=timezone.now())
        Judgment.objects.bulk_create(
            Judgment(study=study, pair=pair, judge_kind="human", rater=rater,
                     judge=rater.pseudonym, winner="a", strength=1, strength_max=2,
                     shown_left="a", submitted_at=timezone.now())
            for pair in Pair.objects.filter(study=study)
        )  # fmt: skip


def test_a_clinician_link_rater_is_a_clinician_and_the_studio_shows_cohort_boards(
    page, artifacts_dir, transactional_db
):
    study = build_study(n_contexts=2, items_per_rater=ITEMS, quality_check_rate=0)
    signed = cohorts.cohort_link_value(study, "clinician")

    page.goto(f"/r/{study.invite_token}/?cohort=clinician:forged")
    expect(page.get_by_role("heading", name="This link is not valid")).to_be_visible()
    assert_accessible(page)
    assert not Rater.objects.exists()

    page.goto(f"/r/{study.invite_token}/?cohort={signed}")
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("I have read the information above").check()
    page.get_by_role("button", name="I agree, continue").click()
    expect(page.get_by_role("heading", name="How to judge")).to_be_visible()
    page.get_by_role("link", name="Start judging").click()
    for number in range(1, ITEMS + 1):
        expect(page.get_by_role("heading", name=f"Item {number} of {ITEMS}")).to_be_visible()
        page.get_by_text("B is slightly better than A", exact=True).click()
        page.get_by_role("button", name="Submit and continue").click()
    expect(page.get_by_role("heading", name="Thank you, you are done")).to_be_visible()
    rater = Rater.objects.get(study=study)
    assert rater.cohort == "clinician"
    assert Judgment.objects.filter(rater=rater).count() == ITEMS

    # A browser answers faster than the 3 s floor of the quality rules, which flag the rater;
    # the admin includes them again, as the Raters page lets them.
    Rater.objects.filter(pk=rater.pk).update(exclusion_override=False)
    _crowd_judgments(study)
    from ranking.services import snapshot_refit_study

    snapshot_refit_study(study_id=study.pk, trigger="nightly")  # the page reads what it stored
    get_user_model().objects.create_superuser("boss", "boss@example.org", "correct horse 9")
    page.goto(f"/admin/login/?next=/studio/{study.slug}/leaderboard/cohorts/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", "correct horse 9")
    page.click("input[type=submit]")
    expect(page.get_by_role("heading", name="Cohort: clinician")).to_be_visible()
    expect(page.get_by_role("heading", name="Cohort: crowd")).to_be_visible()
    clinician = page.locator("section[data-cohort=clinician]")
    expect(clinician).to_contain_text(f"{ITEMS} judgments from 1 rater")
    expect(page.locator("table.between-cohorts")).to_contain_text("crowd vs clinician")
    page.screenshot(path=str(artifacts_dir / f"cohorts-{page.viewport_name}.png"), full_page=True)
    assert_accessible(page)
    page.select_option("#id_cohort", "clinician")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("section[data-cohort=crowd]")).to_have_count(0)
    expect(clinician).to_be_visible()

    page.goto(f"/studio/{study.slug}/raters/")
    row = page.locator("table.cohorts tr", has=page.get_by_role("rowheader", name="clinician"))
    expect(row.locator("td").first).to_have_text("1")
    assert_accessible(page)


def test_a_forged_writer_link_is_refused_readably(page, transactional_db):
    study = build_study(n_contexts=1)
    ws = writing_settings(study)
    ws.enabled = True
    ws.save(update_fields=["enabled"])
    invite = ws.invite_token
    page.goto(f"/w/{invite}/?cohort=clinician:forged")
    expect(page.get_by_role("heading", name="This link is not valid")).to_be_visible()
    assert_accessible(page)
