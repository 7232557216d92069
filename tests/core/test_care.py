"""The care extension point (core/care.py): one object registered when Django starts, and the
rater and writer pages whole without it."""

from __future__ import annotations

import pytest
from django.http import HttpResponse

from annotation.models import Rater
from care.hooks import SINCE_COOKIE, PageCare
from care.models import ContentNote
from core.care import ItemCare, NoCare, care_for_raters, care_for_writers, care_register
from tests.factories import ContentNoteFactory
from tests.factories.annotation import build_study
from tests.factories.writing import build_writing_study
from writing.services import writing_settings


@pytest.fixture
def without_care():
    """The pages as a project without the care app sees them; the registered one after."""
    registered = care_for_raters()
    care_register(NoCare())
    yield
    care_register(registered)


def test_care_registers_one_object_for_both_pages_when_django_starts():
    assert isinstance(care_for_raters(), PageCare)
    assert care_for_writers() is care_for_raters()


def test_the_default_adds_nothing_and_returns_the_response_as_it_was():
    care, response = NoCare(), HttpResponse("page")
    assert care.rater_gate(object()) is None and care.writer_stopped(object()) is False
    assert care.remember(response, None) is response and not response.cookies


def test_care_remembers_a_new_stretch_of_work_and_only_then():
    new = ItemCare(note="", skip_url="", stop_url="", break_url="", break_due=False, since=7)
    old = ItemCare(note="", skip_url="", stop_url="", break_url="", break_due=True, since=None)
    assert PageCare().remember(HttpResponse(), new).cookies[SINCE_COOKIE].value == "7"
    assert SINCE_COOKIE not in PageCare().remember(HttpResponse(), old).cookies


@pytest.mark.django_db
def test_without_care_a_rater_judges_with_no_note_and_no_care_links(client, without_care):
    study = build_study(n_contexts=1, quality_check_rate=0)
    ContentNoteFactory(context=study.contexts.get(), text="Mentions losing a job.")
    client.get(f"/r/{study.invite_token}/?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
    client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    assert Rater.objects.filter(study=study).exists()
    response = client.get(f"/r/{study.invite_token}/item/")
    html = response.content.decode()
    assert response.status_code == 200 and "Dialogue history" in html
    assert "Mentions losing a job." not in html and "Stop now" not in html
    assert SINCE_COOKIE not in response.cookies


@pytest.mark.django_db
def test_without_care_a_writer_writes_with_no_note_and_no_care_links(client, without_care):
    study = build_writing_study(n_contexts=1)
    ContentNoteFactory(context=study.contexts.get(), text="Mentions a divorce.")
    invite = writing_settings(study).invite_token
    client.get(f"/w/{invite}/")
    client.post(f"/w/{invite}/consent/", {"agree": "on"})
    response = client.get(f"/w/{invite}/write/")
    html = response.content.decode()
    assert response.status_code == 200 and ContentNote.objects.exists()
    assert "Mentions a divorce." not in html and "Stop now" not in html
    assert SINCE_COOKIE not in response.cookies
