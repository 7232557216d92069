"""What the board adds beside the Elo table: the predicted win matrix, one taxonomy per
strategy table, judge families through aliases, and how the page says what it shows."""

from __future__ import annotations

import pandas as pd
import pytest
from django.core.cache import cache
from django.urls import reverse

from ranking import report, services
from tests.factories.ranking import X, Y, add_known_verdicts, build_study, judge

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("ignore::ranking.bradley_terry.BradleyTerryWarning"),
]


@pytest.fixture
def built():
    cache.clear()
    built = build_study(slug="board")
    add_known_verdicts(built)
    # Its default boards stored, as a refit leaves them (pages and downloads never fit).
    services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")
    return built


def test_the_predicted_matrix_is_the_fits_win_probability(built):
    result = services.leaderboard_compute(built.study, judges="human", weights="none", ci=None)
    matrix = result["win_matrix"]
    assert matrix["systems"] == [X, Y]
    # x won 3 of 4: the fitted probability is 3/4, as observed; the diagonal is empty.
    assert matrix["predicted"][0][1] == pytest.approx(0.75, abs=1e-3)
    assert matrix["predicted"][1][0] == pytest.approx(0.25, abs=1e-3)
    assert matrix["predicted"][0][0] is None
    assert matrix["rates"][0][1] == pytest.approx(0.75)


def test_the_predicted_matrix_downloads_beside_the_observed_one(
    admin_client, built, few_judgments_shown
):
    services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")  # pages never fit
    response = admin_client.get(reverse("ranking:table", args=["board", "win-matrix"]))
    lines = response.content.decode().splitlines()
    assert lines[0] == "system,opponent,win_rate,n,predicted"
    assert len(lines) == 3
    svg = admin_client.get(reverse("ranking:plot", args=["board", "predicted-matrix", "svg"]))
    assert svg.status_code == 200 and b"Predicted by Bradley" in svg.content


def test_the_strategy_table_never_mixes_two_taxonomies():
    completions = pd.DataFrame(
        [
            (1, "gpt-4o", "openai", "model", None, ["Affirmation", "Offer Hope"]),
            (2, "gpt-mini", "gpt", "model", None, ["Affirmation"]),
            (3, "dataset", "", "dataset", None, ["Question", "Self-disclosure"]),
            (4, "claude", "anthropic", "model", None, []),
        ],
        columns=["completion", "system", "family", "kind", "ttft_ms", "strategies"],
    )
    section = report.strategy_section(completions)
    assert set(section["strategies"]) == {"Affirmation", "Offer Hope"}
    # "openai" and "gpt" are one family; the claude completion is labelled with none of them.
    assert sorted(section["families"]) == ["claude", "gpt"]
    assert section["spread"]["gpt"]["completions"] == 2
    other = section["other"]
    assert other["strategies"] == ["Question", "Self-disclosure"]
    assert other["families"] == ["dataset"]


def test_judge_families_are_compared_through_the_alias_table(built):
    for name, family in [("judge-o", "openai"), ("judge-g", "gpt"), ("judge-a", "anthropic")]:
        for pair in range(4):
            judge(built, pair, X, judge=name, kind="llm", strength=3, strength_max=5, family=family)
    summary = services.agreement_compute(built.study)
    # openai and gpt pool into "gpt"; the only cross-family pair is claude|gpt.
    assert set(summary["cross_family_agreement"]) == {"claude|gpt"}
    built.study.family_aliases = {"anthropic": "gpt"}  # a study may say otherwise
    built.study.save(update_fields=["family_aliases"])
    assert services.agreement_compute(built.study)["cross_family_agreement"] == {}


def test_the_page_names_its_snapshot_preset_and_how_it_is_computed(admin_client, built):
    url = reverse("ranking:leaderboard", args=["board"])
    for preset in ("paper", "default"):  # each board is fitted after its first read
        admin_client.get(url, {"preset": preset})
    html = admin_client.get(url, {"preset": "paper"}).content.decode()
    assert 'data-status="current"' in html
    assert "Choices: the paper's." in html
    assert "How this is computed" in html and "docs/ranking.md" in html
    assert "The paper's asymptotic interval" in html
    assert "Left out, as in the paper's primary analysis" in html
    default = admin_client.get(url).content.decode()
    assert "Choices: HEART studio defaults." in default
    assert "resampled source conversations" in default
    assert "Rank range" in default


def test_the_api_serves_the_snapshot_with_its_status(admin_client, built):
    url = reverse("api:leaderboard", args=["board"])
    admin_client.get(url, {"judges": "human", "preset": "paper"})  # the refit follows it
    body = admin_client.get(url, {"judges": "human", "preset": "paper"}).json()
    assert body["status"] == "current" and body["preset"] == "paper"
    assert body["snapshot"]["id"] and body["snapshot"]["created_at"]
    assert {"rank_low", "rank_high"} <= set(body["systems"][0])
    assert admin_client.get(url, {"preset": "arena"}).status_code == 400
