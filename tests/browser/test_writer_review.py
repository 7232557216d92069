"""The writers' review page in Chromium: a study admin accepts and rejects; axe-core clean."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.conftest import assert_accessible
from tests.factories.writing import GOOD_TEXT, behaviour, build_writing_study
from writing.models import Writing
from writing.services import writer_enter, writing_next, writing_submit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_reviews_flagged_texts(desktop_page, transactional_db):
    page = desktop_page
    study = build_writing_study(n_contexts=1, per_context=2)
    for pasted in (0, len(GOOD_TEXT)):
        writer = writer_enter(study=study)
        writing = writing_next(writer=writer)
        writing_submit(
            writing=writing,
            text=GOOD_TEXT,
            raw_behaviour=behaviour(inserted_chars=pasted, longest_insert=pasted),
        )
    get_user_model().objects.create_superuser("boss", password="pw-boss-1")
    page.goto("/admin/login/?next=/studio/write-study/writers/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill("pw-boss-1")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Writers of Writing study")).to_be_visible()
    expect(page.locator(".flags", has_text="inserted without typing")).to_be_visible()
    assert_accessible(page)
    clean, pasted = Writing.objects.order_by("id")
    page.get_by_role("button", name=f"Accept the text of {clean.writer.pseudonym}").click()
    expect(page.locator(".messages")).to_contain_text("Accepted; 1 new pair(s) added.")
    page.locator(f"#reason-{pasted.token}").fill("Pasted from elsewhere")
    page.locator(f"#reason-{pasted.token}").press("Enter")
    expect(page.locator(".messages")).to_contain_text("Rejected")
    assert_accessible(page)
    assert Writing.objects.get(pk=pasted.pk).status == "rejected"
