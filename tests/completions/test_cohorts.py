"""Cohorts are set by the entry link: signed cohort links, a named Prolific parameter, the
default crowd; refused clearly when forged or unknown; shown with their sizes in the studio."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Rater
from completions import cohorts
from studio.forms import StudyEditForm
from tests.factories import RaterFactory, StudyFactory
from tests.factories.annotation import build_study
from tests.factories.writing import build_writing_study
from writing.models import Writer
from writing.services import writing_settings

pytestmark = pytest.mark.django_db


def _rater_url(name, study):
    return reverse(f"annotation:{name}", kwargs={"invite_token": study.invite_token})


def _join(client, study, query: str = "") -> Rater | None:
    """Follow the invitation link as a rater does: entry, then consent where it leads."""
    response = client.get(_rater_url("entry", study) + query)
    if response.status_code != 302:
        return None
    client.post(response.url, {"agree": "on"})
    return Rater.objects.filter(study=study).order_by("-id").first()


def test_a_plain_invitation_link_makes_a_crowd_rater(client):
    study = build_study(quality_check_rate=0)
    assert _join(client, study).cohort == "crowd"


def test_a_clinician_link_records_a_clinician_rater(client):
    study = build_study(quality_check_rate=0)
    link = dict(cohorts.cohort_links(study, _rater_url("entry", study)))["clinician"]
    response = client.get(link)
    assert "cohort=clinician%3A" in response.url or "cohort=clinician:" in response.url
    client.post(response.url, {"agree": "on"})
    assert Rater.objects.get(study=study).cohort == "clinician"


def test_a_study_label_link_and_a_prolific_parameter_set_the_cohort(client):
    study = build_study(quality_check_rate=0)
    study.cohort_labels = "peer-supporter"
    study.cohort_parameter = "COHORT"
    study.save()
    signed = cohorts.cohort_link_value(study, "peer-supporter")
    assert _join(client, study, f"?cohort={signed}").cohort == "peer-supporter"
    other = client.__class__()
    query = "?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X&COHORT=Clinician"
    rater = _join(other, study, query)
    assert rater.external_id == "P1" and rater.cohort == "clinician"


@pytest.mark.parametrize(
    "query",
    [
        "?cohort=clinician",  # unsigned: anyone could type it
        "?cohort=clinician:forged",
        "?COHORT=martian",  # not a cohort of the study
    ],
)
def test_a_forged_or_unknown_cohort_is_refused_clearly_and_records_nothing(client, query):
    study = build_study(quality_check_rate=0)
    study.cohort_parameter = "COHORT"
    study.save()
    response = client.get(_rater_url("entry", study) + query)
    assert response.status_code == 400
    assert "This link is not valid" in response.content.decode()
    posted = client.post(_rater_url("consent", study) + query, {"agree": "on"})
    assert posted.status_code == 400
    assert not Rater.objects.exists()


def test_a_link_signed_for_another_study_is_refused(client):
    study, other = build_study(quality_check_rate=0), StudyFactory()
    signed = cohorts.cohort_link_value(other, "clinician")
    response = client.get(_rater_url("entry", study) + f"?cohort={signed}")
    assert response.status_code == 400 and "does not belong" in response.content.decode()


def test_a_returning_rater_keeps_their_cohort(client):
    study = build_study(quality_check_rate=0)
    rater = _join(client, study)
    signed = cohorts.cohort_link_value(study, "clinician")
    client.get(_rater_url("entry", study) + f"?cohort={signed}")
    rater.refresh_from_db()
    assert rater.cohort == "crowd" and Rater.objects.count() == 1


def test_writer_links_set_the_writers_cohort(client):
    study = build_writing_study(n_contexts=1)
    invite = writing_settings(study).invite_token
    client.get(f"/w/{invite}/")
    client.post(f"/w/{invite}/consent/", {"agree": "on"})
    assert Writer.objects.get().cohort == "crowd"
    other = client.__class__()
    signed = cohorts.cohort_link_value(study, "clinician")
    response = other.get(f"/w/{invite}/?cohort={signed}")
    other.post(response.url, {"agree": "on"})
    assert Writer.objects.order_by("-id").first().cohort == "clinician"
    panel = client.__class__()
    study.cohort_parameter = "COHORT"
    study.save()
    panel.get(f"/w/{invite}/?PROLIFIC_PID=W9&STUDY_ID=S&SESSION_ID=X&COHORT=clinician")
    assert Writer.objects.get(external_id="W9").cohort == "clinician"
    forged = client.__class__().get(f"/w/{invite}/?cohort=clinician:nope")
    assert forged.status_code == 400 and b"This link is not valid" in forged.content
    assert Writer.objects.count() == 3


def test_the_studio_shows_cohort_links_and_sizes(client):
    study = build_study(quality_check_rate=0)
    study.cohort_labels = "student"
    study.save()
    RaterFactory(study=study, pseudonym="r-c1", cohort="clinician", consented_at=None)
    RaterFactory(study=study, pseudonym="r-c2", cohort="clinician", consented_at=None)
    RaterFactory(study=study, pseudonym="r-w1", consented_at=None)
    boss = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(boss)
    html = client.get(reverse("studio:raters", args=[study.slug])).content.decode()
    assert '<th scope="row">clinician</th>\n        <td>2</td>' in html
    assert '<th scope="row">crowd</th>\n        <td>1</td>' in html
    assert '<th scope="row">student</th>\n        <td>0</td>' in html
    assert cohorts.cohort_link_value(study, "student") in html
    overview = client.get(reverse("studio:overview", args=[study.slug])).content.decode()
    assert cohorts.cohort_link_value(study, "clinician") in overview
    writers = client.get(reverse("writers:review", args=[study.slug])).content.decode()
    assert "Link of the clinician cohort" in writers


def test_the_settings_form_validates_cohort_labels_and_parameter():
    study = StudyFactory()
    data = {**{f: getattr(study, f) for f in StudyEditForm.Meta.fields if f != "family_aliases"}}
    data.update(cohort_labels="Peer-Supporter, student,crowd", cohort_parameter="COHORT")
    data = {k: ("" if v is None else v) for k, v in data.items()}
    form = StudyEditForm(data, instance=study)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["cohort_labels"] == "peer-supporter, student"
    bad = StudyEditForm(data | {"cohort_labels": "no spaces please"}, instance=study)
    assert not bad.is_valid() and "cohort label" in str(bad.errors["cohort_labels"])
    clash = StudyEditForm(data | {"cohort_parameter": "cohort"}, instance=study)
    assert not clash.is_valid()
