from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from core.enqueue import enqueue
from ranking.models import LeaderboardSnapshot
from tests.factories.ranking import X, Y, add_known_verdicts, build_study, judge

pytestmark = pytest.mark.integration


def _wait_for_snapshots(study, expected: int, timeout: float = 30.0) -> list[LeaderboardSnapshot]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = list(LeaderboardSnapshot.objects.filter(study=study).order_by("judges"))
        if len(rows) >= expected:
            return rows
        time.sleep(0.25)
    pytest.fail(f"the worker stored {len(rows)} of {expected} snapshots within {timeout} s")


def test_a_real_worker_refits_a_study_into_snapshots(transactional_db, celery_live):
    built = build_study()
    add_known_verdicts(built)
    enqueue("ranking.tasks.refit_study", built.study.pk, "manual")
    rows = _wait_for_snapshots(built.study, 3)
    assert [row.judges for row in rows] == ["all", "human", "llm"]
    assert {row.trigger for row in rows} == {"manual"}
    # Four hand-made verdicts are below the board's minimum: each system is stored with its
    # count and no prior-held Elo (the fitted numbers are tested on their own).
    by_system = {row["system"]: row for row in rows[1].result["systems"]}
    assert set(by_system) == {X, Y}
    assert by_system[X]["too_few"] and by_system[X]["n"] == 4 and by_system[X]["elo"] is None
    assert rows[1].n_comparisons == 4


def test_repeated_refits_store_one_snapshot_per_distinct_input(transactional_db, celery_live):
    built = build_study()
    add_known_verdicts(built)
    enqueue("ranking.tasks.refit_study", built.study.pk, "manual")
    _wait_for_snapshots(built.study, 3)
    enqueue("ranking.tasks.refit_study", built.study.pk, "nightly")
    enqueue(
        "ranking.tasks.refit_study", built.study.pk, "nightly"
    )  # concurrent duplicates on a 2-process worker
    judge(built, 1, Y, judge="late-rater", strength=1)
    enqueue("ranking.tasks.refit_study", built.study.pk, "nightly")
    rows = _wait_for_snapshots(built.study, 5)
    # Whenever the duplicates ran, the unique fingerprint let each input in once: the new
    # judgment adds a human and an all-judges snapshot, the LLM inputs did not change.
    assert len(rows) == 5
    assert sorted(row.judges for row in rows) == ["all", "all", "human", "human", "llm"]


def test_a_stale_page_is_served_at_once_and_a_real_worker_brings_it_up_to_date(
    transactional_db, celery_live
):
    from django.core.cache import cache

    from ranking import services

    cache.clear()
    built = build_study()
    add_known_verdicts(built)
    first = services.leaderboard_current(built.study, judges="human")
    assert first["status"] == "computing" and first["systems"] == []  # nothing stored yet
    deadline = time.monotonic() + 30
    while services.leaderboard_current(built.study, judges="human")["status"] != "current":
        assert time.monotonic() < deadline, "the worker did not store the snapshot"
        time.sleep(0.25)
    # A minute later (a busy study is refitted at most once a minute) a new judgment arrives.
    LeaderboardSnapshot.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    judge(built, 1, Y, judge="late-rater", strength=1)
    stale = services.leaderboard_current(built.study, judges="human")
    assert stale["status"] == "updating" and stale["refit"]["since"]
    assert stale["n_comparisons"] == 4  # the stored snapshot, served without a fit
    while (now := services.leaderboard_current(built.study, judges="human"))["n_comparisons"] < 5:
        assert time.monotonic() < deadline + 30, "the refit did not land"
        time.sleep(0.25)
    assert now["status"] == "current" and now["refit"] is None
