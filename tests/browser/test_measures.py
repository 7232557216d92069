"""The measured study on its pages, at phone and desktop size: the judges against the study's
humans and the study's grade on the leaderboard, the rater model on the raters page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from completions.access import STUDY_ADMINS
from ranking import services
from tests.conftest import assert_accessible
from tests.factories.cohorts import build_cohort_study

pytestmark = [pytest.mark.browser]


@pytest.fixture
def study_admin(transactional_db, postgres):
    user = User.objects.create_user("lead", password="correct horse battery", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    return user


@pytest.fixture
def study(transactional_db):
    study = build_cohort_study(slug="measured", items=40)
    services.snapshot_refit_study(study_id=study.pk, trigger="manual")
    return study


def _login(pg, next_url: str) -> None:
    pg.goto(f"/admin/login/?next={next_url}")
    pg.fill("#id_username", "lead")
    pg.fill("#id_password", "correct horse battery")
    pg.click("input[type=submit]")
    pg.wait_for_url(f"**{next_url}")


def test_the_leaderboard_shows_the_judge_audit_and_the_study_grade(
    page, study_admin, study, artifacts_dir
):
    _login(page, "/studio/measured/leaderboard/")
    audit = page.locator("#judge-audit + p + .table-scroll table")
    audit.scroll_into_view_if_needed()
    assert audit.is_visible()
    judges = audit.locator("tbody th").all_inner_texts()
    assert "judge-gpt" in judges and "crowd" in judges and "clinician" in judges
    grade = page.locator("#study-quality + .table-scroll table")
    assert grade.is_visible()
    assert "Human raters" in grade.inner_text()
    assert "cohort crowd against cohort clinician" in page.locator("#results").inner_text()
    need = page.locator("#judgments-needed").inner_text()
    assert "Target: 80 %" in need
    # A table wider than a phone scrolls inside its own region, never the page.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.screenshot(
        path=artifacts_dir / f"measures-leaderboard-{page.viewport_name}.png", full_page=True
    )
    assert_accessible(page)


def test_the_raters_page_shows_the_rater_model_per_rater_and_cohort(
    page, study_admin, study, artifacts_dir
):
    _login(page, "/studio/measured/raters/")
    section = page.locator("#rater-model")
    section.scroll_into_view_if_needed()
    per_rater = page.locator("table", has_text="Rater model per rater")
    assert per_rater.locator("tbody tr").count() == study.raters.count()
    flagged = per_rater.locator("tbody tr", has_text="r-flagged")
    assert "excluded" in flagged.inner_text()
    per_cohort = page.locator("table", has_text="Rater model per cohort")
    assert {"clinician", "crowd"} <= set(per_cohort.locator("tbody th").all_inner_texts())
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.screenshot(
        path=artifacts_dir / f"measures-raters-{page.viewport_name}.png", full_page=True
    )
    assert_accessible(page)
