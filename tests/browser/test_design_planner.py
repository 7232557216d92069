"""The pairs page's planner and stopping rule in Chromium, with JavaScript off as well."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from completions.access import STUDY_ADMINS
from tests.conftest import DESKTOP, assert_accessible
from tests.factories import DesignStatusFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct horse battery"


@pytest.fixture
def admin_user(transactional_db):
    user = User.objects.create_user("lead", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    return user


def _sign_in(page) -> None:
    page.goto("/")
    page.fill("#id_username", "lead")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.get_by_role("heading", name="Your studies")).to_be_visible()


@pytest.mark.parametrize("javascript", [True, False])
def test_the_admin_plans_judgments_for_a_half_width(browser, live_server, admin_user, javascript):
    from django.utils import timezone

    from tests.factories.annotation import build_study

    study = build_study(slug="plan-study", n_contexts=4)
    DesignStatusFactory(
        study=study,
        computed_at=timezone.now(),
        n_judgments=30,
        judgments_open=30,
        pairs=[
            {"a": "zorblax-gpt-9", "b": "quillon-claude-7", "difference": 80.0,
             "half_width": 40.0, "separated": True, "judgments_needed": 0, "judged": 12},
            {"a": "quillon-claude-7", "b": "human-writers-yarrow", "difference": 20.0,
             "half_width": 45.0, "separated": False, "judgments_needed": 180, "judged": 10},
        ],
    )  # fmt: skip
    context = browser.new_context(
        **DESKTOP, base_url=live_server.url, java_script_enabled=javascript
    )
    page = context.new_page()
    _sign_in(page)
    page.goto("/studio/plan-study/pairs/")
    # 4 contexts x 3 pairs x 5 judgments, three equal systems.
    expect(page.locator("#planner-summary")).to_contain_text("60 judgments")
    expect(page.locator("#stopping-summary")).to_contain_text("1 of 2")
    expect(page.locator("#stopping-summary")).to_contain_text("180 more judgments")
    page.get_by_label("Wanted mean half-width (Elo)").fill("0.5")
    page.get_by_role("button", name="Plan").click()
    expect(page.get_by_role("alert")).to_contain_text("greater than or equal to 1")
    shown = page.locator("#planner-summary strong").inner_text()  # "±12.3 Elo"
    width = float(shown.replace("±", "").replace("Elo", "").strip())
    page.get_by_label("Wanted mean half-width (Elo)").fill(f"{width / 2:.4f}")
    page.get_by_role("button", name="Plan").click()
    answer = page.locator("#planner-answer")
    expect(answer).to_contain_text("judgments")
    needed = int(answer.locator("strong").inner_text().split()[0])
    assert 235 <= needed <= 245  # half the width: four times the 60 judgments
    if javascript:  # axe runs in the page: with JavaScript off its promise never settles
        assert_accessible(page)
    context.close()
