"""Quality checks in Chromium: a study made through the studio forms opens with checks made
from its own conversations, a rater meets one in their queue, and the raters and checks pages
show the answer; the checks pages pass axe-core on phone and desktop."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from annotation.models import Judgment, QualityCheckItem
from completions.access import STUDY_ADMINS
from completions.models import Study
from tests.conftest import DESKTOP, assert_accessible
from tests.factories.files import completions_jsonl, contexts_jsonl

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


def _upload(page, name: str, content: bytes, expect_line: str) -> None:
    page.get_by_label("File to upload", exact=True).set_input_files(
        {"name": name, "mimeType": "application/jsonl", "buffer": content}
    )
    page.get_by_role("button", name="Upload and import").click()
    expect(page.get_by_text(expect_line).first).to_be_visible()


def test_a_study_made_in_the_studio_opens_with_checks_a_rater_meets(
    browser, live_server, admin_user
):
    context = browser.new_context(**DESKTOP, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(20_000)
    _sign_in(page)
    page.get_by_role("link", name="Create a study").click()
    page.get_by_label("Name").fill("Checked")
    page.get_by_label("Slug").fill("checked")
    page.get_by_label("Judgments per pair").fill("1")
    page.get_by_label("Items per rater").fill("4")
    page.get_by_label("Quality check rate").fill("0.2")
    page.get_by_role("button", name="Create study").click()
    page.get_by_role("link", name="Material", exact=True).click()
    _upload(page, "contexts.jsonl", contexts_jsonl(), "contexts created: 3")
    _upload(page, "replies.jsonl", completions_jsonl(), "systems created: 3")
    page.get_by_role("link", name="Pairs", exact=True).click()
    page.get_by_role("button", name="Create 9 pairs").click()
    expect(page.get_by_text("pairs created: 9")).to_be_visible()
    page.get_by_role("link", name="Overview", exact=True).click()
    page.get_by_role("button", name="Open the study").click()
    expect(page.get_by_text("Study opened: raters and writers can work.")).to_be_visible()

    study = Study.objects.get(slug="checked")
    checks = list(QualityCheckItem.objects.filter(study=study))
    assert len(checks) == 6  # made from its own conversations when it opened
    own_turns = list(study.contexts.values_list("turns", flat=True))
    assert all(check.turns in own_turns for check in checks)

    # The checks page lists them, none answered yet, and no bot passes.
    page.locator("nav.studio-nav").get_by_role("link", name="Quality checks", exact=True).click()
    expect(page.locator("#bot-problems")).to_have_text("No bot passes: every gate holds.")
    expect(page.locator("#checks tbody tr")).to_have_count(6)

    # A rater: 4 real items and one check (20 % of the queue), shown like any item.
    rater_context = browser.new_context(**DESKTOP, base_url=live_server.url)
    rater = rater_context.new_page()
    rater.goto(f"/r/{study.invite_token}/")
    rater.get_by_label("I have read the information above").check()
    rater.get_by_role("button", name="I agree, continue").click()
    rater.get_by_role("link", name="Start judging").click()
    texts = {t for check in checks for t in (check.text_a, check.text_b)}
    seen_check = False
    for number in range(1, 6):
        expect(rater.get_by_role("heading", name=f"Item {number} of 5")).to_be_visible()
        shown = rater.locator(".response p").all_inner_texts()
        seen_check = seen_check or set(shown) <= texts
        assert_accessible(rater)
        rater.locator("input[name=choice]").nth(0).check()
        rater.get_by_role("button", name="Submit and continue").click()
    expect(rater.get_by_role("heading", name="Thank you, you are done")).to_be_visible()
    rater_context.close()
    assert seen_check
    assert Judgment.objects.filter(study=study, quality_check=True).count() == 1

    # The raters page shows the check answered; the checks page counts the answer.
    page.locator("nav.studio-nav").get_by_role("link", name="Raters", exact=True).click()
    expect(page.locator("table.raters tbody tr").first).to_contain_text(
        "of 1 passed"
    )  # 0 or 1: the rater pressed "A much better" whatever the check was
    page.locator("nav.studio-nav").get_by_role("link", name="Quality checks", exact=True).click()
    expect(page.locator("#checks tbody td.numeric", has_text="1").first).to_be_visible()
    context.close()


def test_the_checks_pages_are_accessible(page, admin_user):
    from tests.factories.annotation import build_study

    study = build_study(slug="axe-checks", n_contexts=3, quality_check_rate=0.2, status="draft")
    _sign_in(page)
    page.goto(f"/studio/{study.slug}/checks/")
    page.get_by_role("button", name="Make 6 more from the study's conversations").click()
    expect(page.get_by_text("6 checks made from the study's conversations.")).to_be_visible()
    assert_accessible(page)
    item = QualityCheckItem.objects.filter(study=study).first()
    for path in ["new/", f"{item.pk}/", f"{item.pk}/preview/"]:
        assert page.goto(f"/studio/{study.slug}/checks/{path}").status == 200
        assert_accessible(page)
    page.goto(f"/studio/{study.slug}/checks/")
    page.get_by_role("button", name=f"Retire check {item.pk}").click()
    expect(page.get_by_text("Check retired")).to_be_visible()
    assert_accessible(page)
