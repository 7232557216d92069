"""The writer journey in Chromium: link, consent, writing with live counts, autosave across a
reload, a refused text, submits; a second writer never gets a full or already-written context;
axe-core on every page, on desktop and phone."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from completions.models import DialogueContext
from tests.conftest import assert_accessible
from tests.factories import WritingFactory
from tests.factories.writing import GOOD_TEXT, build_writing_study
from writing.models import Writing
from writing.services import writer_enter, writing_settings

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REPLY = "I am sorry the test went that way. It makes sense to feel low after trying so hard."


def _consent(page, invite: str) -> None:
    page.goto(f"/w/{invite}/")
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("I have read the above").focus()
    page.keyboard.press("Space")
    page.get_by_role("button", name="Continue").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="How to write")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="I understand, continue").click()
    expect(page.get_by_role("heading", name="Your progress")).to_be_visible()
    assert_accessible(page)


def _start_writing(page) -> None:
    page.get_by_role("link", name=re.compile(r"^Write (a|the next) reply")).click()
    expect(page.get_by_role("heading", name=re.compile(r"^Reply \d"))).to_be_visible()


def test_a_writer_writes_sees_counts_keeps_a_draft_and_submits(page, transactional_db):
    study = build_writing_study(n_contexts=3)
    invite = writing_settings(study).invite_token
    _consent(page, invite)
    _start_writing(page)
    expect(page.locator("ol.chat")).to_contain_text("failed my driving test")
    box = page.get_by_label("Your reply as the supporter")
    box.focus()
    page.keyboard.type("I hear you.")
    counts = page.locator("#text-counts")
    expect(counts).to_contain_text("3 words")
    expect(counts).to_contain_text("1 sentence")
    expect(counts).to_contain_text("A little short")
    page.keyboard.type(" Failing twice hurts, and it says nothing about your worth as a person.")
    expect(counts).to_contain_text("16 words")
    expect(counts).to_contain_text("2 sentences")
    expect(counts).not_to_contain_text("A little short")
    assert_accessible(page)
    page.keyboard.press("Tab")  # leaving the box saves the draft
    expect(page.locator(".save-status")).to_contain_text("Draft saved")
    page.reload()
    expect(page.get_by_label("Your reply as the supporter")).to_have_value(
        "I hear you. Failing twice hurts, and it says nothing about your worth as a person."
    )
    page.get_by_role("button", name="Submit reply").click()
    expect(page.locator(".progress-summary")).to_contain_text("You have written 1 reply")
    first = Writing.objects.get(status="pending")
    assert first.keystrokes >= 80 and "unmeasured" not in first.flags

    # A text outside the hard limits is refused with the message next to the field.
    _start_writing(page)
    box = page.get_by_label("Your reply as the supporter")
    box.focus()
    page.keyboard.type("Okay.")
    page.keyboard.press("Tab")
    page.get_by_role("button", name="Submit reply").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#text-error")).to_contain_text("please write at least 3")
    expect(page.get_by_label("Your reply as the supporter")).to_have_value("Okay.")
    assert_accessible(page)
    box = page.get_by_label("Your reply as the supporter")
    box.fill("")
    box.focus()
    page.keyboard.type(REPLY)
    page.get_by_role("button", name="Submit reply").click()
    expect(page.locator(".progress-summary")).to_contain_text("You have written 2 replies")

    _start_writing(page)
    page.get_by_label("Your reply as the supporter").focus()
    page.keyboard.type(REPLY)
    page.get_by_role("button", name="Submit reply").click()
    page.get_by_role("link", name="I am finished").click()
    expect(page.get_by_role("heading", name="Thank you")).to_be_visible()
    expect(page.locator(".completion-code")).to_have_text(writing_settings(study).completion_code)
    assert_accessible(page)
    contexts = list(Writing.objects.filter(status="pending").values_list("context_id", flat=True))
    assert len(contexts) == len(set(contexts)) == 3


def test_a_second_writer_never_gets_a_full_or_already_written_context(
    desktop_page, transactional_db
):
    page = desktop_page
    study = build_writing_study(n_contexts=3, per_context=2)
    full, *_rest = DialogueContext.objects.filter(study=study).order_by("id")
    now = timezone.now()
    for _ in range(2):  # two other writers have filled the first context
        WritingFactory(
            study=study,
            writer=writer_enter(study=study),
            context=full,
            status="pending",
            text=GOOD_TEXT,
            leased_at=now,
            lease_expires_at=now,
        )
    _consent(page, writing_settings(study).invite_token)
    served = []
    for _ in range(3):
        link = page.get_by_role("link", name=re.compile(r"^Write (a|the next) reply"))
        link.click()
        if page.get_by_role("heading", name="Thank you").is_visible():
            break
        current = Writing.objects.get(status="draft")
        served.append(current.context_id)
        page.get_by_label("Your reply as the supporter").fill(REPLY)
        page.get_by_role("button", name="Submit reply").click()
        expect(page.locator(".progress-summary")).to_be_visible()
    expect(page.get_by_role("heading", name="Thank you")).to_be_visible()
    assert len(served) == 2 and len(set(served)) == 2 and full.pk not in served


def _paste(page, text: str) -> None:
    page.evaluate("text => navigator.clipboard.writeText(text)", text)
    page.get_by_label("Your reply as the supporter").focus()
    page.keyboard.press("ControlOrMeta+V")


@pytest.mark.parametrize("block_paste", [False, True])
def test_pasting_is_measured_or_blocked(browser, live_server, transactional_db, block_paste):
    study = build_writing_study(n_contexts=1, block_paste=block_paste)
    context = browser.new_context(
        base_url=live_server.url,
        permissions=["clipboard-read", "clipboard-write"],
        viewport={"width": 1280, "height": 900},
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        _consent(page, writing_settings(study).invite_token)
        _start_writing(page)
        _paste(page, REPLY)
        box = page.get_by_label("Your reply as the supporter")
        if block_paste:
            expect(page.locator(".save-status")).to_contain_text("Pasting is switched off")
            expect(box).to_have_value("")
            return
        expect(box).to_have_value(REPLY)
        page.get_by_role("button", name="Submit reply").click()
        expect(page.locator(".progress-summary")).to_contain_text("You have written 1 reply")
        stored = Writing.objects.get()
        assert stored.inserted_chars == len(REPLY) and stored.keystrokes <= 2
        assert "pasted" in stored.flags and stored.status == "pending"
    finally:
        context.close()
