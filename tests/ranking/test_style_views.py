"""The page and the API show the style-controlled board and the boards by category."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.urls import reverse

from completions.access import STUDY_ADMINS
from studio.demo import load_demo

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def demo():
    study = load_demo()
    study.style_features = ["length", "questions"]
    study.save(update_fields=["style_features"])
    return study


@pytest.fixture
def admin_client(client):
    user = User.objects.create_user("lead", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    client.force_login(user)
    return client


def test_the_page_shows_both_boards_side_by_side_with_the_coefficients(admin_client, demo):
    page = admin_client.get(reverse("ranking:leaderboard", args=[demo.slug])).content.decode()
    assert 'id="style-control"' in page
    assert "Uncontrolled" in page and "Style-controlled" in page
    assert "Length (words)" in page and "Questions asked" in page
    assert 'id="length-bias"' in page and "demo-judge-g" in page
    table = admin_client.get(reverse("ranking:table", args=[demo.slug, "style-control"]))
    lines = table.content.decode().splitlines()
    assert lines[0].startswith("system,elo_controlled,")
    assert any(line.startswith("coefficient:length,") for line in lines)


def test_without_style_features_the_page_says_how_to_turn_them_on(admin_client, demo):
    demo.style_features = []
    demo.save(update_fields=["style_features"])
    url = reverse("ranking:leaderboard", args=[demo.slug])
    assert admin_client.get(url).context["result"]["status"] == "updating"  # refit after it
    page = admin_client.get(url).content.decode()
    assert "Not fitted: this study's analysis settings choose no style features" in page


def test_the_page_splits_by_the_chosen_context_field(admin_client, demo):
    url = reverse("ranking:leaderboard", args=[demo.slug])
    page = admin_client.get(url, {"by": "emotion_type"}).content.decode()
    assert 'id="by-category"' in page and "By emotion_type" in page
    assert '<option value="problem_type">' in page
    assert admin_client.get(url, {"by": "colour"}).status_code == 400


@pytest.mark.parametrize("name", ["api:leaderboard"])  # the first address redirects here
def test_the_api_serves_the_controlled_view_and_the_split(admin_client, demo, name):
    url = reverse(name, args=[demo.slug])
    body = admin_client.get(url).json()
    assert set(body["style"]) == {"length", "questions"}
    assert {"coef", "ci_low", "ci_high"} <= set(body["style"]["length"])
    controlled = admin_client.get(url, {"style": "questions,length"}).json()
    assert controlled["systems"] == body["style_control"]["systems"]
    assert controlled["uncontrolled_systems"] == body["systems"]
    assert {"elo", "ci_low", "ci_high"} <= set(controlled["systems"][0]["uncontrolled"])
    refused = admin_client.get(url, {"style": "length"})
    assert refused.status_code == 400 and "control for length, questions" in refused.text
    assert admin_client.get(url, {"style": "colour"}).status_code == 400
    split = admin_client.get(url, {"by": "problem_type"}).json()
    assert split["by_key"] == "problem_type" and split["by"]
    assert "min_per_system" in split["by_threshold"]
    assert admin_client.get(url, {"by": "a__b"}).status_code == 400


def test_the_schema_documents_the_style_and_by_parameters(admin_client):
    schema = admin_client.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/studies/{slug}/leaderboard/"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"style", "by"} <= names
    result = schema["components"]["schemas"]["LeaderboardResult"]["properties"]
    assert {"style", "style_control", "by", "by_warnings"} <= set(result)
