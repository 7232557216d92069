"""Care in Chromium: a rater qualifies (and another fails), meets a content note, skips an
item, is prompted to take a break, finds support and stops; a writer skips and stops; axe-core
on every page at desktop and phone size, and the rater's skip and stop without JavaScript."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from annotation.models import Rater
from annotation.services import SCALE
from care.models import CareSettings, RaterCare, Skip
from care.selectors import care_forget
from tests.conftest import assert_accessible
from tests.factories import CareSettingsFactory, ContentNoteFactory, QualificationItemFactory
from tests.factories.annotation import build_study, forbidden_strings
from tests.factories.writing import build_writing_study
from writing.services import writing_settings

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TURNS = [{"speaker": "seeker", "text": "My dog died last week and the house feels empty."}]
BETTER = "I'm so sorry. Losing a companion leaves a real gap; what do you miss most about them?"
WORSE = "Dogs die. You can get another one."


def _study(**care):
    study = build_study(n_contexts=2, quality_check_rate=0, items_per_rater=4)
    CareSettingsFactory(study=study, qualification_enabled=True, **care)
    for phase, position in (("training", 0), ("qualification", 1), ("qualification", 2)):
        QualificationItemFactory(
            study=study,
            phase=phase,
            position=position,
            turns=TURNS,
            text_a=BETTER,
            text_b=WORSE,
            expected="a",
            explanation="it acknowledges the loss and asks about it.",
        )
    ContentNoteFactory(context=study.contexts.first(), text="Mentions losing a job.")
    care_forget(study=study)
    return study


def _consent(page, study):
    page.goto(f"/r/{study.invite_token}/?PROLIFIC_PID=PCARE&STUDY_ID=S&SESSION_ID=X")
    page.get_by_label("I have read the information above").check()
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("link", name="Start judging").click()


def _choose(page, choice: int, button: str):
    page.get_by_text(SCALE[choice], exact=True).click()
    page.get_by_role("button", name=button).click()


def test_a_rater_qualifies_meets_a_note_skips_takes_a_break_and_stops(page):
    study = _study(stop_outcome="code")
    _consent(page, study)
    expect(page.get_by_role("heading", name="Practice item 1 of 3")).to_be_visible()
    assert_accessible(page)
    _choose(page, 5, "Check my answer")  # the weaker reply: the feedback says why
    expect(page.get_by_role("heading", name="Most raters chose differently")).to_be_visible()
    expect(page.get_by_text("Most raters prefer A here because it acknowledges")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Next").click()
    for number in (2, 3):
        expect(
            page.get_by_role("heading", name=f"Qualification item {number} of 3")
        ).to_be_visible()
        # A new item starts with no answer ticked: not the one given on the item before (the
        # pages share one URL, and the answer kept across a reload was once keyed by it).
        page.wait_for_load_state("load")
        expect(page.locator("input[name=choice]:checked")).to_have_count(0)
        _choose(page, 1, "Submit and continue")
    expect(page.get_by_role("heading", name="You can start the study")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Start judging").click()
    expect(page.get_by_role("heading", name="Item 1 of 4")).to_be_visible()

    # The content note sits above the dialogue of the flagged context; skip until it shows.
    rater = Rater.objects.get(study=study)
    for _ in range(3):
        if page.get_by_role("heading", name="Content note").is_visible():
            break
        page.get_by_role("link", name="Skip this item").first.click()
        page.get_by_role("button", name="Skip it").click()
    expect(page.get_by_text("Mentions losing a job.")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Skip this item").first.click()
    expect(page.get_by_role("heading", name="Skip this item?")).to_be_visible()
    assert_accessible(page)
    page.get_by_label(re.compile("Why are you skipping it")).fill("too close to home")
    page.get_by_role("button", name="Skip it").click()
    expect(page.get_by_text("Item skipped. It will not count against you.")).to_be_visible()
    assert Skip.objects.filter(rater=rater, reason="too close to home").exists()

    # Twenty-five minutes on task (the default prompt comes after twenty).
    page.context.add_cookies(
        [
            {
                "name": "heart_care_since",
                "value": str(int(time.time()) - 25 * 60),
                "domain": "localhost" if "localhost" in page.url else "127.0.0.1",
                "path": "/",
            }
        ]
    )
    page.reload()
    expect(page.get_by_role("heading", name="Time for a break?")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Take a break").first.click()
    expect(page.get_by_role("heading", name="Take a break")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Continue when ready").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Item \d of 4"))).to_be_visible()
    expect(page.get_by_role("heading", name="Time for a break?")).to_have_count(0)

    page.get_by_role("link", name="Support and help").click()
    expect(page.get_by_role("link", name=re.compile("Find a helpline"))).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Stop now").click()
    expect(page.get_by_role("heading", name="Stop now?")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("button", name="Stop now").click()
    expect(page.get_by_role("heading", name="Thank you, you have stopped")).to_be_visible()
    settings = CareSettings.objects.get(study=study)
    expect(page.locator("#completion-code")).to_have_text(settings.stop_code)
    assert_accessible(page)
    html = page.content()
    assert not [name for name in forbidden_strings(study) if name in html]
    assert RaterCare.objects.get(rater=rater).seconds_worked is not None


def test_a_rater_who_fails_the_qualification_gets_the_screen_out_code(page):
    study = _study(fail_outcome="code")
    _consent(page, study)
    _choose(page, 1, "Check my answer")
    expect(page.get_by_role("heading", name="You agreed with most raters")).to_be_visible()
    page.get_by_role("link", name="Next").click()
    for _ in range(2):
        _choose(page, 5, "Submit and continue")
    expect(page.get_by_role("heading", name="Thank you for your time")).to_be_visible()
    expect(page.locator("#completion-code")).to_have_text(
        CareSettings.objects.get(study=study).screenout_code
    )
    assert_accessible(page)
    page.goto(f"/r/{study.invite_token}/item/")  # real items stay out of reach
    expect(page.get_by_role("heading", name="Thank you for your time")).to_be_visible()


def test_a_rater_skips_and_stops_without_javascript(browser, live_server):
    study = build_study(n_contexts=2, quality_check_rate=0)
    context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    page = context.new_page()
    page.goto(f"/r/{study.invite_token}/consent/")
    page.get_by_label("I have read the information above").check()
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("link", name="Start judging").click()
    page.get_by_role("link", name="Skip this item").first.click()
    page.get_by_role("button", name="Skip it").click()
    expect(page.get_by_text("Item skipped.")).to_be_visible()
    page.get_by_role("link", name="Stop now").click()
    page.get_by_role("button", name="Stop now").click()
    expect(page.get_by_role("heading", name="Thank you, you have stopped")).to_be_visible()
    assert Skip.objects.count() == 1
    context.close()


def test_a_writer_meets_a_note_skips_a_conversation_and_stops(page):
    study = build_writing_study(n_contexts=2)
    for context in study.contexts.all():
        ContentNoteFactory(context=context, text="Mentions a failed exam.")
    care_forget(study=study)
    invite = writing_settings(study).invite_token
    page.goto(f"/w/{invite}/")
    page.get_by_label("I have read the above").check()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("link", name="I understand, continue").click()
    page.get_by_role("link", name=re.compile(r"^Write (a|the next) reply")).click()
    expect(page.get_by_role("heading", name="Content note")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Skip this conversation").first.click()
    expect(page.get_by_role("heading", name="Skip this conversation?")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("button", name="Skip it").click()
    expect(page.get_by_text("Conversation skipped.")).to_be_visible()
    page.get_by_role("link", name="Support and help").click()
    expect(page.get_by_role("heading", name="Support and help")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Stop now").click()
    page.get_by_role("button", name="Stop now").click()
    expect(page.get_by_role("heading", name="Thank you, you have stopped")).to_be_visible()
    assert_accessible(page)
    assert Skip.objects.get().writer is not None
