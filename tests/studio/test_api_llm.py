"""LLM runs through the API: plan, launch, status, cancel (against the fake provider server)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Judgment
from llm.executor import run_execute
from llm.models import Run
from tests.factories.llm import endpoint, study_with_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(fake_llm):
    study = study_with_pairs(n_contexts=1)
    endpoint(fake_llm, "judge-a", family="mistral")
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("root", password="pw"))
    return study, client


def test_a_judge_run_is_planned_launched_executed_and_reported(api):
    study, client = api
    url = reverse("api:llm-runs", args=[study.slug])
    created = client.post(url, {"kind": "judge", "endpoints": ["judge-a"]}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["status"] == "planned" and body["units"] > 0 and body["judges"] == ["judge-a"]
    assert body["plan"]["est_tokens_in"] > 0 and not Judgment.objects.exists()  # nothing sent
    run_id = body["run"]
    launched = client.post(reverse("api:llm-launch", args=[study.slug, run_id]))
    assert launched.status_code == 202 and launched.json()["status"] == "running"
    assert client.post(reverse("api:llm-launch", args=[study.slug, run_id])).status_code == 409
    run_execute(run_id)  # what the worker does once the launch commits
    status = client.get(reverse("api:llm-run", args=[study.slug, run_id])).json()
    assert status["status"] == "finished" and status["done"] == status["units"]
    assert Judgment.objects.filter(study=study, judge="judge-a").count() == status["done"]
    listed = client.get(url).json()["results"]
    assert [r["run"] for r in listed] == [run_id]
    assert client.post(reverse("api:llm-cancel", args=[study.slug, run_id])).status_code == 409


def test_a_planned_run_can_be_cancelled_and_bad_requests_say_why(api):
    study, client = api
    url = reverse("api:llm-runs", args=[study.slug])
    run_id = client.post(url, {"kind": "judge", "endpoints": ["judge-a"]}, format="json").json()[
        "run"
    ]
    cancelled = client.post(reverse("api:llm-cancel", args=[study.slug, run_id]))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert Run.objects.get(pk=run_id).status == "cancelled"
    bad = client.post(url, {"kind": "judge", "endpoints": ["nope"]}, format="json")
    assert bad.status_code == 400 and "unknown endpoint(s): nope" in str(bad.json())
    bad_kind = client.post(url, {"kind": "paint", "endpoints": ["judge-a"]}, format="json")
    assert bad_kind.status_code == 400
    other = study_with_pairs(n_contexts=1)
    assert client.get(reverse("api:llm-run", args=[other.slug, run_id])).status_code == 404


def test_an_adversarial_run_takes_its_profile_and_refuses_without_one(api, fake_llm):
    study, client = api
    url = reverse("api:llm-runs", args=[study.slug])
    endpoint(fake_llm, "rewriter", family="mistral")
    missing = client.post(url, {"kind": "adversarial", "endpoints": ["rewriter"]}, format="json")
    assert missing.status_code == 400 and "profile" in missing.json()
    two = client.post(
        url,
        {"kind": "adversarial", "endpoints": ["rewriter", "judge-a"], "profile": "Mid-Spike"},
        format="json",
    )
    assert two.status_code == 400 and "exactly one rewriting endpoint" in str(two.json())
    assert not Run.objects.filter(kind="adversarial").exists()  # a refused plan leaves no run
    made = client.post(
        url,
        {"kind": "adversarial", "endpoints": ["rewriter"], "profile": "Mid-Spike", "contexts": 1},
        format="json",
    )
    assert made.status_code == 201
    run = Run.objects.get(pk=made.json()["run"])
    assert run.params["profile"] == "Mid-Spike" and run.params["contexts"] == 1
