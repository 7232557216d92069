"""Humans (pooled) and Average Human: the derived comparisons, by hand, and through the fit."""

from __future__ import annotations

import pandas as pd
import pytest
from django.core.cache import cache

from ranking import bradley_terry, humans, services
from tests.ranking.study_builder import Y, add_known_verdicts, build_study

HUMANS = {"H1", "H2"}
# The small hand-made data separate (some systems always win): the fit warns, as it should.
pytestmark = pytest.mark.filterwarnings("ignore::ranking.bradley_terry.BradleyTerryWarning")


def _comparisons(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["system_a", "system_b", "winner", "weight", "context"])


ROWS = [
    ("H1", "M1", "a", 1.0, "c1"),  # H1 beats the model in c1
    ("M1", "H2", "a", 1.0, "c1"),  # H2 loses to it
    ("H1", "H2", "a", 1.0, "c1"),  # human vs human
    ("H2", "M1", "a", 1.0, "c2"),  # in c2 H2 wins twice
    ("M1", "H2", "b", 1.0, "c2"),
    ("H1", "M1", "tie", 1.0, "c2"),  # H1 ties once: 0.5
    ("H1", "M2", "a", 1.0, "c3"),  # c3: both perfect, H2 with more comparisons
    ("H2", "M2", "a", 1.0, "c3"),
    ("M2", "H2", "b", 1.0, "c3"),
    ("M1", "M2", "a", 1.0, "c1"),
]


def test_the_best_human_per_context_follows_the_stated_rule():
    best = humans.best_human_per_context(_comparisons(ROWS), HUMANS)
    assert best == {"c1": "H1", "c2": "H2", "c3": "H2"}


def test_pooled_renames_every_human_and_drops_human_vs_human():
    pooled = humans.pooled_comparisons(_comparisons(ROWS), HUMANS)
    assert len(pooled) == len(ROWS) - 1
    names = set(pooled["system_a"]) | set(pooled["system_b"])
    assert names == {humans.POOLED, "M1", "M2"}


def test_average_human_keeps_only_the_chosen_completions_against_non_humans():
    average = humans.average_human_comparisons(_comparisons(ROWS), HUMANS)
    kept = sorted(
        (r.context, r.system_a, r.system_b, r.winner) for r in average.itertuples(index=False)
    )
    assert kept == [
        ("c1", "Average Human", "M1", "a"),
        ("c1", "M1", "M2", "a"),
        ("c2", "Average Human", "M1", "a"),
        ("c2", "M1", "Average Human", "b"),
        ("c3", "Average Human", "M2", "a"),
        ("c3", "M2", "Average Human", "b"),
    ]


def test_derived_rows_are_fitted_and_shifted_onto_the_main_scale():
    comparisons = _comparisons(ROWS)

    def fit(frame):
        return bradley_terry.fit(frame, ci="fisher")

    main = fit(comparisons)
    rows = {row["system"]: row for row in humans.derived_rows(comparisons, HUMANS, main, fit)}
    assert set(rows) == {humans.POOLED, humans.AVERAGE}
    for name, derive in (
        (humans.POOLED, humans.pooled_comparisons),
        (humans.AVERAGE, humans.average_human_comparisons),
    ):
        own = fit(derive(comparisons, HUMANS))
        shift = main.loc[["M1", "M2"], "elo"].mean() - own.loc[["M1", "M2"], "elo"].mean()
        assert rows[name]["elo"] == pytest.approx(own.loc[name, "elo"] + shift)
        assert rows[name]["ci_low"] < rows[name]["elo"] < rows[name]["ci_high"]
    # The per-context best wins everything it kept; the pool also carries the losses.
    assert rows[humans.AVERAGE]["win_rate"] == pytest.approx(1.0)
    assert rows[humans.AVERAGE]["elo"] > rows[humans.POOLED]["elo"]


def test_no_humans_no_rows():
    comparisons = _comparisons([("M1", "M2", "a", 1.0, "c1")])
    assert (
        humans.derived_rows(comparisons, [], bradley_terry.fit(comparisons), bradley_terry.fit)
        == []
    )


@pytest.mark.django_db
def test_the_leaderboard_carries_both_rows_with_cis():
    cache.clear()
    built = build_study()
    add_known_verdicts(built)
    result = services.leaderboard_from_data(
        services.study_data_load(built.study),
        study=built.study,
        judges="all",
        subset="all",
        params=services.params_resolve(bootstrap_rounds=200),
    )
    rows = {row["system"]: row for row in result["human_rows"]}
    y = next(row for row in result["systems"] if row["system"] == Y)
    # One human writer: the pool and the per-context best are that writer.
    for name in (humans.POOLED, humans.AVERAGE):
        assert rows[name]["elo"] == pytest.approx(y["elo"], abs=0.2)
        assert rows[name]["ci_low"] is not None and rows[name]["ci_high"] is not None
        assert rows[name]["n"] == y["n"]


@pytest.mark.django_db
def test_the_leaderboard_page_shows_the_derived_rows(client):
    from django.contrib.auth import get_user_model

    cache.clear()
    built = build_study()
    add_known_verdicts(built)
    client.force_login(get_user_model().objects.create_superuser("root", password="x"))
    html = client.get(f"/studio/{built.study.slug}/leaderboard/").content.decode()
    assert '<th scope="row">Humans (pooled)</th>' in html
    assert '<th scope="row">Average Human</th>' in html


@pytest.mark.django_db
def test_the_leaderboard_command_prints_the_derived_rows():
    from io import StringIO

    from django.core.management import call_command

    cache.clear()
    built = build_study()
    add_known_verdicts(built)
    out = StringIO()
    call_command("leaderboard", study=built.study.slug, ci="fisher", stdout=out)
    lines = out.getvalue().splitlines()
    assert any(line.split()[:3] == ["-", "Humans", "(pooled)"] for line in lines)
    assert any(line.split()[:3] == ["-", "Average", "Human"] for line in lines)
