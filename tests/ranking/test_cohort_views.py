"""Per-cohort boards in the studio page, the APIs and the CLI: what they show, who may see it."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Judgment
from completions.access import STUDY_ADMINS
from ranking import services
from ranking.services import cohorts as cohort_services
from tests.factories import StudyFactory
from tests.factories.cohorts import build_cohort_study
from tests.ranking.test_cohorts import scipy_fit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def study():
    study = build_cohort_study()
    # Its boards stored, as a refit leaves them: the pages read them and never fit.
    services.snapshot_refit_study(study_id=study.pk, trigger="nightly")
    return study


def _admin(client, name="lead", study=None):
    user = User.objects.create_user(name, password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    if study is not None:
        study.admins.add(user)
    client.force_login(user)
    return client


def _stored_split(study) -> dict[str, pd.DataFrame]:
    """The study's counted human judgments read straight from the table, split by cohort."""
    rows = Judgment.objects.filter(
        study=study, judge_kind="human", rater__flagged=False, quality_check=False
    ).values_list(
        "pair__completion_a__system__name",
        "pair__completion_b__system__name",
        "winner",
        "strength",
        "rater__cohort",
    )
    frame = pd.DataFrame(
        list(rows), columns=["system_a", "system_b", "winner", "strength", "cohort"]
    )
    frame["strength"] = frame["strength"].astype(float)
    return {label: part for label, part in frame.groupby("cohort")}


def test_cohort_boards_equal_independent_fits_of_the_stored_judgments_split_by_cohort(study):
    analysis = cohort_services.cohort_analysis(study)
    boards = {entry["cohort"]: entry for entry in analysis["cohorts"]}
    assert list(boards) == ["crowd", "clinician"]
    for cohort, part in _stored_split(study).items():
        reference = scipy_fit(part)
        ours = pd.Series({row["system"]: row["elo"] for row in boards[cohort]["systems"]})
        assert np.abs(ours - reference.reindex(ours.index)).max() < 0.5
        assert boards[cohort]["n_judgments"] == len(part)
    assert boards["clinician"]["systems"][0]["system"] == "gamma"
    assert boards["crowd"]["systems"][0]["system"] == "alpha"
    (between,) = analysis["between"]
    assert between["n_items"] > 20 and -1 <= between["cohen_kappa"] <= 1
    assert analysis["n_judgments_without_cohort"] == 0


def test_the_page_shows_each_cohorts_board_and_their_agreement(client, study):
    _admin(client, study=study)
    response = client.get(reverse("ranking:cohorts", args=[study.slug]))
    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-cohort="crowd"' in html and 'data-cohort="clinician"' in html
    assert "crowd vs clinician" in html and "Cohen" in html
    one = client.get(reverse("ranking:cohorts", args=[study.slug]), {"cohort": "clinician"})
    assert 'data-cohort="clinician"' in one.content.decode()
    assert 'data-cohort="crowd"' not in one.content.decode()
    bad = client.get(reverse("ranking:cohorts", args=[study.slug]), {"cohort": "nobody"})
    assert bad.status_code == 400
    # The whole leaderboard links to the page.
    page = client.get(reverse("ranking:leaderboard", args=[study.slug])).content.decode()
    assert reverse("ranking:cohorts", args=[study.slug]) in page


@pytest.mark.parametrize("name", ["ranking:cohorts", "api:cohorts"])
def test_only_the_studys_admins_see_cohort_boards(client, study, name):
    url = reverse(name, args=[study.slug])
    assert client.get(url).status_code in (302, 401, 403)
    _admin(client, "lead", study=study)
    assert client.get(url).status_code == 200
    client.logout()
    _admin(client, "someone-else", study=StudyFactory(slug="other"))
    assert client.get(url).status_code in (403, 404)


@pytest.mark.parametrize("name", ["api:leaderboard"])
def test_the_leaderboard_api_takes_a_cohort_filter(client, study, name):
    _admin(client, study=study)
    url = reverse(name, args=[study.slug])
    board = client.get(url, {"cohort": "clinician"}).json()
    assert board["cohort"] == "clinician" and board["judges"] == "human"
    assert board["systems"][0]["system"] == "gamma"
    assert [(r["left"], r["right"]) for r in board["between"]] == [("crowd", "clinician")]
    unknown = client.get(url, {"cohort": "nobody"})
    assert unknown.status_code == 400 and "crowd, clinician" in unknown.json()["cohort"][0]
    assert client.get(url, {"cohort": "crowd", "judges": "llm"}).status_code == 400


def test_the_first_cohorts_api_address_redirects_to_the_api(client, study):
    old = reverse("ranking:api-leaderboard-cohorts", args=[study.slug])
    response = client.get(old, {"subset": "all"})
    assert response.status_code == 301
    assert response["Location"] == reverse("api:cohorts", args=[study.slug]) + "?subset=all"


def test_the_between_cohort_endpoint_is_in_the_api_schema(client, study):
    _admin(client, study=study)
    schema = client.get(reverse("api:schema"), {"format": "json"}).json()
    paths = schema["paths"]
    assert any(p.endswith("/leaderboard/cohorts/") for p in paths)
    leaderboard = next(v for p, v in paths.items() if p.endswith("/leaderboard/") and "api" in p)
    names = {param["name"] for param in leaderboard["get"]["parameters"]}
    assert "cohort" in names


def test_a_cohort_change_in_settings_or_new_judgments_refreshes_the_cached_boards(study):
    first = cohort_services.cohort_analysis(study)
    study.cohort_labels = "student"
    study.save(update_fields=["cohort_labels"])
    second = cohort_services.cohort_analysis(study)
    assert [e["cohort"] for e in first["cohorts"]] == ["crowd", "clinician"]
    assert [e["cohort"] for e in second["cohorts"]] == ["crowd", "clinician", "student"]


def test_the_judgments_api_filters_by_cohort_and_exports_the_column(client, study):
    _admin(client, study=study)
    url = reverse("api:judgments", args=[study.slug])
    rows = client.get(url, {"cohort": "clinician", "page_size": 1000}).json()["results"]
    assert rows and {r["cohort"] for r in rows} == {"clinician"}
    llm = client.get(url, {"judge_kind": "llm", "page_size": 5}).json()["results"]
    assert {r["cohort"] for r in llm} == {None}


def test_the_leaderboard_command_prints_one_cohorts_board(study):
    out = StringIO()
    call_command("leaderboard", study=study.slug, cohort="clinician", stdout=out)
    text = out.getvalue()
    assert "cohort=clinician" in text and "vs crowd:" in text
    first = text.splitlines()[3]
    assert "gamma" in first
    out = StringIO()
    call_command("leaderboard", study=study.slug, cohort="crowd", format="json", stdout=out)
    assert json.loads(out.getvalue())["systems"][0]["system"] == "alpha"
    with pytest.raises(CommandError, match="no cohort 'nobody'"):
        call_command("leaderboard", study=study.slug, cohort="nobody")
    with pytest.raises(CommandError, match="--from-snapshot"):
        call_command("leaderboard", study=study.slug, cohort="crowd", from_snapshot=True)
