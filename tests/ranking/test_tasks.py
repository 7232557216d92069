from __future__ import annotations

import pytest

from heart_site.celery import app
from ranking import tasks
from ranking.models import LeaderboardSnapshot
from tests.factories import StudyFactory
from tests.factories.ranking import add_known_verdicts, build_study

pytestmark = pytest.mark.django_db


def test_refit_study_stores_three_snapshots_and_is_safe_to_run_twice():
    built = build_study()
    add_known_verdicts(built)
    first = tasks.refit_study(built.study.pk, "manual")
    second = tasks.refit_study(built.study.pk, "nightly")
    assert first == second
    assert LeaderboardSnapshot.objects.filter(study=built.study).count() == 3


def test_refit_all_studies_refits_active_studies_only(django_capture_on_commit_callbacks):
    active = build_study()
    add_known_verdicts(active)
    inactive = StudyFactory(status="closed")
    with django_capture_on_commit_callbacks(execute=True):  # eager: each job runs at once
        refitted = tasks.refit_all_studies()
    assert active.study.pk in refitted
    assert inactive.pk not in refitted
    assert not LeaderboardSnapshot.objects.filter(study=inactive).exists()
    assert LeaderboardSnapshot.objects.filter(study=active.study, trigger="nightly").count() == 3


def test_ranking_tasks_go_to_the_refit_queue_and_beat_names_the_nightly_job():
    for task in (tasks.refit_study, tasks.refit_job_run):
        assert app.amqp.router.route({}, task.name)["queue"].name == "refit"
    schedule = app.conf.beat_schedule["nightly-refit"]
    assert schedule["task"] == tasks.refit_all_studies.name == "ranking.tasks.refit_all_studies"
