"""The quality-checks page: list with pass rates, add, edit, retire, preview; the bot table;
and a study that will not open while a script could pass its gates."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.models import QualityCheckItem
from annotation.selectors import quality_item_count, quality_item_count_forget
from tests.factories import JudgmentFactory, QualityCheckItemFactory, RaterFactory
from tests.factories.annotation import build_study, forbidden_strings

pytestmark = pytest.mark.django_db
SHORT = "That sounds hard. What happened?"
LONG = (
    "That sounds so hard, and it makes sense that you feel this way after everything you "
    "have told me about the last few weeks. What has been the hardest part of it for you?"
)


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def study():
    return build_study(n_contexts=3, status="draft", quality_check_rate=0.2, slug="chk")


def _url(name, study, *args):
    return reverse(f"studio:checks:{name}", args=[study.slug, *args])


def test_only_study_admins_reach_the_checks_pages(client, study):
    item = QualityCheckItemFactory(study=study)
    user = get_user_model().objects.create_user("someone", password="pw", is_staff=True)
    client.force_login(user)
    for name, args in [("page", []), ("new", []), ("edit", [item.pk]), ("preview", [item.pk])]:
        assert client.get(_url(name, study, *args)).status_code == 403, name
    assert client.post(_url("retire", study, item.pk)).status_code == 403
    assert client.post(_url("make", study)).status_code == 403
    assert Client().get(_url("page", study)).status_code == 302  # to the login page


def test_the_page_lists_each_check_with_its_pass_rate_and_is_linked_from_the_nav(
    admin_client, study
):
    item = QualityCheckItemFactory(study=study, note="hand-made")
    for i, passed in enumerate((True, True, False)):
        rater = RaterFactory(study=study, pseudonym=f"r{i}")
        JudgmentFactory(
            study=study, pair=None, quality_item=item, rater=rater, judge=rater.pseudonym,
            quality_check=True, passed_check=passed,
        )  # fmt: skip
    overview = admin_client.get(reverse("studio:overview", args=[study.slug])).content.decode()
    assert f'href="/studio/{study.slug}/checks/"' in overview
    html = admin_client.get(_url("page", study)).content.decode()
    row = html.split(f"#{item.pk}")[1].split("</tr>")[0]
    assert '<td class="numeric">3</td>' in row and '<td class="numeric">67%</td>' in row
    assert "in use" in row and "hand-made" in row
    assert 'id="bot-table"' in html and "Always picks the longer reply" in html


def test_an_admin_adds_edits_retires_and_restores_a_check(admin_client, study):
    data = {
        "kind": "gold",
        "conversation": "supporter: Hi, how are you?\nseeker: My exam went badly.",
        "text_a": SHORT,
        "text_b": LONG,
        "expected": "a",
        "note": "mine",
    }
    bad = admin_client.post(_url("new", study), {**data, "conversation": "seeker: hi\nfoo"})
    assert bad.status_code == 422 and "seeker: ..." in bad.content.decode()
    added = admin_client.post(_url("new", study), data, follow=True)
    assert "Check added." in added.content.decode()
    item = QualityCheckItem.objects.get(study=study)
    assert item.turns[-1] == {"speaker": "seeker", "text": "My exam went badly."}
    assert item.expected == "a" and item.expected_choice is None
    edit = admin_client.get(_url("edit", study, item.pk)).content.decode()
    assert "seeker: My exam went badly." in edit
    refused = admin_client.post(_url("edit", study, item.pk), {**data, "kind": "attention"})
    assert refused.status_code == 422 and "attention check asks for one point" in (
        refused.content.decode()
    )
    no_side = {**data, "kind": "gold", "expected": ""}
    assert (
        "A gold check has a better reply"
        in admin_client.post(_url("edit", study, item.pk), no_side).content.decode()
    )
    admin_client.post(
        _url("edit", study, item.pk),
        {**data, "kind": "attention", "expected": "", "expected_choice": "4"},
    )
    item.refresh_from_db()
    assert (item.kind, item.expected, item.expected_choice) == ("attention", "b", 4)
    study.status = "open"
    quality_item_count_forget(study=study)
    assert quality_item_count(study=study) == 1
    admin_client.post(_url("retire", study, item.pk), {"action": "retire"})
    item.refresh_from_db()
    assert item.retired_at is not None and quality_item_count(study=study) == 0
    admin_client.post(_url("retire", study, item.pk), {"action": "restore"})
    item.refresh_from_db()
    assert item.retired_at is None and quality_item_count(study=study) == 1


def test_a_post_without_the_csrf_token_is_refused(study):
    item = QualityCheckItemFactory(study=study)
    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.create_superuser("b2", "b2@example.org", "pw"))
    assert client.post(_url("retire", study, item.pk), {"action": "retire"}).status_code == 403
    item.refresh_from_db()
    assert item.retired_at is None


def test_the_preview_shows_what_a_rater_sees_and_nothing_else(admin_client, study):
    item = QualityCheckItemFactory(study=study, note="secret-note-x", text_a=SHORT, text_b=LONG)
    html = admin_client.get(_url("preview", study, item.pk)).content.decode()
    assert "Response A" in html and SHORT in html and LONG in html
    preview = html.split('id="check-preview"')[1]
    assert "secret-note-x" not in preview and "expected" not in preview.lower()
    for name in forbidden_strings(study):
        assert name not in preview


def test_checks_made_from_the_study_are_listed(admin_client, study):
    made = admin_client.post(_url("make", study), follow=True).content.decode()
    assert "6 checks made from the study&#x27;s conversations." in made
    assert QualityCheckItem.objects.filter(study=study).count() == 6


def test_opening_makes_the_checks_a_study_with_a_rate_lacks(admin_client, study):
    url = reverse("studio:status", args=[study.slug])
    html = admin_client.post(url, {"status": "open"}, follow=True).content.decode()
    assert "Study opened" in html
    assert QualityCheckItem.objects.filter(study=study).count() == 6


def test_opening_is_refused_with_the_reason_when_no_check_can_be_made(admin_client, study):
    from completions.models import Completion

    Completion.objects.filter(context__study=study).update(text_unknown=True)
    url = reverse("studio:status", args=[study.slug])
    html = admin_client.post(url, {"status": "open"}, follow=True).content.decode()
    assert "its quality-check rate is 20% but it has no quality checks" in html
    study.refresh_from_db()
    assert study.status == "draft"


def test_opening_is_refused_with_numbers_while_the_longer_reply_always_wins(admin_client, study):
    for expected in "abab":
        texts = (LONG, SHORT) if expected == "a" else (SHORT, LONG)
        QualityCheckItemFactory(study=study, text_a=texts[0], text_b=texts[1], expected=expected)
    url = reverse("studio:status", args=[study.slug])
    html = admin_client.post(url, {"status": "open"}, follow=True).content.decode()
    assert (
        "a bot that always picks the longer reply matches 4 of 4 gold checks (100%; "
        "the bar is 60%)" in html
    )
    study.refresh_from_db()
    assert study.status == "draft"
    page = admin_client.get(_url("page", study)).content.decode()
    assert "A script could pass this study" in page and "over the bar" in page
    # Retiring two of them for checks where the shorter reply is the better one opens it.
    for item in QualityCheckItem.objects.filter(study=study)[:2]:
        admin_client.post(_url("retire", study, item.pk), {"action": "retire"})
    for expected in "ab":
        texts = (SHORT, LONG) if expected == "a" else (LONG, SHORT)
        QualityCheckItemFactory(study=study, text_a=texts[0], text_b=texts[1], expected=expected)
    html = admin_client.post(url, {"status": "open"}, follow=True).content.decode()
    assert "Study opened" in html
