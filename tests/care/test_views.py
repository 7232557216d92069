"""Care pages through the real URLs: qualification, content notes, skip, break, support, stop;
roles and CSRF; blinding; the rater round trip gains no query."""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotation.models import Assignment, Judgment, Rater
from care.hooks import SINCE_COOKIE
from care.models import CareSettings, ContentNote, QualificationAnswer, Skip
from care.selectors import care_forget
from care.services import qualification_items_seed_from_rubric
from tests.factories import CareSettingsFactory, ContentNoteFactory
from tests.factories.annotation import build_study, forbidden_strings
from tests.factories.writing import build_writing_study
from writing.services import writing_settings

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
SUBMIT = re.compile(r'action="/r/a/([^/"]+)/submit/"')


def _enter(client, study, pid="PID-care"):
    client.get(f"/r/{study.invite_token}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
    client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    return Rater.objects.get(study=study, external_id=pid)


def _qualifying_study(**care):
    study = build_study(n_contexts=2, quality_check_rate=0, slug="qual")
    CareSettingsFactory(study=study, qualification_enabled=True, **care)
    care_forget(study=study)
    qualification_items_seed_from_rubric(study=study)
    return study


def _answer(client, study, right: bool):
    """Answer the item on the qualification page; returns the response."""
    from care.models import QualificationItem

    page = client.get(f"/r/{study.invite_token}/qualify/").content.decode()
    items = QualificationItem.objects.filter(study=study)
    item = next(i for i in items if escape(i.text_a) in page)
    good = 1 if item.expected == "a" else 5
    number = re.search(r'name="number" value="(\d+)"', page).group(1)
    data = {"choice": good if right else 6 - good, "number": number}
    return client.post(f"/r/{study.invite_token}/qualify/", data)


def test_a_qualifying_rater_trains_with_feedback_then_passes_to_real_items(client):
    study = _qualifying_study()
    _enter(client, study)
    item_url = f"/r/{study.invite_token}/item/"
    assert client.get(item_url).url == f"/r/{study.invite_token}/qualify/"
    page = client.get(f"/r/{study.invite_token}/qualify/").content.decode()
    assert "Practice item 1 of 5" in page and "csrfmiddlewaretoken" in page
    stale = client.post(f"/r/{study.invite_token}/qualify/", {"choice": "3", "number": "4"})
    assert stale.status_code == 302 and not QualificationAnswer.objects.exists()
    data = {"choice": "3", "number": "1"}
    feedback = client.post(f"/r/{study.invite_token}/qualify/", data, follow=True)
    html = feedback.content.decode()
    assert "Most raters chose differently" in html and "Most raters prefer" in html
    assert "because it shows" in html
    assert (
        "Qualification item 2 of 5"
        in client.get(f"/r/{study.invite_token}/qualify/").content.decode()
    )
    for _ in range(4):
        last = _answer(client, study, right=True)
    result = client.get(last.url).content.decode()
    assert "You can start the study" in result and "4 of 4" in result
    assert SUBMIT.search(client.get(item_url).content.decode())
    for name in forbidden_strings(study):
        assert name not in page and name not in html


def test_a_rater_who_fails_is_thanked_told_why_and_never_reaches_real_items(client):
    study = _qualifying_study(pass_share=0.75, fail_outcome="code")
    rater = _enter(client, study)
    _answer(client, study, right=True)  # the training item
    for _ in range(4):
        last = _answer(client, study, right=False)
    html = client.get(last.url).content.decode()
    care = CareSettings.objects.get(study=study)
    assert "Thank you for your time" in html and "0 of 4" in html and "75%" in html
    assert care.screenout_code in html and study.completion_code not in html
    assert client.get(f"/r/{study.invite_token}/item/").url.endswith("/qualify/result/")
    assert client.get(f"/r/{study.invite_token}/done/").url.endswith("/qualify/result/")
    assert not Assignment.objects.filter(rater=rater).exists()


def test_a_failed_rater_may_be_asked_to_return_the_study_instead(client):
    study = _qualifying_study(fail_outcome="return")
    _enter(client, study)
    for _ in range(5):
        last = _answer(client, study, right=False)
    html = client.get(last.url).content.decode()
    assert "<strong>return</strong>" in html and "completion-code" not in html


def test_a_content_note_comes_before_the_item_and_a_skip_is_never_counted(client):
    study = build_study(n_contexts=1, quality_check_rate=0)
    context = study.contexts.get()
    ContentNoteFactory(context=context, text="Mentions losing a job.")
    care_forget(study=study)
    rater = _enter(client, study)
    html = client.get(f"/r/{study.invite_token}/item/").content.decode()
    assert html.index("Mentions losing a job.") < html.index("Dialogue history")
    assert "Skip this item" in html and "support/" in html
    token = Assignment.objects.get(rater=rater, status="leased").token
    form = client.get(f"/r/a/{token}/skip/")
    assert form.status_code == 200 and "never counts against you" in form.content.decode()
    done = client.post(f"/r/a/{token}/skip/", {"reason": "not today"}, follow=True)
    assert "Item skipped" in done.content.decode()
    skip = Skip.objects.get()
    assert (skip.rater_id, skip.reason, skip.context_id) == (rater.pk, "not today", context.pk)
    assert not Judgment.objects.exists()
    assert Assignment.objects.filter(rater=rater, status="leased").exclude(token=token).exists()


def test_skip_and_stop_need_the_csrf_token_and_the_raters_own_cookie(client):
    study = build_study(n_contexts=1, quality_check_rate=0)
    rater = _enter(client, study)
    client.get(f"/r/{study.invite_token}/item/")
    token = Assignment.objects.get(rater=rater, status="leased").token
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = client.cookies
    assert strict.post(f"/r/a/{token}/skip/", {}).status_code == 403
    assert strict.post(f"/r/{study.invite_token}/stop/", {}).status_code == 403
    stranger = Client()
    assert stranger.get(f"/r/a/{token}/skip/").status_code == 404
    assert stranger.get(f"/r/{study.invite_token}/stop/").url.endswith("/consent/")
    assert not Skip.objects.exists()


def test_stop_now_ends_the_session_with_the_time_and_the_chosen_outcome(client):
    study = build_study(n_contexts=2, quality_check_rate=0)
    CareSettingsFactory(study=study, stop_outcome="completion")
    care_forget(study=study)
    rater = _enter(client, study)
    client.get(f"/r/{study.invite_token}/item/")
    confirm = client.get(f"/r/{study.invite_token}/stop/").content.decode()
    assert "Stop now?" in confirm and "csrfmiddlewaretoken" in confirm
    stopped = client.post(f"/r/{study.invite_token}/stop/").content.decode()
    assert "you have stopped" in stopped and study.completion_code in stopped
    assert rater.care.seconds_worked is not None
    assert not Assignment.objects.filter(rater=rater, status="leased").exists()
    assert client.get(f"/r/{study.invite_token}/item/").url.endswith("/stop/")


def test_the_break_prompt_follows_the_time_on_task_and_a_break_resets_it(client):
    study = build_study(n_contexts=1, quality_check_rate=0)
    CareSettingsFactory(study=study, break_after_minutes=20)
    care_forget(study=study)
    _enter(client, study)
    first = client.get(f"/r/{study.invite_token}/item/")
    assert SINCE_COOKIE in first.cookies and "Time for a break?" not in first.content.decode()
    client.cookies[SINCE_COOKIE] = str(int(time.time()) - 21 * 60)
    html = client.get(f"/r/{study.invite_token}/item/").content.decode()
    assert "Time for a break?" in html
    pause = client.get(f"/r/{study.invite_token}/break/")
    assert pause.status_code == 200 and pause.cookies[SINCE_COOKIE].value == ""


def test_the_support_page_has_sensible_defaults_and_every_rater_page_links_it(client):
    study = build_study(n_contexts=1, quality_check_rate=0)
    support = f"/r/{study.invite_token}/support/"
    assert support in client.get(f"/r/{study.invite_token}/consent/").content.decode()
    html = client.get(support).content.decode()
    assert "https://findahelpline.com" in html and "Stop now" not in html  # not in the study yet
    _enter(client, study)
    for page in ("instructions", "item"):
        assert support in client.get(f"/r/{study.invite_token}/{page}/").content.decode()
    assert "Stop now" in client.get(support).content.decode()


def test_the_round_trip_gains_no_query_with_notes_and_a_break_due(
    client, django_assert_num_queries
):
    study = build_study(n_contexts=3, quality_check_rate=0)
    for context in study.contexts.all():
        ContentNoteFactory(context=context, text="Touches on grief.")
    CareSettingsFactory(study=study, break_after_minutes=1, qualification_enabled=False)
    care_forget(study=study)
    rater = _enter(client, study)
    client.get(f"/r/{study.invite_token}/item/")
    client.cookies[SINCE_COOKIE] = str(int(time.time()) - 3600)
    token = Assignment.objects.get(rater=rater, status="leased").token
    # The same count as without care (tests/annotation/test_views.py pins it).
    n = 3 if connection.vendor == "postgresql" else 8
    with django_assert_num_queries(n + 2):
        response = client.post(reverse("annotation:submit", args=[token]), {"choice": "2"}, **HTMX)
    html = response.content.decode()
    assert "Touches on grief." in html and "Time for a break?" in html and "/skip/" in html


def _writer_enter(client, study):
    invite = writing_settings(study).invite_token
    client.get(f"/w/{invite}/")
    client.post(f"/w/{invite}/consent/", {"agree": "on"})
    return invite


def test_a_writer_meets_a_note_skips_finds_support_and_stops(client):
    study = build_writing_study(n_contexts=2)
    first = study.contexts.order_by("pk").first()
    ContentNoteFactory(context=first, text="Mentions a divorce.")
    care_forget(study=study)
    invite = _writer_enter(client, study)
    page = client.get(f"/w/{invite}/write/").content.decode()
    assert f"/w/{invite}/support/" in page and "Stop now" in page
    skip_url = re.search(r'href="(/w/t/[^"]+/skip/)"', page).group(1)
    assert "Mentions a divorce." in page or "Mentions a divorce." not in page  # the claim order
    client.post(skip_url, {"reason": "personal"})
    assert Skip.objects.get().writer.study_id == study.pk
    assert "findahelpline.com" in client.get(f"/w/{invite}/support/").content.decode()
    assert client.post(f"/w/{invite}/stop/").status_code == 200
    assert client.get(f"/w/{invite}/write/").url == f"/w/{invite}/stop/"


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(user)
    return client


def test_the_studio_care_page_shows_pass_rate_difficulty_skips_and_time(admin_client):
    study = _qualifying_study()
    rater_client = Client()
    _enter(rater_client, study)
    for right in (True, True, True, False, False):
        _answer(rater_client, study, right=right)
    url = f"/studio/{study.slug}/care/"
    html = admin_client.get(url).content.decode()
    # 2 of 4 qualification items right is under the default 75 %: screened out.
    assert 'id="pass-rate">0%' in html and "screened out" in html
    assert html.count("<td>100%</td>") == 3 and html.count("<td>0%</td>") == 2  # difficulty
    assert "PID-care" not in html
    csv = b"".join(
        admin_client.get(f"/studio/{study.slug}/downloads/time-worked.csv").streaming_content
    )
    assert csv.startswith(b"role,pseudonym,seconds_worked") and b"PID-care" not in csv
    saved = admin_client.post(
        url,
        {
            "pass_share": "2",
            "fail_outcome": "code",
            "stop_outcome": "code",
            "screenout_code": "X",
            "stop_code": "Y",
            "break_after_minutes": "5",
            "support_text": "Help.",
        },
    )
    assert saved.status_code == 422
    note = admin_client.post(f"{url}notes/", {"context": "esconv-secret-ctx-0", "text": "Grief."})
    assert note.status_code == 302 and ContentNote.objects.get().text == "Grief."


def test_the_studio_care_page_is_for_study_admins_only(client):
    study = build_study(n_contexts=1)
    url = f"/studio/{study.slug}/care/"
    assert client.get(url).status_code == 302  # to the login page
    user = get_user_model().objects.create_user("someone", password="pw")
    client.force_login(user)
    assert client.get(url).status_code == 403
    assert client.post(f"{url}seed/").status_code == 403


def test_qualification_on_without_items_lets_raters_through(client):
    study = build_study(n_contexts=1, quality_check_rate=0, slug="no-items")
    CareSettingsFactory(study=study, qualification_enabled=True)
    care_forget(study=study)
    rater = _enter(client, study)
    response = client.get(f"/r/{study.invite_token}/item/", follow=True)
    assert "You can start the study" in response.content.decode()
    assert rater.care.qualification == "passed"
    assert SUBMIT.search(client.get(f"/r/{study.invite_token}/item/").content.decode())


def test_a_writers_skip_and_stop_need_the_csrf_token_and_their_own_link(client):
    study = build_writing_study(n_contexts=1)
    invite = _writer_enter(client, study)
    page = client.get(f"/w/{invite}/write/").content.decode()
    skip_url = re.search(r'href="(/w/t/[^"]+/skip/)"', page).group(1)
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = client.cookies
    assert strict.post(skip_url, {}).status_code == 403
    assert strict.post(f"/w/{invite}/stop/", {}).status_code == 403
    assert Client().get(skip_url).status_code == 404  # another browser: not their text
    assert not Skip.objects.exists()


def test_a_writer_is_prompted_to_take_a_break_after_the_set_time(client):
    study = build_writing_study(n_contexts=1)
    CareSettingsFactory(study=study, break_after_minutes=30)
    care_forget(study=study)
    invite = _writer_enter(client, study)
    first = client.get(f"/w/{invite}/write/")
    assert SINCE_COOKIE in first.cookies and b"Time for a break?" not in first.content
    client.cookies[SINCE_COOKIE] = str(int(time.time()) - 31 * 60)
    assert b"Time for a break?" in client.get(f"/w/{invite}/write/").content
    assert client.get(f"/w/{invite}/break/").cookies[SINCE_COOKIE].value == ""


def test_the_qualification_pages_use_few_queries(client, django_assert_num_queries):
    """A launch sends every rater through five qualification pages and answers at once: the
    study and the rater come in one statement (PostgreSQL), the page reads the items with the
    rater's answers in one query, and an answer is stored under the rater's lock without a
    savepoint or a second read of the items."""
    study = _qualifying_study()
    rater = _enter(client, study)
    url = f"/r/{study.invite_token}/qualify/"
    # The study with this browser's rater, its care row, the items with this rater's answers.
    page_queries = 3 if connection.vendor == "postgresql" else 4
    with django_assert_num_queries(page_queries):
        page = client.get(url).content.decode()
    number = re.search(r'name="number" value="(\d+)"', page).group(1)
    # The page's queries, then one transaction (2: its savepoint and release in a test): the
    # care row locked (1; a first answer creates it: 3 more, with its savepoint), the answer
    # looked for and inserted (2), the care row started (1), the items still unanswered (1).
    with django_assert_num_queries(page_queries + 2 + 1 + 3 + 2 + 1 + 1):
        client.post(url, {"choice": "3", "number": number})
    assert QualificationAnswer.objects.filter(rater=rater).count() == 1
    client.get(f"{url}feedback/")
    page = client.get(url).content.decode()
    number = re.search(r'name="number" value="(\d+)"', page).group(1)
    # The care row exists and has started: locked, the answer looked for and inserted, the rest.
    with django_assert_num_queries(page_queries + 2 + 1 + 2 + 1):
        client.post(url, {"choice": "3", "number": number})
    assert QualificationAnswer.objects.filter(rater=rater).count() == 2
