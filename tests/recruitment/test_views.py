"""The studio's Prolific page and the overview's costs, through the pages (study admins only,
CSRF on every form), against the fake Prolific server."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.models import Pair
from llm.models import Run
from recruitment.models import ProlificAction, ProlificSettings
from tests.factories.labelling import user

from .conftest import TOKEN

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")


@pytest.fixture
def admin_client(client, admin):
    client.force_login(admin)
    return client


def test_only_a_study_admin_of_this_study_reaches_the_page(client, people):
    url = reverse("recruitment:prolific", args=[people.slug])
    assert client.get(url).status_code == 302  # to the login page
    other = user("other", admin=True)  # a study admin, but this study lists another one
    people.admins.add(user("owner", admin=True))
    client.force_login(other)
    assert client.get(url).status_code == 403
    run = reverse("recruitment:run", args=[people.slug])
    assert client.post(run, {"step": "pay", "dry_run": "on"}).status_code == 403


def test_every_form_needs_the_csrf_token(admin, people):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(admin)
    for name in ("settings", "token", "run"):
        response = browser.post(reverse(f"recruitment:{name}", args=[people.slug]), {})
        assert response.status_code == 403, name


def test_the_token_is_saved_encrypted_and_never_shown(admin_client, people):
    url = reverse("recruitment:token", args=[people.slug])
    response = admin_client.post(url, {"token": TOKEN}, follow=True)
    html = response.content.decode()
    assert "Prolific token stored encrypted" in html and TOKEN not in html
    assert "stored encrypted …6789" in html
    assert admin_client.post(url, {"token": "has space"}).status_code == 422


def test_settings_then_a_dry_run_then_publishing_from_the_page(admin_client, people, fake_prolific):
    admin_client.post(reverse("recruitment:token", args=[people.slug]), {"token": TOKEN})
    form = {
        "currency": "GBP", "hourly_rate": "10.00", "estimated_minutes": "12", "places": "30",
        "completed_action": "AUTOMATICALLY_APPROVE", "participant_group": "on",
        "bonus_per_rater": "0.40", "bonus_per_writing": "0",
    }  # fmt: skip
    response = admin_client.post(reverse("recruitment:settings", args=[people.slug]), form)
    assert response.status_code == 302
    assert ProlificSettings.objects.get(study=people).reward_cents == 200
    run = reverse("recruitment:run", args=[people.slug])

    html = admin_client.post(run, {"step": "publish", "dry_run": "on"}).content.decode()
    assert "Dry run of publish: nothing was sent" in html
    assert "AUTOMATICALLY_APPROVE, ADD_TO_PARTICIPANT_GROUP" in html
    assert fake_prolific.calls() == []

    response = admin_client.post(run, {"step": "publish"}, follow=True)
    assert "Publish done" in response.content.decode()
    assert ("POST", "/api/v1/studies/") in fake_prolific.api_calls()
    response = admin_client.post(run, {"step": "publish"}, follow=True)
    assert "already published" in response.content.decode()  # said, not a server error


def test_the_overview_shows_what_the_study_costs_and_a_projection(admin_client, people):
    ProlificSettings.objects.create(
        study=people, hourly_rate=Decimal("12.00"), bonus_per_rater=Decimal("0.50")
    )
    Run.objects.create(study=people, kind="judge", status="running", cost=1.25, budget_usd=5.0)
    ProlificAction.objects.create(
        study=people, participant_id="PID-completed", kind="BONUS", amount=Decimal("0.50"),
        status="done",
    )  # fmt: skip
    Pair.objects.filter(pk=Pair.objects.filter(study=people).first().pk).update(n_judgments=5)
    Pair.objects.filter(pk=Pair.objects.filter(study=people).last().pk).update(n_judgments=4)
    html = admin_client.get(reverse("studio:overview", args=[people.slug])).content.decode()
    # Minutes from consent to the last answer, or to the stop: 12 (completed) + 6 (stopped)
    # + 30 + 30 (the two excluded raters answered checks just now) = 78 at 12.00 an hour.
    assert "78.0 minutes worked × 12.00 GBP an hour = 15.60" in html
    # Bonuses due: 0.50 each to the two approved raters, 6 minutes' pay (1.20) to the one who
    # stopped; 0.50 of them paid.
    assert 'id="cost-people-spent">16.10<' in html  # 15.60 + 0.50 paid
    assert 'id="cost-people-committed">1.70<' in html  # 2.20 due - 0.50 paid
    assert 'id="cost-llm-spent">1.25<' in html and 'id="cost-llm-committed">3.75<' in html
    # 9 of 45 judgments done: (16.10 + 1.70) / 0.2
    assert 'id="cost-people-projected">89.00<' in html
