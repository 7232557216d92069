"""The whole rater journey in Chromium: Prolific link, consent, mouse and keyboard judging,
a quality check, the completion code; axe-core on every page, on desktop and phone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, Judgment, Rater
from tests.conftest import assert_accessible
from tests.factories import QualityCheckItemFactory
from tests.factories.annotation import build_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ITEMS = 4  # real items; with a 20 % check rate one quality check joins: 5 in all


def _study():
    study = build_study(
        n_contexts=2,
        items_per_rater=ITEMS,
        quality_check_rate=0.2,
        axis_marks=True,
        prolific_redirect_url="https://app.prolific.com/x",
    )
    QualityCheckItemFactory(
        study=study,
        kind="attention",
        turns=[
            {"speaker": "supporter", "text": "Hello, what's on your mind?"},
            {"speaker": "seeker", "text": "I can't sleep before my exam tomorrow."},
        ],
        text_a="Exams can make everything feel high-stakes. What is worrying you most?",
        text_b="To show you are reading carefully, choose 'B is significantly better than A'.",
        expected="b",
        expected_choice=5,
        note="attention:browser",
    )
    return study


def _current(rater) -> Assignment:
    return Assignment.objects.get(rater=rater, status="leased")


def test_a_rater_judges_with_mouse_and_keyboard_and_gets_the_code(
    page, artifacts_dir, transactional_db
):
    study = _study()
    page.goto(f"/r/{study.invite_token}/?PROLIFIC_PID=PWTEST1&STUDY_ID=S9&SESSION_ID=X9")
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("I have read the information above").check()
    page.get_by_role("button", name="I agree, continue").click()
    expect(page.get_by_role("heading", name="How to judge")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Start judging").click()

    rater = Rater.objects.get(study=study, external_id="PWTEST1")
    pressed: dict[str, int] = {}
    for number in range(1, ITEMS + 2):
        heading = page.get_by_role("heading", name=f"Item {number} of {ITEMS + 1}")
        expect(heading).to_be_visible()
        assignment = _current(rater)
        if number == 1:
            page.screenshot(
                path=str(artifacts_dir / f"rater-judging-{page.viewport_name}.png"), full_page=True
            )
            assert_accessible(page)
        if number > 1:
            expect(heading).to_be_focused()  # focus moved to the swapped-in item
        choice = 5 if assignment.quality_item_id else (number % 5) + 1
        if number <= 2:  # the mouse
            page.get_by_text(_scale_label(choice), exact=True).click()
            page.get_by_label("Why?").fill(f"reason {number}")
            page.get_by_role("button", name="Submit and continue").click()
        else:  # the keyboard: the focus sits on the item heading
            page.keyboard.press(str(choice))
            expect(page.locator("input[name=choice]").nth(choice - 1)).to_be_checked()
            page.keyboard.press("Enter")
        pressed[assignment.token] = choice
        if number == 2:
            expect(page.get_by_role("heading", name="Item 3 of 5")).to_be_visible()
            assert_accessible(page)  # after an htmx swap

    expect(page.get_by_role("heading", name="Thank you, you are done")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(study.completion_code)
    link = page.get_by_role("link", name=re.compile("Return to Prolific"))
    assert link.get_attribute("href") == f"https://app.prolific.com/x?cc={study.completion_code}"
    assert_accessible(page)

    judgments = list(Judgment.objects.filter(rater=rater).select_related("assignment"))
    assert len(judgments) == ITEMS + 1
    assert sum(j.quality_check for j in judgments) == 1
    for judgment in judgments:
        assignment = judgment.assignment
        assert judgment.shown_left == assignment.shown_left
        assert judgment.metadata["choice"] == pressed[assignment.token]
        assert judgment.duration_ms is not None and judgment.duration_ms > 0
        if judgment.quality_check:
            assert judgment.passed_check is True
    assert {j.rationale for j in judgments} >= {"reason 1", "reason 2"}


def _scale_label(choice: int) -> str:
    from annotation.services import SCALE

    return SCALE[choice]
