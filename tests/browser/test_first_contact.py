"""A newcomer's first pages in Chromium, phone and desktop: a study not open yet, the Prolific
pages with DEBUG on, the tab title following the item, material that explains itself, the LLM
runs form showing the fields of the chosen run only; no request answered 404 (favicon)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from completions.access import STUDY_ADMINS
from tests.conftest import assert_accessible
from tests.factories import CompletionFactory, EndpointFactory, RunFactory, SystemFactory
from tests.factories.annotation import build_study
from tests.factories.files import contexts_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct horse battery"


@pytest.fixture
def not_found(page):
    """Every response with status 404 the page receives (icons and styles included)."""
    seen: list[str] = []
    page.on("response", lambda r: seen.append(r.url) if r.status == 404 else None)
    return seen


def _fits_the_screen(page) -> None:
    overflow = page.evaluate(
        "document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
    )
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px on {page.url}"


def _sign_in(page, next_path: str) -> None:
    user = User.objects.create_user("lead", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    page.goto(f"/admin/login/?next={next_path}")
    page.fill("#id_username", "lead")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"**{next_path}")


def test_a_rater_meets_a_draft_then_the_tab_title_follows_the_item(page, not_found):
    study = build_study(n_contexts=2, status="draft", items_per_rater=3, quality_check_rate=0)
    page.goto(f"/r/{study.invite_token}/")
    expect(page.get_by_role("heading", name="This study has not started yet")).to_be_visible()
    assert_accessible(page)
    study.status = "open"
    study.save(update_fields=["status"])
    page.goto(f"/r/{study.invite_token}/")
    page.get_by_label("I have read the information above").check()
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("link", name="Start judging").click()
    expect(page).to_have_title("Item 1 of 3 · Response comparison study")
    for number in (2, 3):
        page.locator("input[name=choice]").nth(0).check()
        page.get_by_role("button", name="Submit and continue").click()
        expect(page.get_by_role("heading", name=f"Item {number} of 3")).to_be_visible()
        expect(page).to_have_title(f"Item {number} of 3 · Response comparison study")  # htmx
    assert not not_found, not_found


def test_the_prolific_pages_show_in_the_demo_with_debug_on(page, settings, not_found):
    settings.DEBUG = True  # as `make demo` runs
    study = build_study(rater_entry="prolific")
    response = page.goto(f"/r/{study.invite_token}/")
    assert response.status == 403
    expect(page.get_by_role("heading", name="Please start from Prolific")).to_be_visible()
    assert_accessible(page)
    _fits_the_screen(page)
    assert not not_found, not_found


def test_material_is_recognised_and_each_kind_shows_its_example(page, not_found, artifacts_dir):
    study = build_study(slug="material-study", n_contexts=1)
    _sign_in(page, f"/studio/{study.slug}/material/")
    expect(page.get_by_label("What the file holds")).to_have_value("detect")
    page.locator("#format-contexts summary").click()  # open its example
    expect(page.locator("#format-contexts pre")).to_contain_text('"turns": [{"speaker"')
    assert_accessible(page)
    _fits_the_screen(page)
    page.screenshot(path=str(artifacts_dir / f"material-{page.viewport_name}.png"), full_page=True)
    schema = page.locator("#format-contexts").get_by_role("link", name="JSON Schema")
    href = schema.get_attribute("href")
    body = page.request.get(href)
    assert body.ok and json.loads(body.text())["required"] == ["id", "turns"]

    page.get_by_label("File to upload", exact=True).set_input_files(
        {"name": "mine.jsonl", "mimeType": "application/jsonl", "buffer": contexts_jsonl()}
    )
    page.get_by_role("button", name="Upload and import").click()
    expect(page.get_by_text("mine.jsonl looks like JSON Lines contexts: imported")).to_be_visible()
    page.get_by_label("What the file holds").select_option("esconv")  # the wrong kind
    page.get_by_label("File to upload", exact=True).set_input_files(
        {"name": "again.jsonl", "mimeType": "application/jsonl", "buffer": contexts_jsonl()}
    )
    page.get_by_role("button", name="Upload and import").click()
    expect(page.get_by_text("but again.jsonl looks like JSON Lines contexts")).to_be_visible()
    expect(page.get_by_label("What the file holds")).to_have_value("esconv")  # kept
    assert_accessible(page)
    _fits_the_screen(page)
    assert not not_found, not_found


def test_the_llm_form_shows_the_fields_of_the_chosen_run(page, not_found, artifacts_dir):
    study = build_study(slug="llm-study", n_contexts=1)
    EndpointFactory(name="a-model", provider="openai", model="m", family="gpt")
    _sign_in(page, f"/studio/{study.slug}/llm/")
    expect(page.get_by_role("link", name="Strategies")).to_be_visible()  # in the navigation
    page.select_option("#id_kind", "generate")
    expect(page.get_by_label("Escalation profile (adversarial runs)")).to_be_hidden()
    expect(page.get_by_text("One model per endpoint")).to_be_visible()
    expect(page.get_by_text("The judges: each compares")).to_be_hidden()
    page.select_option("#id_kind", "adversarial")
    expect(page.get_by_label("Escalation profile (adversarial runs)")).to_be_visible()
    expect(page.get_by_label("Use the provider's batch API", exact=False)).to_be_hidden()
    assert_accessible(page)
    _fits_the_screen(page)
    box = page.get_by_label("a-model").bounding_box()
    label = page.locator("label", has_text="a-model").bounding_box()
    assert box["width"] >= 18 and label["height"] >= 40  # a thumb can hit it
    page.screenshot(path=str(artifacts_dir / f"llm-{page.viewport_name}.png"), full_page=True)
    page.select_option("#id_kind", "generate")
    page.get_by_label("a-model").check()
    page.get_by_role("button", name="Show the plan").click()
    expect(page.get_by_role("heading", name="Plan")).to_be_visible()
    assert not not_found, not_found


def test_a_finished_generate_run_leads_to_its_replies_and_the_pairs(page, not_found):
    study = build_study(slug="gen-study", n_contexts=2)
    model = EndpointFactory(name="gen-model", provider="openai", model="m", family="gpt")
    run = RunFactory(study=study, kind="generate", status="finished", plan={"units": 2})
    run.endpoints.add(model)
    system = SystemFactory(study=study, name="gen-model", family="gpt", kind="model")
    for context in study.contexts.all():
        CompletionFactory(
            context=context, system=system, text=f"A kind reply to {context.external_id}.",
            provenance={"source": "llm_run", "run": run.pk},
        )  # fmt: skip
    _sign_in(page, f"/studio/{study.slug}/llm/runs/{run.pk}/")
    page.get_by_role("link", name="2 replies").click()
    expect(page.get_by_role("heading", name="The replies it wrote")).to_be_visible()
    expect(page.locator(".generated li")).to_have_count(2)
    assert_accessible(page)
    _fits_the_screen(page)
    page.get_by_role("link", name="Add the new replies to the pairs").click()
    expect(page.get_by_role("heading", name="Pair design of Rater test study")).to_be_visible()
    assert not not_found, not_found
