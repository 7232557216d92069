"""Writer setup in Chromium, phone and desktop: the writer link copied like Recruit's, the
settings in groups, writing switched off and on, the instructions as writers see them."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from completions.access import STUDY_ADMINS
from tests.conftest import assert_accessible
from tests.factories.writing import build_writing_study
from writing.services import writing_settings

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct horse battery"


def _sign_in(page, next_path: str) -> None:
    user = User.objects.create_user("lead", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    page.goto(f"/admin/login/?next={next_path}")
    page.fill("#id_username", "lead")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


def _fits_the_screen(page) -> None:
    overflow = page.evaluate(
        "document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
    )
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px"


def test_an_admin_sets_up_writing(page, live_server, artifacts_dir):
    study = build_writing_study(n_contexts=2)
    ws = writing_settings(study)
    _sign_in(page, f"/studio/{study.slug}/writers/")
    expect(page.get_by_role("heading", name="Invite writers")).to_be_visible()
    link = f"{live_server.url}/w/{ws.invite_token}/"
    expect(page.get_by_label("Writer link", exact=True)).to_have_value(link)
    page.locator("button[data-copy=writer-link]").click()  # shown once the script runs
    # Copied, or (a browser that refuses the clipboard) selected for Ctrl+C: as on Recruit.
    expect(page.locator("[data-copy-status=writer-link]")).to_have_text(
        re.compile(r"^(Copied\.|Selected: press Ctrl\+C)")
    )
    expect(page.locator(".instructions-preview li").first).to_contain_text("Write as you would")
    assert_accessible(page)
    _fits_the_screen(page)
    page.screenshot(path=str(artifacts_dir / f"writer-setup-{page.viewport_name}.png"))

    page.get_by_label("Writing is on").uncheck()
    page.get_by_label("Suggested most words").fill("40")
    page.get_by_role("button", name="Save writer settings").click()
    expect(page.get_by_text("Writer settings saved.")).to_be_visible()
    expect(page.get_by_text("Contexts can be opened once writing is on.")).to_be_visible()
    ws.refresh_from_db()
    assert not ws.enabled and ws.band_max_words == 40

    page.get_by_label("Writing is on").check()
    page.get_by_label("Most words", exact=True).fill("30")  # below the suggestion: refused
    page.get_by_role("button", name="Save writer settings").click()
    expect(page.get_by_text("The suggested most words cannot be above")).to_be_visible()
    assert_accessible(page)
    ws.refresh_from_db()
    assert not ws.enabled and ws.max_words == 120  # nothing of the refused form was saved
