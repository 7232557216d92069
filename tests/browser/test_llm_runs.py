"""A study admin launches a judge run on the studio page and watches its progress (htmx)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from annotation.models import Judgment
from completions.access import STUDY_ADMINS
from tests.conftest import assert_accessible
from tests.factories.llm import endpoint, study_with_pairs

pytestmark = [pytest.mark.browser]


@pytest.fixture
def study_admin(transactional_db, postgres):
    # The run executes on a background thread of the live server (the embedded default's
    # way), beside the page's polling requests: PostgreSQL serves both.
    user = User.objects.create_user("lead", password="correct horse battery", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    return user


def test_a_study_admin_launches_a_judge_run_and_watches_it_finish(
    page, study_admin, fake_llm, settings
):
    settings.LLM_EAGER_THREAD = True
    study = study_with_pairs(2)
    endpoint(
        fake_llm, "demo-judge", model="demo-judge@ttft=150", family="gemini", max_concurrency=2
    )
    url = f"/studio/{study.slug}/llm/"
    page.goto(f"/admin/login/?next={url}")
    page.fill("#id_username", "lead")
    page.fill("#id_password", "correct horse battery")
    page.click("input[type=submit]")
    page.wait_for_url(f"**{url}")
    assert page.locator("nav a[aria-current=page]").inner_text() == "LLM runs"
    assert_accessible(page)

    page.select_option("#id_kind", "judge")
    page.get_by_label("demo-judge").check()
    page.get_by_role("button", name="Show the plan").click()
    page.wait_for_url("**/llm/runs/*/")
    start = page.get_by_role("button", name="Start run (24 calls")
    assert start.is_visible()
    assert fake_llm.state.total == 0  # the plan sends nothing
    assert_accessible(page)

    start.click()
    page.wait_for_selector("[data-run-status]")
    # htmx polls the progress fragment until the run is over, without a reload.
    page.wait_for_function(
        "() => document.querySelector('[data-run-status]').textContent.trim() === 'Finished'",
        timeout=60_000,
    )
    assert page.locator('[data-count="done"]').inner_text() == "24"
    assert Judgment.objects.filter(study=study, judge="demo-judge").count() == 24
    assert page.get_by_role("link", name="Leaderboard with LLM judges").is_visible()
    assert_accessible(page)


def test_a_flooded_run_page_stays_small_readable_and_accessible(page, study_admin, fake_llm):
    from llm.executor import run_execute
    from llm.services import run_plan, run_start

    study = study_with_pairs(3)
    flood = endpoint(fake_llm, "flood-judge", model="judge@flood=20", family="mistral")
    run = run_plan(study=study, kind="judge", endpoints=[flood])
    run_start(run=run, dispatch=False)
    run_execute(run.pk)
    url = f"/studio/{study.slug}/llm/runs/{run.pk}/"
    page.goto(f"/admin/login/?next={url}")
    page.fill("#id_username", "lead")
    page.fill("#id_password", "correct horse battery")
    page.click("input[type=submit]")
    page.wait_for_url(f"**{url}")
    assert page.get_by_text("Page 1 of 2 (36 units)").is_visible()
    page.get_by_text("Raw reply", exact=False).first.click()  # open the first one
    assert page.get_by_role("link", name="Download the stored reply").first.is_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Next").click()
    page.wait_for_url("**?page=2*")
    assert page.get_by_text("Page 2 of 2").is_visible()
    # The endpoint form: a password field for the key, never filled in by the page.
    page.goto(f"/studio/{study.slug}/llm/")
    page.get_by_text("Add or update an endpoint").click()
    key = page.get_by_label("API key")
    assert key.get_attribute("type") == "password" and key.input_value() == ""
    assert_accessible(page)
