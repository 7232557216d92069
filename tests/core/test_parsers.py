"""The API's JSON parser: a body nested too deep is a 400 that says so, never a 500."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.test import APIClient

from core.parsers import DEPTH_MESSAGE, MAX_JSON_DEPTH, json_depth
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs_url():
    study = StudyFactory(slug="deep")
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("root", password="pw"))
    return client, reverse("api:llm-runs", args=[study.slug])


@pytest.mark.parametrize("levels", [100_000, MAX_JSON_DEPTH + 1])
def test_a_json_body_nested_too_deep_is_a_400_with_the_reason(runs_url, levels):
    client, url = runs_url
    body = '{"kind": "judge", "endpoints": ' + "[" * levels + "]" * levels + "}"
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"detail": DEPTH_MESSAGE}


def test_a_body_within_the_limit_reaches_the_view(runs_url):
    client, url = runs_url
    levels = MAX_JSON_DEPTH - 2
    body = '{"kind": "judge", "endpoints": ' + "[" * levels + "]" * levels + "}"
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 400  # the view's own answer: no such endpoints
    assert response.json() != {"detail": DEPTH_MESSAGE}


def test_json_depth_counts_lists_and_objects():
    assert json_depth(3) == 0
    assert json_depth([]) == 1
    assert json_depth({"a": [1, {"b": []}], "c": 2}) == 4
    assert json_depth([[[]], []]) == 3
