"""No deadlock on the rater claim: a claim never waits for a pair lock, so two claimers can
never wait on each other (a Prolific launch: hundreds of raters claiming in the same second).

Real concurrency on PostgreSQL: a second connection holds the pair locks that other claimers
would hold mid-transaction; the claim must not queue behind them, must not tell the rater the
study is full, and must give the rater an item once they are free.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.access import RATER_COOKIE, rater_cookie_value
from annotation.models import Judgment, Pair
from annotation.services import ClaimBusy, assignment_next, judgment_submit_and_next, rater_enter
from annotation.services import assignments as assignment_engine
from tests.factories.annotation import build_study

SYSTEMS = [("s1", "f1", "model"), ("s2", "f2", "model"), ("s3", "f3", "model")]


def _waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def _hold_every_pair(study) -> object:
    """Another connection locks every pair of the study, as claimers mid-transaction do."""
    blocker = connections.create_connection("default")
    blocker.set_autocommit(False)
    with blocker.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {Pair._meta.db_table} WHERE study_id = %s FOR NO KEY UPDATE",
            [study.pk],
        )
    return blocker


def test_a_claim_never_waits_for_a_pair_lock_and_serves_once_the_pairs_are_free(
    postgres, transactional_db
):
    study = build_study(n_contexts=2, quota=3, quality_check_rate=0, systems=SYSTEMS)
    rater = rater_enter(study=study)
    blocker = _hold_every_pair(study)
    got: list[object] = []

    def claim() -> None:
        try:
            got.append(assignment_next(rater=rater))
        except BaseException as exc:  # shown by the main thread
            got.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=claim)
    thread.start()
    waited = 0
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:  # the claim keeps trying, never queued on a lock
        waited = max(waited, _waiting_on_locks())
        time.sleep(0.005)
    assert thread.is_alive()  # not told "no items": the pairs have room, only held
    blocker.commit()
    blocker.close()
    thread.join(10)
    assert waited == 0
    assert len(got) == 1 and got[0] is not None and not isinstance(got[0], BaseException)
    assert got[0].pair.study_id == study.pk


def test_a_claim_that_stays_blocked_asks_the_rater_to_try_again(
    postgres, transactional_db, monkeypatch
):
    monkeypatch.setattr(assignment_engine, "CLAIM_PATIENCE_SECONDS", 0.2)
    study = build_study(n_contexts=1, quota=3, quality_check_rate=0, systems=SYSTEMS)
    rater = rater_enter(study=study)
    rater.consented_at = timezone.now()
    rater.save(update_fields=["consented_at"])
    blocker = _hold_every_pair(study)
    try:
        with pytest.raises(ClaimBusy):
            assignment_next(rater=rater)
        client = Client()
        client.cookies[RATER_COOKIE] = rater_cookie_value([rater.token])
        page = client.get(reverse("annotation:item", args=[study.invite_token]))
    finally:
        blocker.rollback()
        blocker.close()
    assert page.status_code == 503
    assert page["Retry-After"] == "2"
    html = page.content.decode()
    assert "One moment, please" in html and 'http-equiv="refresh"' in html
    # Once free, the same page serves an item.
    page = client.get(reverse("annotation:item", args=[study.invite_token]))
    assert page.status_code == 200 and "/submit/" in page.content.decode()


def test_the_last_places_go_to_concurrent_claimers_without_an_error(postgres, transactional_db):
    """Many raters on few pairs with room: every claim ends in an item or "done", never an
    error; each pair ends exactly at its quota."""
    study = build_study(
        n_contexts=2, quota=4, quality_check_rate=0, systems=SYSTEMS, items_per_rater=3
    )
    raters = [rater_enter(study=study) for _ in range(24)]
    errors: list[BaseException] = []

    def work(rater) -> None:
        try:
            item = assignment_next(rater=rater)
            while item is not None:
                _, item = judgment_submit_and_next(rater=rater, assignment=item, choice=2)
        except BaseException as exc:  # shown by the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(r,)) for r in raters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    for pair in Pair.objects.filter(study=study):
        assert pair.n_judgments == Judgment.objects.filter(pair=pair).count() == 4
