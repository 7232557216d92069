"""A labeller signs in, labels a sampled response on a phone or a desktop; axe-clean."""

from __future__ import annotations

import pytest

from labelling import services
from labelling.models import HumanLabel
from tests.conftest import assert_accessible
from tests.factories.labelling import PASSWORD, SYSTEM_NAMES, build_labelled_study, user

pytestmark = [pytest.mark.browser]


@pytest.fixture
def sample(transactional_db, postgres):
    study = build_labelled_study(slug="label-ui")
    user("ann", labeller=True)
    return services.sample_create(study=study, size=2)


def test_a_labeller_labels_a_response(page, sample):
    page.goto("/labelling/")
    assert "/labelling/login/" in page.url
    assert_accessible(page)
    page.fill("#id_username", "ann")
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/labelling/")
    assert_accessible(page)
    page.get_by_role("link", name=sample.name).click()
    page.wait_for_selector("#response-text")
    assert_accessible(page)
    content = page.content()
    assert not any(secret in content for secret in SYSTEM_NAMES)
    page.get_by_label("Reflective Statements").check()
    page.get_by_label("Affirmation").check()
    page.get_by_role("button", name="Save and next").click()
    page.wait_for_selector("text=Saved.")
    assert_accessible(page)
    label = HumanLabel.objects.get()
    assert label.present == ["Affirmation", "Reflective Statements"]


@pytest.fixture
def disputed(transactional_db, postgres):
    from tests.factories.labelling import label_all

    study = build_labelled_study(slug="label-admin")
    label_all(study, lambda c: ["Reflective Statements"])
    user("lead", admin=True)
    sample = services.sample_create(study=study, size=2)
    first, second = sample.items.all()
    ann, bob = user("ann", labeller=True), user("bob", labeller=True)
    for item in (first, second):
        services.human_label_submit(item=item, labeller=ann, present=["Reflective Statements"])
    services.human_label_submit(item=first, labeller=bob, present=["Reflective Statements"])
    services.human_label_submit(item=second, labeller=bob, present=["Affirmation"])
    return sample


def test_a_study_admin_adjudicates_and_reads_the_report(desktop_page, disputed):
    page = desktop_page
    study = disputed.study
    url = f"/studio/{study.slug}/strategies/"
    page.goto(f"/admin/login/?next={url}")
    page.fill("#id_username", "lead")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"**{url}")
    assert "Labels used:" in page.content()
    assert_accessible(page)
    page.get_by_role("link", name=disputed.name).click()
    page.wait_for_selector("#sample-progress")
    assert_accessible(page)
    dispute = page.locator("form.dispute")
    dispute.get_by_label("Affirmation").uncheck()
    dispute.get_by_label("Reflective Statements").check()
    dispute.get_by_role("button", name="Save decision").click()
    page.wait_for_selector("#f1-table")
    assert "macro F1 1.000" in page.locator("#report-summary").inner_text()
    assert_accessible(page)
