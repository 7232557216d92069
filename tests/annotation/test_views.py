"""Rater pages and the rater-quality admin page, through the real URLs."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.urls import reverse

from annotation.models import Assignment, Judgment, Rater
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def _url(name, study, **kw):
    return reverse(f"annotation:{name}", kwargs={"invite_token": study.invite_token, **kw})


def _enter(client, study, pid="PID-abc"):
    query = f"?PROLIFIC_PID={pid}&STUDY_ID=S1&SESSION_ID=X1"
    response = client.get(_url("entry", study) + query)
    assert response.status_code == 302 and response.url == _url("consent", study)
    client.post(_url("consent", study), {"agree": "on"})
    return Rater.objects.get(study=study, external_id=pid)


def _current(rater):
    return Assignment.objects.get(rater=rater, status="leased")


def test_prolific_entry_consent_and_resume(client):
    study = build_study(quality_check_rate=0)
    rater = _enter(client, study)
    assert rater.consented_at and rater.prolific_study_id == "S1"
    page = client.get(_url("item", study))
    assert page.status_code == 200
    token = _current(rater).token
    # Same Prolific id and Prolific session from a fresh browser: same rater, same item.
    other = client.__class__()
    response = other.get(_url("entry", study) + "?PROLIFIC_PID=PID-abc&STUDY_ID=S1&SESSION_ID=X1")
    assert response.url == _url("item", study)
    assert token in other.get(response.url).content.decode()
    # Another Prolific session with that id is refused (tests/annotation/test_abuse.py).
    third = client.__class__()
    response = third.get(_url("entry", study) + "?PROLIFIC_PID=PID-abc&STUDY_ID=S1&SESSION_ID=X2")
    assert response.status_code == 403


def test_consent_is_required_before_items(client):
    study = build_study()
    assert client.get(_url("item", study)).url == _url("consent", study)
    response = client.post(_url("consent", study), {})
    assert response.status_code == 200 and "Please tick the box" in response.content.decode()
    assert not Rater.objects.exists()


def test_the_judging_page_has_the_scale_and_both_responses(client):
    study = build_study(quality_check_rate=0, axis_marks=True)
    _enter(client, study)
    html = client.get(_url("item", study)).content.decode()
    assert "Response A" in html and "Response B" in html and "<legend>" in html
    assert html.count('name="choice"') == 5
    assert "A is significantly better than B" in html and "B is significantly better than A" in html
    assert 'name="axis_H"' in html and "js/rater.js" in html
    assert "hx-post=" in html and 'hx-target="#item-region"' in html


def test_response_a_is_whatever_was_shown_left(client):
    study = build_study(quality_check_rate=0)
    rater = _enter(client, study)
    client.get(_url("item", study))
    assignment = _current(rater)
    left = (
        assignment.pair.completion_a
        if assignment.shown_left == "a"
        else assignment.pair.completion_b
    )
    right = (
        assignment.pair.completion_b
        if assignment.shown_left == "a"
        else assignment.pair.completion_a
    )
    html = client.get(_url("item", study)).content.decode()
    assert html.index(left.text) < html.index("Response B") < html.index(right.text)


def test_an_htmx_submit_returns_the_next_item_as_a_fragment(client):
    study = build_study(quality_check_rate=0)
    rater = _enter(client, study)
    client.get(_url("item", study))
    first = _current(rater)
    response = client.post(
        reverse("annotation:submit", args=[first.token]), {"choice": "2"}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html and 'id="item-heading"' in html
    second = _current(rater)
    assert second.pk != first.pk and second.token in html
    judgment = Judgment.objects.get(assignment=first)
    assert judgment.winner == first.shown_left and judgment.strength == 1


def test_a_plain_submit_redirects_to_the_item_page(client):
    study = build_study(quality_check_rate=0)
    rater = _enter(client, study)
    client.get(_url("item", study))
    response = client.post(
        reverse("annotation:submit", args=[_current(rater).token]), {"choice": "3"}
    )
    assert response.status_code == 302 and response.url == _url("item", study)
    assert Judgment.objects.get().winner == "tie"


def test_a_missing_choice_or_required_rationale_stores_nothing(client):
    study = build_study(quality_check_rate=0, rationale_required=True)
    rater = _enter(client, study)
    client.get(_url("item", study))
    url = reverse("annotation:submit", args=[_current(rater).token])
    html = client.post(url, {"rationale": "x"}, **HTMX).content.decode()
    assert "Please choose one point on the scale" in html
    html = client.post(url, {"choice": "1"}, **HTMX).content.decode()
    assert "Please write a short reason" in html
    assert not Judgment.objects.exists()


def test_the_next_item_can_be_submitted_without_htmx(client):
    """The swapped-in form carries the CSRF field: the browser may submit it by itself (before
    htmx takes over the new content, or without JavaScript) and the answer must still count."""
    study = build_study(quality_check_rate=0)
    rater = _enter(client, study)
    client.handler.enforce_csrf_checks = True  # from here on, as a browser's requests
    page = client.get(_url("item", study)).content.decode()
    token = CSRF_FIELD.search(page).group(1)
    first = _current(rater).token
    fragment = client.post(
        reverse("annotation:submit", args=[first]),
        {"choice": "1", "csrfmiddlewaretoken": token},
        **HTMX,
    ).content.decode()
    second = _current(rater).token
    field = CSRF_FIELD.search(fragment)
    assert field is not None
    response = client.post(  # a plain form POST: no htmx header, no X-CSRFToken header
        reverse("annotation:submit", args=[second]),
        {"choice": "2", "csrfmiddlewaretoken": field.group(1)},
    )
    assert response.status_code == 302 and response.url == _url("item", study)
    assert Judgment.objects.filter(rater=rater).count() == 2


CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def test_a_replayed_post_stores_one_judgment(client):
    study = build_study(quality_check_rate=0)
    rater = _enter(client, study)
    client.get(_url("item", study))
    url = reverse("annotation:submit", args=[_current(rater).token])
    client.post(url, {"choice": "1"}, **HTMX)
    client.post(url, {"choice": "5"}, **HTMX)
    assert Judgment.objects.count() == 1 and Judgment.objects.get().strength == 2


def test_it_rejects_another_raters_assignment(client):
    study = build_study(quality_check_rate=0)
    owner = _enter(client, study, pid="OWNER")
    client.get(_url("item", study))
    token = _current(owner).token
    intruder = client.__class__()
    _enter(intruder, study, pid="INTRUDER")
    response = intruder.post(reverse("annotation:submit", args=[token]), {"choice": "1"})
    assert response.status_code == 404 and not Judgment.objects.exists()
    anonymous = client.__class__()
    assert (
        anonymous.post(reverse("annotation:submit", args=[token]), {"choice": "1"}).status_code
        == 404
    )


def test_finishing_shows_the_code_and_the_prolific_link(client):
    study = build_study(
        n_contexts=1,
        quality_check_rate=0,
        items_per_rater=2,
        prolific_redirect_url="https://app.prolific.com/submissions/complete",
    )
    rater = _enter(client, study)
    assert client.get(_url("done", study)).url == _url("item", study)  # not yet
    client.get(_url("item", study))
    client.post(reverse("annotation:submit", args=[_current(rater).token]), {"choice": "1"}, **HTMX)
    last = client.post(
        reverse("annotation:submit", args=[_current(rater).token]), {"choice": "1"}, **HTMX
    )
    assert last["HX-Redirect"] == _url("done", study)
    html = client.get(_url("done", study)).content.decode()
    assert study.completion_code in html
    assert f"https://app.prolific.com/submissions/complete?cc={study.completion_code}" in html
    rater.refresh_from_db()
    assert rater.finished_at is not None


def test_the_rubric_is_shown_only_when_the_study_turns_it_on(client):
    hidden = build_study(slug="no-rubric")
    _enter(client, hidden)
    assert "Weaker example" not in client.get(_url("instructions", hidden)).content.decode()
    shown = build_study(slug="rubric", show_rubric=True)
    _enter(client, shown)
    html = client.get(_url("instructions", shown)).content.decode()
    assert "Weaker example" in html and "Empathic responsiveness" in html


def test_the_item_view_and_submit_use_few_queries(client, django_assert_num_queries):
    # No checks in this queue, so that both requests deal with real items deterministically.
    study = build_study(n_contexts=3, quality_check_rate=0)
    rater = _enter(client, study)
    client.get(_url("item", study))
    # Pinned counts; inside the test transaction each atomic block adds SAVEPOINT + RELEASE.
    # The rater is named by a signed cookie: no session is read (no query, no Redis).
    # Item (resume): the study with this browser's rater (one statement on PostgreSQL, two
    # elsewhere), the rater's queue state, the leased item.
    n = 3 if connection.vendor == "postgresql" else 4
    with django_assert_num_queries(n + 2):
        client.get(_url("item", study))
    token = _current(rater).token
    # Submit + next item (PostgreSQL): the assignment; claim + count + judgment + the rater's
    # queue state + the claim of the next pair (one statement, CTEs); room recheck + new lease +
    # the page's texts (one).
    n = 3 if connection.vendor == "postgresql" else 8  # SQLite: no data-modifying CTEs
    with django_assert_num_queries(n + 2):  # one transaction for the whole round trip
        client.post(reverse("annotation:submit", args=[token]), {"choice": "2"}, **HTMX)


def test_a_draft_study_tells_raters_it_has_not_started_and_records_nothing(client):
    study = build_study(status="draft")  # pairs exist, but the admin has not opened it yet
    entry = client.get(f"/r/{study.invite_token}/?PROLIFIC_PID=p1&STUDY_ID=s&SESSION_ID=x")
    assert entry.status_code == 200
    assert "This study has not started yet" in entry.content.decode()
    consent = client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    assert "This study has not started yet" in consent.content.decode()
    assert not Rater.objects.filter(study=study).exists()
