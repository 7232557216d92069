"""No fit in a request: every board a page shows (the whole board, by category, by cohort) is
read from a snapshot the refit stored; with in-process Celery the refit runs after the response.

Timing-free: a page answered before the refit shows "computing"/"updating" and the snapshot
count it saw; a value planted in a stored section shows that the page read it, not a fit.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.urls import reverse

from completions.access import STUDY_ADMINS
from ranking import services
from ranking.models import LeaderboardSnapshot, RefitJob
from ranking.services import cohorts as cohort_services
from tests.factories.cohorts import build_cohort_study
from tests.factories.ranking import X, add_known_verdicts, build_study, judge

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("few_judgments_shown")]


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def built():
    built = build_study(slug="sections")
    for i, context in enumerate(built.contexts):
        context.emotion_type = "anxiety" if i % 2 else "sadness"
        context.save(update_fields=["emotion_type"])
    add_known_verdicts(built)
    return built


@pytest.fixture
def admin_client(client):
    user = User.objects.create_user("lead", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    client.force_login(user)
    return client


def _page(client, slug: str, **query: str):
    return client.get(reverse("ranking:leaderboard", args=[slug]), query)


def test_the_first_read_answers_before_the_refit_which_runs_after_the_response(built, admin_client):
    study = built.study
    assert LeaderboardSnapshot.objects.filter(study=study).count() == 0
    response = _page(admin_client, study.slug, judges="human")
    assert response.status_code == 200
    assert response.context["result"]["status"] == "computing"
    assert response.context["result"]["systems"] == []  # the response carried no fit
    # ...and the refit ran once the response was sent: the three default boards are stored.
    assert LeaderboardSnapshot.objects.filter(study=study).count() == 3
    again = _page(admin_client, study.slug, judges="human")
    assert again.context["result"]["status"] == "current"
    assert [row["system"] for row in again.context["result"]["systems"]][0] == X


def test_a_read_after_new_judgments_serves_the_old_snapshot_as_updating(built, admin_client):
    study = built.study
    old = services.snapshot_refit_study(study_id=study.pk, trigger="command")
    judge(built, 3, X, judge="late-llm", kind="llm", strength=3, strength_max=5)
    response = _page(admin_client, study.slug, judges="all")
    result = response.context["result"]
    assert result["status"] == "updating"
    assert result["snapshot"]["id"] in {s.pk for s in old}
    assert 'data-status="updating"' in response.content.decode()
    newest = LeaderboardSnapshot.objects.filter(study=study, judges="all").latest()
    assert newest.pk not in {s.pk for s in old}  # refitted after the response
    assert newest.n_judgments == result["n_judgments"] + 1


def test_category_boards_are_read_from_the_snapshot_not_fitted(built, admin_client):
    study = built.study
    services.snapshot_refit_study(study_id=study.pk, trigger="command")
    snapshot = LeaderboardSnapshot.objects.get(study=study, judges="human")
    assert set(snapshot.sections["by"]) == {"emotion_type", "problem_type"}
    assert set(snapshot.sections["by"]["emotion_type"]["by"]) == {"anxiety", "sadness"}
    # A value no fit can give: the page shows it only if it reads the stored section.
    snapshot.sections["by"]["emotion_type"]["by"]["sadness"]["n_contexts"] = 4321
    snapshot.save(update_fields=["sections"])
    jobs = RefitJob.objects.count()
    response = _page(admin_client, study.slug, judges="human", by="emotion_type")
    assert response.status_code == 200
    assert response.context["result"]["by"]["sadness"]["n_contexts"] == 4321
    assert "4321" in response.content.decode()
    assert RefitJob.objects.count() == jobs  # nothing asked of a worker either
    assert LeaderboardSnapshot.objects.filter(study=study).count() == 3


def test_a_snapshot_without_the_asked_split_says_updating_and_the_refit_adds_it(
    built, admin_client
):
    study = built.study
    services.snapshot_refit_study(study_id=study.pk, trigger="command")
    LeaderboardSnapshot.objects.filter(study=study).update(sections={})  # stored before splits
    response = _page(admin_client, study.slug, judges="human", by="emotion_type")
    result = response.context["result"]
    assert result["by_pending"] is True and result["by"] == {}
    assert result["status"] == "updating"
    snapshot = LeaderboardSnapshot.objects.get(study=study, judges="human")
    assert set(snapshot.sections["by"]["emotion_type"]["by"]) == {"anxiety", "sadness"}
    shown = _page(admin_client, study.slug, judges="human", by="emotion_type").context["result"]
    assert "by_pending" not in shown and set(shown["by"]) == {"anxiety", "sadness"}


def test_the_cohort_page_reads_the_cohort_boards_stored_with_the_human_snapshot(client):
    study = build_cohort_study()
    user = User.objects.create_user("lead2", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    study.admins.add(user)
    client.force_login(user)
    url = reverse("ranking:cohorts", args=[study.slug])
    first = client.get(url)
    assert first.context["analysis"]["status"] == "computing"
    assert first.context["analysis"]["cohorts"] == []
    snapshot = LeaderboardSnapshot.objects.get(study=study, judges="human")  # after the response
    entries = snapshot.sections["cohorts"]["cohorts"]
    assert [e["cohort"] for e in entries] == ["crowd", "clinician"]
    entries[0]["n_judgments"] = 98765
    snapshot.save(update_fields=["sections"])
    shown = client.get(url)
    assert shown.context["analysis"]["status"] == "current"
    assert shown.context["analysis"]["cohorts"][0]["n_judgments"] == 98765
    assert "98765" in shown.content.decode()


def test_outside_a_request_the_cohort_analysis_is_fitted_at_once():
    study = build_cohort_study()
    analysis = cohort_services.cohort_analysis(study)
    assert analysis["status"] == "current"
    assert [e["cohort"] for e in analysis["cohorts"]] == ["crowd", "clinician"]
