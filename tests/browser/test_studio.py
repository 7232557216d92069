"""The studio in Chromium: every page on phone and desktop (axe-core, no page overflow,
no JavaScript needed), and the whole journey of a new study admin."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from annotation.models import Judgment, Pair
from completions.access import STUDY_ADMINS
from completions.models import Study
from tests.conftest import DESKTOP, assert_accessible
from tests.factories import ImportJobFactory
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


def _fits_the_screen(page) -> None:
    overflow = page.evaluate(
        "document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
    )
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px on {page.url}"


def test_every_studio_page_is_accessible_and_fits_the_screen(page, admin_user, artifacts_dir):
    from tests.factories.annotation import build_study

    study = build_study(slug="axe-study", n_contexts=2)
    done = ImportJobFactory(
        study=study, kind="contexts", filename="c.jsonl", status="done",
        report=["lines read: 2", "contexts created: 2"],
    )  # fmt: skip
    ImportJobFactory(study=study, kind="completions", filename="m.jsonl", stage="waiting")
    _sign_in(page)
    base = "/studio/axe-study/"
    paths = ["/", "/studio/new/", base, f"{base}settings/", f"{base}material/", f"{base}pairs/",
             f"{base}raters/", f"{base}material/imports/{done.pk}/", f"{base}writers/",
             f"{base}llm/", f"{base}downloads/", f"{base}strategies/",
             f"{base}prolific/"]  # fmt: skip
    for path in paths:
        response = page.goto(path)
        assert response.status == 200, path
        assert_accessible(page)
        _fits_the_screen(page)
        name = path.strip("/").replace("/", "-") or "home"
        page.screenshot(
            path=str(artifacts_dir / f"{name}-{page.viewport_name}.png"), full_page=True
        )
    assert study.slug in page.url


def test_the_studio_works_without_javascript(browser, live_server, admin_user):
    context = browser.new_context(**DESKTOP, base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    _sign_in(page)
    page.get_by_role("link", name="Create a study").click()
    page.get_by_label("Name").fill("No script")
    page.get_by_label("Slug").fill("no-script")
    page.get_by_role("button", name="Create study").click()
    expect(page.get_by_role("heading", name="No script")).to_be_visible()
    page.get_by_role("link", name="Material", exact=True).click()
    page.get_by_label("What the file holds").select_option("contexts")
    page.get_by_label("File to upload", exact=True).set_input_files(
        {"name": "c.jsonl", "mimeType": "application/jsonl", "buffer": contexts_jsonl()}
    )
    page.get_by_role("button", name="Upload and import").click()
    expect(page.get_by_text("contexts created: 3")).to_be_visible()
    # The invitation link is in a read-only field; the copy button needs JavaScript.
    page.get_by_role("link", name="Overview", exact=True).click()
    expect(page.get_by_label("Invitation link", exact=True)).to_have_value(
        f"{live_server.url}/r/{Study.objects.get(slug='no-script').invite_token}/"
    )
    expect(page.locator("button[data-copy]").first).to_be_hidden()
    page.get_by_role("button", name="Open the study").click()  # a draft without pairs
    expect(page.get_by_text("The study cannot open yet: it has no pairs")).to_be_visible()
    page.get_by_role("button", name="Close the study").click()
    expect(page.get_by_text("Study closed")).to_be_visible()
    context.close()


def _upload(page, name: str, content: bytes, looks_like: str, expect_line: str) -> None:
    """Upload as a newcomer does: the kind is left to be recognised from the file."""
    expect(page.get_by_label("What the file holds")).to_have_value("detect")
    page.get_by_label("File to upload", exact=True).set_input_files(
        {"name": name, "mimeType": "application/jsonl", "buffer": content}
    )
    page.get_by_role("button", name="Upload and import").click()
    expect(page.get_by_text(f"{name} looks like {looks_like}: imported")).to_be_visible()
    expect(page.get_by_text(expect_line).first).to_be_visible()


def test_a_new_admin_runs_a_study_from_the_browser(browser, live_server, admin_user):
    context = browser.new_context(**DESKTOP, base_url=live_server.url)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    page.set_default_timeout(20_000)
    _sign_in(page)

    page.get_by_role("link", name="Create a study").click()
    page.get_by_label("Name").fill("Journey")
    page.get_by_label("Slug").fill("journey")
    page.get_by_label("Judgments per pair").fill("1")
    page.get_by_label("Items per rater").fill("3")
    page.get_by_label("Quality check rate").fill("0")
    page.get_by_role("button", name="Create study").click()
    expect(page.locator(".next-step a")).to_have_text("Upload an ESConv file or a contexts file")
    assert_accessible(page)

    page.locator(".next-step a").click()
    contexts, completions = contexts_jsonl(), completions_jsonl()
    _upload(page, "contexts.jsonl", contexts, "JSON Lines contexts", "contexts created: 3")
    _upload(page, "replies.jsonl", completions, "JSON Lines completions", "systems created: 3")
    assert_accessible(page)

    page.get_by_role("link", name="design the pairs").click()
    expect(page.locator("#preview-summary")).to_contain_text("9 new pairs")
    assert_accessible(page)
    page.get_by_role("button", name="Create 9 pairs").click()
    expect(page.get_by_text("pairs created: 9")).to_be_visible()
    study = Study.objects.get(slug="journey")
    assert Pair.objects.filter(study=study).count() == 9

    page.get_by_role("link", name="Overview", exact=True).click()
    expect(page.get_by_text("Study status: Draft.")).to_be_visible()
    page.locator(".next-step").get_by_role("link", name="Open the study").click()
    page.get_by_role("button", name="Open the study").click()
    expect(page.get_by_text("Study opened: raters and writers can work.")).to_be_visible()
    page.locator("button[data-copy=invite-link]").click()
    expect(page.locator("[data-copy-status=invite-link]")).to_have_text("Copied.")
    link = page.evaluate("navigator.clipboard.readText()")
    assert link == f"{live_server.url}/r/{study.invite_token}/"

    rater_context = browser.new_context(**DESKTOP, base_url=live_server.url)
    rater = rater_context.new_page()
    rater.goto(link)
    rater.get_by_label("I have read the information above").check()
    rater.get_by_role("button", name="I agree, continue").click()
    rater.get_by_role("link", name="Start judging").click()
    for number in range(1, 4):
        expect(rater.get_by_role("heading", name=f"Item {number} of 3")).to_be_visible()
        rater.locator("input[name=choice]").nth(0).check()
        rater.get_by_role("button", name="Submit and continue").click()
    expect(rater.get_by_role("heading", name="Thank you, you are done")).to_be_visible()
    rater_context.close()
    assert Judgment.objects.filter(study=study).count() == 3

    # The rater clicked through in well under 3 s an item: the quality rules flag them, and
    # the admin, who knows it was a test run, includes them again, saying why.
    page.get_by_role("link", name="Raters", exact=True).click()
    page.get_by_role("button", name="Recompute quality flags").click()
    row = page.locator("tr", has_text="Excluded")
    expect(row).to_contain_text("below the 3 s floor")
    row.get_by_label("Reason for").fill("test run by the study lead")
    row.get_by_role("button", name="Include").click()
    expect(page.locator("tbody tr").first).to_contain_text("included by lead")
    assert_accessible(page)

    page.get_by_role("link", name="Leaderboard", exact=True).click()
    expect(page.get_by_role("heading", name="Elo ratings")).to_be_visible()
    # The first read says the board is being computed; the refit runs after that response
    # and the page refreshes itself onto the stored board.
    expect(page.locator("#results table", has_text="model-alpha").first).to_be_visible(
        timeout=60_000
    )
    with page.expect_download() as info:
        page.get_by_role("link", name="judgments CSV").click()
    text = Path(info.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 3 and {r["context_id"] for r in rows} <= {"ctx-0", "ctx-1", "ctx-2"}
    context.close()


def test_the_leaderboard_and_history_fit_a_phone(page, admin_user, postgres):
    from tests.factories.ranking import add_known_verdicts, build_study

    built = build_study(slug="phone-board")
    add_known_verdicts(built)
    _sign_in(page)
    for path in ["/studio/phone-board/leaderboard/", "/studio/phone-board/leaderboard/history/"]:
        page.goto(path)
        assert_accessible(page)
        _fits_the_screen(page)
    page.goto("/studio/phone-board/leaderboard/")
    page.get_by_role("button", name="Refit now").first.click()
    expect(page.get_by_text("Refit started")).to_be_visible()
