"""With DEBUG on (the demo), the study's own pages are the pages production shows; only Django's
own debug pages (technical 404 / 500, shown because DEBUG is on) are replaced for visitors who
are not staff. Each request here runs with DEBUG on."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.test import Client
from django.urls import include, path

from tests.factories.annotation import build_study
from tests.factories.writing import build_writing_study
from writing.services import writing_settings

pytestmark = pytest.mark.django_db


def _boom(request):
    raise RuntimeError("kaboom: a secret detail of the server")


def _suspicious(request):
    raise SuspiciousOperation("a secret detail")


# This module doubles as a URLconf: the project's URLs plus two views that fail.
urlpatterns = [
    path("debug-test/boom/", _boom),
    path("debug-test/suspicious/", _suspicious),
    path("", include("heart_site.urls")),
]


@pytest.fixture(autouse=True)
def debug_on(settings):
    settings.DEBUG = True
    settings.ROOT_URLCONF = __name__


def _text(response) -> str:
    return response.content.decode()


def test_the_prolific_pages_of_raters_show_with_debug_on():
    only = build_study(slug="prolific-only", rater_entry="prolific")
    page = Client().get(f"/r/{only.invite_token}/")
    assert page.status_code == 403 and "Please start from Prolific" in _text(page)
    study = build_study(quality_check_rate=0)
    first = Client()
    query = "?PROLIFIC_PID=P1&STUDY_ID=S1&SESSION_ID=A"
    first.get(f"/r/{study.invite_token}/{query}", follow=True)
    first.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    other = Client().get(f"/r/{study.invite_token}/?PROLIFIC_PID=P1&STUDY_ID=S1&SESSION_ID=B")
    assert other.status_code == 403
    assert "This Prolific ID is already taking part" in _text(other)
    assert "You cannot open this page" not in _text(other)


def test_the_prolific_pages_of_writers_show_with_debug_on():
    study = build_writing_study(n_contexts=1, entry="prolific")
    invite = writing_settings(study).invite_token
    page = Client().get(f"/w/{invite}/consent/")
    assert page.status_code == 403 and "This study is open through Prolific" in _text(page)


def test_djangos_own_debug_pages_are_replaced_for_visitors():
    unknown = Client().get("/nowhere/at/all/")
    assert unknown.status_code == 404 and "URLconf" not in _text(unknown)
    assert "DEBUG = True" not in _text(unknown)
    client = Client(raise_request_exception=False)
    boom = client.get("/debug-test/boom/")
    assert boom.status_code == 500 and "kaboom" not in _text(boom)
    assert "Traceback" not in _text(boom) and "Something went wrong" in _text(boom)
    bad = client.get("/debug-test/suspicious/")
    assert bad.status_code == 400 and "a secret detail" not in _text(bad)


def test_staff_still_get_djangos_debug_pages_in_the_demo():
    admin = get_user_model().objects.create_superuser("boss", "b@example.org", "pw")
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    page = client.get("/debug-test/boom/")
    assert page.status_code == 500 and "kaboom" in _text(page)  # the traceback, for the admin


def test_an_expired_form_token_explains_what_to_do_with_debug_on():
    study = build_study()
    client = Client(enforce_csrf_checks=True)
    response = client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    assert response.status_code == 403 and "This page has expired" in _text(response)
