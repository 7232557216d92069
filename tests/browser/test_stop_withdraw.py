"""Stopping and withdrawing in Chromium, at desktop and phone size with axe-core on every
page: the stop page says the answers given are kept, an answer sent from a second tab after
the stop is refused with a true message, and a withdrawal deletes the answers; a rater who
only skips ends at the skip limit with no completion code."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Judgment, Rater
from annotation.services import SCALE
from annotation.views import STOPPED_NOTICE
from care.selectors import care_forget
from tests.conftest import assert_accessible
from tests.factories import CareSettingsFactory
from tests.factories.annotation import build_study, forbidden_strings

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _study(**care):
    study = build_study(n_contexts=2, quality_check_rate=0, items_per_rater=3)
    CareSettingsFactory(study=study, **care)
    care_forget(study=study)
    return study


def _consent(page, study, pid="PSTOP"):
    page.goto(f"/r/{study.invite_token}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
    page.get_by_label("I have read the information above").check()
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("link", name="Start judging").click()


def test_a_rater_stops_keeps_then_withdraws_and_a_late_answer_is_refused(page):
    study = _study(allow_withdrawal=True, stop_outcome="code")
    _consent(page, study)
    expect(page.get_by_role("heading", name="Item 1 of 3")).to_be_visible()
    page.get_by_text(SCALE[2], exact=True).click()
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.get_by_role("heading", name="Item 2 of 3")).to_be_visible()
    # A second tab keeps item 2 open while the first one stops.
    other = page.context.new_page()
    other.goto(page.url)
    expect(other.get_by_role("heading", name="Item 2 of 3")).to_be_visible()

    page.get_by_role("link", name="Stop now").first.click()
    expect(page.get_by_role("heading", name="Stop now?")).to_be_visible()
    expect(page.locator("#answers-kept")).to_contain_text("The 1 answer you have given is kept")
    assert_accessible(page)
    page.get_by_role("button", name="Stop now and keep my answers").click()
    expect(page.get_by_role("heading", name="Thank you, you have stopped")).to_be_visible()
    expect(page.locator("#answers-kept")).to_contain_text("The 1 answer you gave is kept")
    assert_accessible(page)

    other.get_by_text(SCALE[4], exact=True).click()
    other.get_by_role("button", name="Submit and continue").click()
    expect(other.get_by_text(STOPPED_NOTICE)).to_be_visible()
    expect(other.get_by_role("heading", name="Thank you, you have stopped")).to_be_visible()
    assert_accessible(other)
    rater = Rater.objects.get(study=study)
    assert Judgment.objects.filter(rater=rater).count() == 1

    page.get_by_role("button", name="Withdraw my answers").click()
    expect(page.locator("#answers-kept")).to_contain_text("You withdrew on")
    assert_accessible(page)
    assert not Judgment.objects.filter(rater=rater).exists()
    rater.refresh_from_db()
    assert rater.withdrawn_at is not None
    html = page.content()
    assert not [name for name in forbidden_strings(study) if name in html]


def test_a_rater_who_only_skips_ends_at_the_limit_with_no_code(page):
    study = _study(stop_outcome="code")
    _consent(page, study, pid="PSKIP")
    for _ in range(3):  # the study's items per rater: the skip limit
        page.get_by_role("link", name="Skip this item").first.click()
        expect(page.get_by_text("You may skip up to 3 items in this study")).to_be_visible()
        page.get_by_role("button", name="Skip it").click()
    expect(page.locator("#skip-limit")).to_contain_text("You skipped 3 items")
    expect(page.get_by_text("no completion code")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_count(0)
    assert_accessible(page)
