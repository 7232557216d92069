"""The strategy analyses read the chosen labels and say which they use."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from ranking import services
from tests.factories.labelling import build_labelled_study, label_all, user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def _by_family(section: dict, strategy: str) -> dict:
    row = section["usage"][section["strategies"].index(strategy)]
    return dict(zip(section["families"], row, strict=True))


def test_without_a_label_set_the_analyses_use_the_completions_metadata():
    study = build_labelled_study()
    analysis = services.strategy_analysis(study)
    assert analysis["labels"]["kind"] == "metadata"
    # "Questions" is not one of the paper's 15: it never joins their table, it gets its own.
    assert analysis["strategies"]["strategies"] == []
    assert analysis["strategies"]["other"]["strategies"] == ["Questions"]
    assert "another taxonomy" in analysis["strategies"]["other"]["taxonomy"]


def test_the_latest_finished_label_set_is_the_default_and_is_named():
    study = build_labelled_study()
    label_all(study, lambda c: ["Affirmation"], name="old run")
    newest = label_all(
        study,
        lambda c: ["Reflective Statements"] + (["Chit Chat"] if c.system.family == "gpt" else []),
        name="new run",
    )
    analysis = services.strategy_analysis(study)
    assert analysis["labels"]["label_set"] == newest.pk
    assert "new run" in analysis["labels"]["description"]
    section = analysis["strategies"]
    assert _by_family(section, "Chit Chat") == {"claude": 0.0, "gpt": 100.0, "human": 0.0}
    assert section["spread"]["gpt"]["mean_unique"] == 2.0
    assert section["spread"]["claude"]["coverage"] == 1
    # Another set or the metadata on request.
    assert services.strategy_analysis(study, labels="metadata")["labels"]["kind"] == "metadata"


def test_the_leaderboard_result_names_its_labels_and_follows_a_new_set():
    study = build_labelled_study()
    before = services.leaderboard_current(study)
    assert before["strategies"]["source"]["kind"] == "metadata"
    label_set = label_all(study, lambda c: ["Affirmation"])
    after = services.leaderboard_current(study)
    assert after["strategies"]["source"]["label_set"] == label_set.pk
    assert after["strategies"]["strategies"] == ["Affirmation"]


def test_the_strategies_page_json_and_heatmap(client):
    study = build_labelled_study()
    label_set = label_all(study, lambda c: ["Affirmation"])
    client.force_login(user("lead", admin=True))
    page = client.get(reverse("ranking:strategies", args=[study.slug])).content.decode()
    assert "Labels used:" in page and label_set.name in page and "heatmap.svg" in page
    data = client.get(
        reverse("ranking:strategies-json", args=[study.slug]), {"labels": "metadata"}
    ).json()
    assert data["labels"]["kind"] == "metadata"
    svg = client.get(reverse("ranking:strategies-heatmap", args=[study.slug, "svg"]))
    assert svg["Content-Type"] == "image/svg+xml" and b"Affirmation" in svg.content
    bad = client.get(reverse("ranking:strategies", args=[study.slug]), {"labels": "999"})
    assert bad.status_code == 400
