"""Labeller pages (blinded) and the study admin's strategy, validation and report pages."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from labelling import services
from labelling.models import Adjudication, HumanLabel
from tests.factories.labelling import SYSTEM_NAMES, build_labelled_study, label_all, user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def study():
    return build_labelled_study()


def _login(client, account):
    client.force_login(account)
    return client


def test_two_labellers_label_a_sample_without_seeing_who_wrote_it(client, study):
    sample = services.sample_create(study=study, size=3)
    url = reverse("labelling:next", args=[sample.token])
    for name in ("ann", "bob"):
        _login(client, user(name, labeller=True))
        home = client.get(reverse("labelling:home"))
        assert sample.name in home.content.decode()
        for _ in range(3):
            page = client.get(url)
            body = page.content.decode()
            assert "Label a response" in body and "Reflective Statements" in body
            for secret in (*SYSTEM_NAMES, "gpt", "claude"):
                assert secret not in body
            item = page.context["form"].initial["item"]
            response = client.post(url, {"item": item, "present": ["Affirmation"]})
            assert response.status_code == 302
        assert "All done" in client.get(url).content.decode()
        client.logout()
    assert HumanLabel.objects.filter(item__sample=sample).count() == 6


def test_a_double_submit_keeps_one_label_and_says_so(client, study):
    sample = services.sample_create(study=study, size=2)
    _login(client, user("ann", labeller=True))
    url = reverse("labelling:next", args=[sample.token])
    item = client.get(url).context["form"].initial["item"]
    client.post(url, {"item": item, "present": []})
    response = client.post(url, {"item": item, "present": ["Affirmation"]}, follow=True)
    assert "already labelled" in response.content.decode()
    assert HumanLabel.objects.count() == 1


def test_labeller_pages_are_for_labellers_only(client, study):
    sample = services.sample_create(study=study, size=1)
    url = reverse("labelling:next", args=[sample.token])
    assert client.get(url).status_code == 302  # to the login page
    _login(client, user("someone"))
    assert client.get(url).status_code == 403
    assert client.get(reverse("labelling:home")).status_code == 403


def test_study_admin_pages_refuse_labellers(client, study):
    sample = services.sample_create(study=study, size=1)
    _login(client, user("ann", labeller=True))
    for url in (
        reverse("ranking:strategies", args=[study.slug]),
        reverse("labelling:sample", args=[study.slug, sample.pk]),
        reverse("labelling:sample-report", args=[study.slug, sample.pk]),
    ):
        assert client.get(url).status_code == 403
    assert client.post(reverse("labelling:sample-new", args=[study.slug]), {}).status_code == 403


def test_an_admin_samples_adjudicates_and_reads_the_f1_table(client, study):
    label_all(study, lambda c: ["Reflective Statements"])
    _login(client, user("lead", admin=True))
    response = client.post(
        reverse("labelling:sample-new", args=[study.slug]),
        {"size": 2, "labellers_per_item": 2, "seed": 0},
    )
    sample = study.label_samples.get()
    assert response.url == reverse("labelling:sample", args=[study.slug, sample.pk])
    first, second = sample.items.all()
    ann, bob = user("ann", labeller=True), user("bob", labeller=True)
    for item in (first, second):
        services.human_label_submit(item=item, labeller=ann, present=["Reflective Statements"])
    services.human_label_submit(item=first, labeller=bob, present=["Reflective Statements"])
    services.human_label_submit(item=second, labeller=bob, present=["Affirmation"])
    page = client.get(reverse("labelling:sample", args=[study.slug, sample.pk])).content.decode()
    assert "Disputed: Affirmation, Reflective Statements" in page
    client.post(
        reverse("labelling:adjudicate", args=[study.slug, sample.pk, second.token]),
        {"present": ["Reflective Statements"]},
    )
    assert Adjudication.objects.get(item=second).present == ["Reflective Statements"]
    report = client.get(reverse("labelling:sample-report", args=[study.slug, sample.pk])).json()
    assert report["n_items"] == 2 and report["macro_f1"] == pytest.approx(1.0)
    page = client.get(reverse("labelling:sample", args=[study.slug, sample.pk])).content.decode()
    assert 'id="f1-table"' in page and "macro F1 1.000" in page


def test_a_bad_sample_request_is_explained(client, study):
    _login(client, user("lead", admin=True))
    response = client.post(
        reverse("labelling:sample-new", args=[study.slug]),
        {"size": 2, "labellers_per_item": 1, "seed": 0},
        follow=True,
    )
    assert "Sample not created" in response.content.decode()
    assert not study.label_samples.exists()
