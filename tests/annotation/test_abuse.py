"""Attacks and everyday mistakes on the rater pages, run through the real URLs: each must fail.

Hoarding and free codes, Prolific identity takeover, stale pages and second tabs, closed and
paused studies, oversized reasons, and one context seen many times by one rater.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.access import RATER_COOKIE, rater_cookie_value
from annotation.models import Assignment, Judgment, Pair, Rater
from annotation.services import (
    assignment_keepalive,
    assignment_next,
    judgment_submit,
    rater_enter,
    rater_join,
)
from tests.factories.annotation import SYSTEMS, build_study

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()  # the rate-limit counters live in the (test's own) cache
    yield
    cache.clear()


def _url(name, study, **kw):
    return reverse(f"annotation:{name}", kwargs={"invite_token": study.invite_token, **kw})


def _join(client, study, query=""):
    client.get(_url("entry", study) + query)
    return client.post(_url("consent", study), {"agree": "on"})


def _rater_client(rater) -> Client:
    client = Client()
    client.cookies[RATER_COOKIE] = rater_cookie_value([rater.token])
    return client


def _submit(client, token, **data):
    return client.post(reverse("annotation:submit", args=[token]), {"choice": "2", **data}, **HTMX)


# --- hoarding and free codes --------------------------------------------------------------


def test_plain_gets_with_random_prolific_ids_create_no_raters(client):
    study = build_study()
    for i in range(50):
        Client().get(_url("entry", study) + f"?PROLIFIC_PID=bot{i}&STUDY_ID=S&SESSION_ID=X{i}")
    assert not Rater.objects.exists()
    assert not Assignment.objects.exists()


def test_rater_creation_is_rate_limited_per_client(settings):
    settings.RATER_CREATE_RATE = "3/h"
    study = build_study()
    statuses = [_join(Client(), study).status_code for _ in range(6)]
    assert statuses == [302, 302, 302, 429, 429, 429]
    assert Rater.objects.count() == 3
    limited = _join(Client(), study)
    assert "Too many attempts" in limited.content.decode()


def test_the_entry_link_is_rate_limited_per_client(settings):
    settings.RATER_ENTRY_RATE = "5/m"
    study = build_study()
    statuses = [Client().get(_url("entry", study)).status_code for _ in range(7)]
    assert statuses[:5] == [302] * 5 and statuses[5:] == [429, 429]


def test_the_active_rater_cap_refuses_newcomers_until_a_place_frees(settings):
    study = build_study(max_active_raters=2)
    first, second, third = Client(), Client(), Client()
    assert _join(first, study).status_code == 302
    assert _join(second, study).status_code == 302
    full = _join(third, study)
    assert full.status_code == 503 and "The study is full" in full.content.decode()
    assert Rater.objects.count() == 2
    # A rater who finished no longer holds a place.
    Rater.objects.filter(pk=Rater.objects.first().pk).update(finished_at=timezone.now())
    assert _join(third, study).status_code == 302


def test_a_rater_who_judged_nothing_gets_no_code():
    """50 hoarders hold every item; the next genuine rater is told to return, with no code."""
    study = build_study(n_contexts=1, quota=1, items_per_rater=3, quality_check_rate=0)
    hoarders = [rater_join(study=study) for _ in range(3)]
    for hoarder in hoarders:
        assert assignment_next(rater=hoarder) is not None  # every pair now leased
    client = Client()
    _join(client, study)
    page = client.get(_url("item", study), follow=True)
    html = page.content.decode()
    assert "No items are available" in html and "return" in html
    assert study.completion_code not in html
    # Asking for the done page directly does not help either.
    assert study.completion_code not in client.get(_url("done", study)).content.decode()


def test_a_rater_who_did_work_gets_the_code():
    study = build_study(n_contexts=1, items_per_rater=1, quality_check_rate=0)
    client = Client()
    _join(client, study)
    client.get(_url("item", study))
    token = Assignment.objects.get(status="leased").token
    _submit(client, token)
    assert study.completion_code in client.get(_url("done", study)).content.decode()


def test_an_abandoned_lease_frees_its_item_after_the_short_lease_and_a_heartbeat_keeps_it():
    # One pair with room for one judgment: whoever holds it blocks everyone else.
    study = build_study(
        n_contexts=1, quota=1, items_per_rater=1, quality_check_rate=0, systems=SYSTEMS[:2]
    )
    assert study.lease_seconds <= 180  # short by default
    holder, other = rater_join(study=study), rater_join(study=study)
    held = assignment_next(rater=holder)
    now = timezone.now()
    assert assignment_next(rater=other, now=now) is None
    # The open page's heartbeat keeps the item reserved past the first lease time ...
    beat = _rater_client(holder).post(reverse("annotation:heartbeat", args=[held.token]))
    assert beat.status_code == 204
    later = now + timedelta(seconds=study.lease_seconds - 5)
    assert assignment_keepalive(assignment=held, now=later)
    assert assignment_next(rater=other, now=later + timedelta(seconds=10)) is None
    # ... while an abandoned one (no heartbeat) goes back to the pool after the lease.
    after = later + timedelta(seconds=study.lease_seconds + 1)
    assert not assignment_keepalive(assignment=held, now=after)
    claimed = assignment_next(rater=other, now=after)
    assert claimed is not None and claimed.pair_id == held.pair_id


def test_a_heartbeat_for_another_raters_item_is_404():
    study = build_study(quality_check_rate=0)
    owner, stranger = rater_join(study=study), rater_join(study=study)
    item = assignment_next(rater=owner)
    response = _rater_client(stranger).post(reverse("annotation:heartbeat", args=[item.token]))
    assert response.status_code == 404


# --- Prolific identity -------------------------------------------------------------------


def test_another_participants_prolific_id_does_not_take_over_their_queue():
    study = build_study(quality_check_rate=0)
    victim = Client()
    _join(victim, study, "?PROLIFIC_PID=VICTIM&STUDY_ID=S1&SESSION_ID=SESS-V")
    victim.get(_url("item", study))
    rater = Rater.objects.get(external_id="VICTIM")
    token = Assignment.objects.get(rater=rater, status="leased").token
    attacker = Client()
    entry = attacker.get(_url("entry", study) + "?PROLIFIC_PID=VICTIM&STUDY_ID=S1&SESSION_ID=ATT")
    assert entry.status_code == 403 and "already taking part" in entry.content.decode()
    assert RATER_COOKIE not in entry.cookies or not entry.cookies[RATER_COOKIE].value
    # Nothing the attacker does is stored under the victim: consenting now makes them a
    # rater of their own (an open-link study), never the victim.
    attacker.post(_url("consent", study), {"agree": "on"})
    assert _submit(attacker, token).status_code == 404
    assert token not in attacker.get(_url("item", study), follow=True).content.decode()
    assert not Judgment.objects.filter(rater=rater).exists()
    assert Rater.objects.filter(external_id="VICTIM").count() == 1


def test_the_same_prolific_session_resumes_from_a_fresh_browser():
    study = build_study(quality_check_rate=0)
    first = Client()
    _join(first, study, "?PROLIFIC_PID=P1&STUDY_ID=S1&SESSION_ID=SX")
    first.get(_url("item", study))
    token = Assignment.objects.get(status="leased").token
    again = Client()
    entry = again.get(_url("entry", study) + "?PROLIFIC_PID=P1&STUDY_ID=S1&SESSION_ID=SX")
    assert entry.url == _url("item", study)
    assert token in again.get(entry.url).content.decode()


def test_a_prolific_only_study_refuses_a_visit_without_a_prolific_id():
    study = build_study(rater_entry="prolific")
    page = Client().get(_url("entry", study))
    assert page.status_code == 403 and "only to Prolific participants" in page.content.decode()
    assert Client().post(_url("consent", study), {"agree": "on"}).status_code == 403
    assert not Rater.objects.exists()
    assert _join(Client(), study, "?PROLIFIC_PID=P9&STUDY_ID=S&SESSION_ID=X").status_code == 302
    assert Rater.objects.get().external_id == "P9"


# --- stale pages, second tabs ------------------------------------------------------------


def test_rater_pages_are_never_cached():
    study = build_study(quality_check_rate=0)
    client = Client()
    _join(client, study)
    for url in (_url("entry", study), _url("consent", study), _url("item", study)):
        assert "no-store" in client.get(url)["Cache-Control"], url


def test_an_answer_from_a_second_tab_is_acknowledged_not_silently_dropped():
    study = build_study(quality_check_rate=0)
    client = Client()
    _join(client, study)
    client.get(_url("item", study))
    token = Assignment.objects.get(status="leased").token
    first = _submit(client, token, choice="1")
    assert "already been answered" not in first.content.decode()
    second = _submit(client, token, choice="5")  # the stale tab
    assert second.status_code == 200
    assert "That item had already been answered" in second.content.decode()
    assert Judgment.objects.filter(assignment__token=token).count() == 1
    assert Judgment.objects.get(assignment__token=token).metadata["choice"] == 1


def test_an_answer_from_a_stale_page_is_stored_while_the_item_is_still_the_raters():
    study = build_study(quality_check_rate=0)
    client = Client()
    _join(client, study)
    client.get(_url("item", study))
    token = Assignment.objects.get(status="leased").token
    client.get(_url("item", study))  # reloads elsewhere: still the same item
    assert _submit(client, token).status_code == 200
    assert Judgment.objects.filter(assignment__token=token).exists()


# --- closed and paused studies -----------------------------------------------------------


def _holding(study):
    client = Client()
    _join(client, study)
    client.get(_url("item", study))
    return client, Assignment.objects.get(status="leased").token


def test_a_closed_study_refuses_submits_and_new_items_with_a_clear_page():
    study = build_study(quality_check_rate=0)
    client, token = _holding(study)
    study.status = "closed"
    study.save()
    plain = client.post(reverse("annotation:submit", args=[token]), {"choice": "2"})
    assert plain.status_code == 409 and "This study is closed" in plain.content.decode()
    htmx = _submit(client, token)
    assert htmx["HX-Redirect"] == _url("item", study)
    assert "This study is closed" in client.get(_url("item", study)).content.decode()
    assert not Judgment.objects.exists()
    newcomer = Client()
    assert "This study is closed" in newcomer.get(_url("entry", study)).content.decode()
    assert "This study is closed" in _join(newcomer, study).content.decode()
    assert Rater.objects.count() == 1


def test_a_pause_lets_holders_finish_their_item_but_gives_no_new_one():
    study = build_study(quality_check_rate=0, pause_lets_finish=True)
    client, token = _holding(study)
    study.status = "paused"
    study.save()
    assert token in client.get(_url("item", study)).content.decode()  # still theirs
    answered = _submit(client, token)
    assert answered["HX-Redirect"] == _url("item", study)
    assert Judgment.objects.count() == 1
    page = client.get(_url("item", study))
    assert "This study is paused" in page.content.decode()
    assert Assignment.objects.filter(status="leased").count() == 0
    assert "This study is paused" in client.get(_url("done", study)).content.decode()


def test_a_pause_without_finishing_refuses_the_held_item():
    study = build_study(quality_check_rate=0, pause_lets_finish=False)
    client, token = _holding(study)
    study.status = "paused"
    study.save()
    refused = client.post(reverse("annotation:submit", args=[token]), {"choice": "2"})
    assert refused.status_code == 409 and "This study is paused" in refused.content.decode()
    assert "This study is paused" in client.get(_url("item", study)).content.decode()
    assert not Judgment.objects.exists()


# --- everyday mistakes -------------------------------------------------------------------


def test_a_one_mebibyte_reason_is_refused_with_a_message_and_not_echoed():
    study = build_study(quality_check_rate=0, rationale_max_chars=500)
    client, token = _holding(study)
    huge = "x" * (1024 * 1024)
    response = _submit(client, token, rationale=huge)
    html = response.content.decode()
    assert "Your reason is too long (1,048,576 characters; at most 500)" in html
    assert len(html) < 50_000 and "x" * 501 not in html
    assert 'maxlength="500"' in html and 'id="rationale-count"' in html
    assert 'aria-invalid="true"' in html and "autofocus" in html
    assert not Judgment.objects.exists()
    assert _submit(client, token, rationale="y" * 500).status_code == 200
    assert Judgment.objects.get().rationale == "y" * 500


def test_a_missing_choice_marks_and_focuses_the_first_invalid_field():
    study = build_study(quality_check_rate=0)
    client, token = _holding(study)
    html = client.post(reverse("annotation:submit", args=[token]), {}, **HTMX).content.decode()
    assert 'data-first-error="choice"' in html
    assert 'id="choice-1" required aria-invalid="true" autofocus' in html
    assert 'role="alert"' in html


def test_a_rater_sees_one_context_once_where_the_design_allows():
    # 4 contexts x 3 pairs each; a queue of 4 items can take one item per context.
    study = build_study(n_contexts=4, items_per_rater=4, quality_check_rate=0)
    rater = rater_enter(study=study)
    contexts = []
    while (item := assignment_next(rater=rater)) is not None:
        contexts.append(item.pair.context_id)
        judgment_submit(rater=rater, assignment=item, choice=3)
    assert len(contexts) == 4 and len(set(contexts)) == 4


def test_the_context_limit_rises_only_as_far_as_the_queue_needs():
    # 2 contexts, 4 items: one per context cannot fill the queue, two per context can.
    study = build_study(n_contexts=2, items_per_rater=4, quality_check_rate=0)
    rater = rater_enter(study=study)
    contexts = []
    while (item := assignment_next(rater=rater)) is not None:
        contexts.append(item.pair.context_id)
        judgment_submit(rater=rater, assignment=item, choice=3)
    assert len(contexts) == 4 and max(contexts.count(c) for c in set(contexts)) == 2


def test_a_setting_of_two_per_context_is_honoured():
    study = build_study(n_contexts=3, items_per_rater=6, quality_check_rate=0)
    study.max_items_per_context = 2
    study.save()
    rater = rater_enter(study=study)
    contexts = []
    while (item := assignment_next(rater=rater)) is not None:
        contexts.append(item.pair.context_id)
        judgment_submit(rater=rater, assignment=item, choice=3)
    assert len(contexts) == 6 and all(contexts.count(c) == 2 for c in set(contexts))


def test_a_submit_to_a_pair_that_filled_meanwhile_is_refused_whole():
    """The one-statement submit: claimed but not counted leaves nothing half-done."""
    study = build_study(quality_check_rate=0)
    rater = rater_join(study=study)
    item = assignment_next(rater=rater)
    Pair.objects.filter(pk=item.pair_id).update(n_judgments=study.judgments_per_pair)
    result = judgment_submit(rater=rater, assignment=item, choice=2)
    assert result.refused
    item.refresh_from_db()
    assert item.status == "expired" and item.submitted_at is None
    assert not Judgment.objects.exists()
    assert Pair.objects.get(pk=item.pair_id).n_judgments == study.judgments_per_pair
