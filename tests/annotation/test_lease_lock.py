"""One lock for leases and places: lease renewals and claims are decided under the pair's row
lock with a count that sees every earlier lease; a refused answer says the true reason.

Real concurrency on PostgreSQL: two raters' renewals wait on the same pair lock (held by a
third connection, then released), as two renewals 10 ms apart do under load.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.access import RATER_COOKIE, rater_cookie_value
from annotation.models import Assignment, Judgment, Pair
from annotation.services import (
    LEASE_RAN_OUT,
    PAIR_FULL,
    assignment_next,
    judgment_submit,
    rater_enter,
)
from annotation.views import REFUSED_NOTICES
from tests.factories import AssignmentFactory
from tests.factories.annotation import build_study

TWO = [("s1", "f1", "model"), ("s2", "f2", "model"), ("s3", "f3", "model")]


def _expired_lease(rater, pair: Pair, minutes_ago: int = 5) -> Assignment:
    past = timezone.now() - timedelta(minutes=minutes_ago)
    return AssignmentFactory(
        rater=rater, pair=pair, position=0, shown_left="a", served_at=past, lease_expires_at=past
    )


def _waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def test_two_renewals_at_once_cannot_both_take_the_last_place(postgres, transactional_db):
    study = build_study(n_contexts=1, quota=2, quality_check_rate=0, systems=TWO)
    pair = Pair.objects.filter(study=study).order_by("pk").first()
    Pair.objects.filter(pk=pair.pk).update(n_judgments=1)  # one place left
    first, second = rater_enter(study=study), rater_enter(study=study)
    leases = {r.pk: _expired_lease(r, pair) for r in (first, second)}
    got: dict[int, Assignment | None] = {}
    errors: list[BaseException] = []

    def come_back(rater) -> None:
        try:
            got[rater.pk] = assignment_next(rater=rater)
        except BaseException as exc:  # shown by the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    blocker = connections.create_connection("default")
    blocker.set_autocommit(False)
    with blocker.cursor() as cursor:  # holds the pair's row lock while both come back
        cursor.execute(f"SELECT id FROM {Pair._meta.db_table} WHERE id = %s FOR UPDATE", [pair.pk])
    threads = [threading.Thread(target=come_back, args=(r,)) for r in (first, second)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 20
    while _waiting_on_locks() < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _waiting_on_locks() == 2  # both renewals wait on the lock, their places unknown
    blocker.commit()
    blocker.close()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    renewed = [pk for pk, item in got.items() if item is not None and item.pk == leases[pk].pk]
    assert len(renewed) == 1  # one renewal took the last place; the other got another item
    now = timezone.now()
    running = Assignment.objects.filter(pair=pair, status="leased", lease_expires_at__gt=now)
    assert running.count() == 1
    loser_pk = next(pk for pk in got if pk not in renewed)
    loser_item = got[loser_pk]
    assert loser_item is None or loser_item.pair_id != pair.pk

    # The loser's old page posts its answer: refused, and told the true reason.
    loser = first if loser_pk == first.pk else second
    stale = Assignment.objects.get(pk=leases[loser_pk].pk)
    result = judgment_submit(rater=loser, assignment=stale, choice=2)
    assert result.refused and result.refusal == LEASE_RAN_OUT
    winner = second if loser is first else first
    kept = judgment_submit(rater=winner, assignment=got[winner.pk], choice=4)
    assert kept.created
    assert Pair.objects.get(pk=pair.pk).n_judgments == 2
    assert Judgment.objects.filter(pair=pair).count() == 1


@pytest.mark.django_db
def test_an_answer_refused_on_a_running_reservation_says_the_item_was_full():
    study = build_study(quality_check_rate=0)
    rater = rater_enter(study=study)
    item = assignment_next(rater=rater)
    assert item.lease_expires_at > timezone.now()  # still reserved for this rater
    with transaction.atomic():  # e.g. the admin lowered the quota meanwhile
        Pair.objects.filter(pk=item.pair_id).update(n_judgments=study.judgments_per_pair)
    result = judgment_submit(rater=rater, assignment=item, choice=2)
    assert result.refused and result.refusal == PAIR_FULL


@pytest.mark.django_db
def test_the_rater_page_says_why_an_answer_was_refused(client: Client):
    study = build_study(
        n_contexts=1, quota=1, quality_check_rate=0, lease_seconds=60, systems=TWO[:2]
    )
    slow, fast = rater_enter(study=study), rater_enter(study=study)
    slow.consented_at = fast.consented_at = timezone.now()
    slow.save(update_fields=["consented_at"])
    fast.save(update_fields=["consented_at"])
    stale = assignment_next(rater=slow)
    Assignment.objects.filter(pk=stale.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    fresh = assignment_next(rater=fast)
    judgment_submit(rater=fast, assignment=fresh, choice=1)
    assert stale.pair_id == fresh.pair_id  # the study's one pair, now full
    client.cookies[RATER_COOKIE] = rater_cookie_value([slow.token])
    page = client.post(
        reverse("annotation:submit", args=[stale.token]), {"choice": "2"}, follow=True
    )
    html = page.content.decode()
    assert "reservation had run out" in html
    assert REFUSED_NOTICES[LEASE_RAN_OUT][:40] in html
    assert "timed out" not in html
