from __future__ import annotations

import pytest

from heart_site.celery import app
from ranking import tasks
from ranking.models import LeaderboardSnapshot
from tests.factories import StudyFactory
from tests.ranking.study_builder import add_known_verdicts, build_study

pytestmark = pytest.mark.django_db


def test_refit_study_stores_three_snapshots_and_is_safe_to_run_twice():
    built = build_study()
    add_known_verdicts(built)
    first = tasks.refit_study.delay(built.study.pk, "manual").get()
    second = tasks.refit_study.delay(built.study.pk, "nightly").get()
    assert first == second
    assert LeaderboardSnapshot.objects.filter(study=built.study).count() == 3


def test_refit_all_studies_refits_active_studies_only():
    active = build_study()
    add_known_verdicts(active)
    inactive = StudyFactory(status="closed")
    refitted = tasks.refit_all_studies.delay().get()
    assert active.study.pk in refitted
    assert inactive.pk not in refitted
    assert not LeaderboardSnapshot.objects.filter(study=inactive).exists()
    assert LeaderboardSnapshot.objects.filter(study=active.study, trigger="nightly").count() == 3


def test_ranking_tasks_go_to_the_refit_queue_and_beat_names_the_nightly_job():
    route = app.amqp.router.route({}, tasks.refit_study.name)
    assert route["queue"].name == "refit"
    schedule = app.conf.beat_schedule["nightly-refit"]
    assert schedule["task"] == tasks.refit_all_studies.name == "ranking.tasks.refit_all_studies"
