"""Everyday mistakes and faults in Chromium: a missing choice, a dropped network, a server
error (visible message, retry, the answer kept), the reason counter, and the
Content-Security-Policy holding on rater pages, the leaderboard and Django's admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.models import Judgment, Rater
from tests.conftest import DESKTOP, PHONE, assert_accessible
from tests.factories.annotation import build_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(params=["desktop", "phone"])
def tab(request, browser, live_server):
    context = browser.new_context(
        **(PHONE if request.param == "phone" else DESKTOP), base_url=live_server.url
    )
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    pg.csp_errors = []
    pg.on(
        "console",
        lambda msg: "Content Security Policy" in msg.text and pg.csp_errors.append(msg.text),
    )
    yield pg
    context.close()


def _start(tab, study):
    tab.goto(f"/r/{study.invite_token}/")
    tab.get_by_label("I have read the information above").check()
    tab.get_by_role("button", name="I agree, continue").click()
    tab.get_by_role("link", name="Start judging").click()
    expect(tab.get_by_role("heading", name="Item 1 of 3")).to_be_visible()


def test_a_missing_choice_focuses_the_scale_and_says_so(tab, transactional_db):
    study = build_study(items_per_rater=3, quality_check_rate=0)
    _start(tab, study)
    tab.get_by_role("button", name="Submit and continue").click()
    # The message under the scale (rater.js also copies it into the hidden live region).
    expect(tab.locator("#choice-error")).to_have_text("Please choose one point on the scale.")
    expect(tab.locator("#choice-error")).to_be_visible()
    expect(tab.locator("#choice-1")).to_be_focused()
    expect(tab.locator("#rater-status")).to_have_text("Please choose one point on the scale.")
    assert_accessible(tab)
    assert not Judgment.objects.exists()
    assert tab.csp_errors == []


def test_a_dropped_network_shows_a_message_keeps_the_answer_and_retries(tab, transactional_db):
    study = build_study(items_per_rater=3, quality_check_rate=0)
    _start(tab, study)
    tab.route("**/submit/", lambda route: route.abort())
    tab.locator("label[for=choice-4]").click()
    tab.get_by_label("Why?").fill("kept across the failure")
    tab.get_by_role("button", name="Submit and continue").click()
    alert = tab.locator("#rater-alert")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("Could not reach the server")
    expect(tab.locator("#choice-4")).to_be_checked()
    expect(tab.get_by_label("Why?")).to_have_value("kept across the failure")
    assert_accessible(tab)
    tab.unroute("**/submit/")
    tab.get_by_role("button", name="Try again").click()
    expect(tab.get_by_role("heading", name="Item 2 of 3")).to_be_visible()
    expect(alert).to_be_hidden()
    judgment = Judgment.objects.get()
    assert judgment.rationale == "kept across the failure" and judgment.metadata["choice"] == 4


def test_a_server_error_is_shown_and_the_answer_survives_a_reload(tab, transactional_db):
    study = build_study(items_per_rater=3, quality_check_rate=0)
    _start(tab, study)
    tab.route("**/submit/", lambda route: route.fulfill(status=500, body="boom"))
    tab.locator("label[for=choice-2]").click()
    tab.get_by_label("Why?").fill("still here after reload")
    tab.get_by_role("button", name="Submit and continue").click()
    expect(tab.locator("#rater-alert")).to_contain_text("Something went wrong on our side")
    tab.unroute("**/submit/")
    tab.reload()  # the same item comes back (no-store) with the draft restored
    expect(tab.get_by_role("heading", name="Item 1 of 3")).to_be_visible()
    expect(tab.locator("#choice-2")).to_be_checked()
    expect(tab.get_by_label("Why?")).to_have_value("still here after reload")
    tab.get_by_role("button", name="Submit and continue").click()
    expect(tab.get_by_role("heading", name="Item 2 of 3")).to_be_visible()
    assert Judgment.objects.get().rationale == "still here after reload"
    assert Rater.objects.count() == 1


def test_a_503_while_the_database_is_away_is_sent_again_by_itself(tab, transactional_db):
    study = build_study(items_per_rater=3, quality_check_rate=0)
    _start(tab, study)
    away = []

    def once_away(route):  # the first submit lands in the outage, the next one does not
        if away:
            route.continue_()
            return
        away.append(route.request.url)
        route.fulfill(status=503, headers={"Retry-After": "1"}, body="away")

    tab.route("**/submit/", once_away)
    tab.locator("label[for=choice-5]").click()
    tab.get_by_label("Why?").fill("sent again by itself")
    tab.get_by_role("button", name="Submit and continue").click()
    expect(tab.locator("#rater-alert")).to_contain_text("briefly unavailable")
    # No click: the page sends the answer again after the wait the server asked for.
    expect(tab.get_by_role("heading", name="Item 2 of 3")).to_be_visible()
    expect(tab.locator("#rater-alert")).to_be_hidden()
    assert len(away) == 1
    judgment = Judgment.objects.get()
    assert judgment.rationale == "sent again by itself" and judgment.metadata["choice"] == 5


def test_the_reason_box_counts_characters(tab, transactional_db):
    study = build_study(items_per_rater=3, quality_check_rate=0, rationale_max_chars=40)
    _start(tab, study)
    box = tab.get_by_label("Why?")
    assert box.get_attribute("maxlength") == "40"
    box.fill("twelve chars")
    expect(tab.locator("#rationale-count")).to_have_text("12 of 40 characters")
    box.fill("x" * 60)  # the browser stops at the limit
    expect(tab.locator("#rationale-count")).to_have_text("40 of 40 characters (limit reached)")


def test_no_csp_violation_on_the_leaderboard_and_the_admin(tab, transactional_db):
    get_user_model().objects.create_superuser("boss", "b@example.org", "pw-for-csp")
    study = build_study()
    tab.goto("/admin/login/")
    tab.get_by_label("Username").fill("boss")
    tab.get_by_label("Password").fill("pw-for-csp")
    tab.get_by_role("button", name="Log in").click()
    expect(tab.get_by_role("heading", name="Site administration")).to_be_visible()
    tab.goto(f"/admin/completions/study/{study.pk}/change/")
    expect(tab.locator("#study_form")).to_be_visible()
    tab.goto(f"/studio/{study.slug}/leaderboard/")
    expect(tab.locator("h1")).to_be_visible()
    tab.goto(f"/studio/{study.slug}/raters/")
    expect(tab.locator("h1")).to_be_visible()
    assert tab.csp_errors == []
