"""The human rows: "Best human (per context)" (the paper's oracle, cross-fitted by default) and
"Average human" (a writer drawn at random), by hand, through the fit, and under the null."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from django.core.cache import cache

from ranking import board, bradley_terry, humans, services, verdicts
from tests.factories.ranking import Y, add_known_verdicts, build_study

HUMANS = {"H1", "H2"}
# The small hand-made data separate (some systems always win): the fit warns, as it should.
pytestmark = [
    pytest.mark.filterwarnings("ignore::ranking.bradley_terry.BradleyTerryWarning"),
    pytest.mark.usefixtures("few_judgments_shown"),
]


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


def test_in_sample_best_keeps_the_chosen_writer_against_non_writers():
    best = humans.best_human_comparisons(_comparisons(ROWS), HUMANS, cross_fit=False)
    kept = sorted((r.context, r.system_a, r.system_b, r.winner) for r in best.itertuples())
    assert kept == [
        ("c1", humans.BEST, "M1", "a"),
        ("c2", humans.BEST, "M1", "a"),
        ("c2", "M1", humans.BEST, "b"),
        ("c3", humans.BEST, "M2", "a"),
        ("c3", "M2", humans.BEST, "b"),
    ]


def test_judge_folds_alternate_over_each_pairs_judges_and_keep_a_judges_swaps_together():
    frame = pd.DataFrame(
        {
            "item": [1, 1, 1, 1, 2, 2, 1],
            "judge": ["r1", "r2", "llm", "r3", "r2", "r1", "llm"],
        }
    )
    # Pair 1: r1 0, r2 1, llm 0 (both of its verdicts), r3 1; pair 2 starts again at r2 0.
    assert humans.judge_folds(frame).tolist() == [0, 1, 0, 1, 0, 1, 0]


def test_cross_fitting_scores_each_half_for_the_writer_the_other_half_chose():
    # One context, writers H1 and H2 against model M. Judges j1 (fold 0) prefer H1 and
    # j2 (fold 1) prefer H2, on every pair.
    rows = []
    for judge, favourite in (("j1", "H1"), ("j2", "H2")):
        for writer, item in (("H1", 1), ("H2", 2)):
            winner = "a" if writer == favourite else "b"
            rows.append(("c", item, judge, writer, "M", winner))
    frame = pd.DataFrame(
        rows, columns=["context", "item", "judge", "system_a", "system_b", "winner"]
    ).assign(weight=1.0)
    best = humans.best_human_comparisons(frame, {"H1", "H2"}, cross_fit=True)
    # Fold 0 (j1's verdicts) is scored for the writer j2 chose (H2), where j1 said "b";
    # fold 1 (j2's) for the writer j1 chose (H1), where j2 said "b". The luck of each half
    # never lifts its own pick: the best human loses both.
    kept = sorted((r.judge, r.item, r.winner) for r in best.itertuples())
    assert kept == [("j1", 2, "b"), ("j2", 1, "b")]
    assert set(best["system_a"]) == {humans.BEST}


def test_the_average_human_weighs_writers_by_contexts_and_reads_its_interval_off_the_rounds():
    table = pd.DataFrame(
        {"elo": [1600.0, 1400.0, 1500.0], "n": [10, 30, 40], "win_rate": [0.7, 0.3, 0.5]},
        index=["H1", "H2", "M"],
    )
    weights = pd.Series({"H1": 1, "H2": 3})
    rng = np.random.default_rng(0)
    draws = pd.DataFrame(rng.normal(table["elo"], 20.0, (500, 3)), columns=table.index)
    row = humans.average_human_row(table, weights, draws=draws, alpha=0.05)
    assert row["elo"] == pytest.approx(0.25 * 1600 + 0.75 * 1400)
    series = 0.25 * draws["H1"] + 0.75 * draws["H2"]
    assert row["ci_low"] == pytest.approx(np.percentile(series, 2.5))
    assert row["ci_high"] == pytest.approx(np.percentile(series, 97.5))
    assert row["n"] == 40 and row["win_rate"] == pytest.approx(0.25 * 0.7 + 0.75 * 0.3)


def test_the_average_human_with_fisher_intervals_uses_the_covariance_of_the_writers():
    table = pd.DataFrame(
        {"elo": [1600.0, 1400.0], "n": [10, 30], "win_rate": [0.7, 0.3]}, index=["H1", "H2"]
    )
    cov = pd.DataFrame([[100.0, 30.0], [30.0, 400.0]], index=table.index, columns=table.index)
    row = humans.average_human_row(
        table, pd.Series({"H1": 1, "H2": 1}), covariance=cov, ci="fisher"
    )
    se = np.sqrt(0.25 * 100 + 0.25 * 400 + 2 * 0.25 * 30)
    assert row["se"] == pytest.approx(se)
    assert row["ci_high"] - row["elo"] == pytest.approx(1.959964 * se, rel=1e-5)


def test_fisher_covariance_of_the_fit_matches_its_standard_errors():
    frame = _comparisons(ROWS * 3)
    fitted = bradley_terry.fit_detailed(frame, ci="fisher")
    diag = np.sqrt(np.diag(fitted.covariance.loc[fitted.table.index, fitted.table.index]))
    assert diag == pytest.approx(fitted.table["se"].to_numpy())


def test_no_writers_no_rows():
    frame = _comparisons([("M1", "M2", "a", 1.0, "c1")] * 3)
    systems = pd.DataFrame({"kind": ["model", "model"]}, index=["M1", "M2"])
    fitted = bradley_terry.fit_detailed(frame, ci="fisher")
    params = board.params_resolve("default", ci="fisher")
    assert board.human_rows(frame, systems, fitted, params, None) == []


# --------------------------------------------------------------------------- the null


def null_study(seed: int, writers: int = 3, models: int = 3, contexts: int = 60, per_pair: int = 5):
    """Writers and models of identical quality: every verdict a coin flip, every system in
    every context, every pair judged ``per_pair`` times."""
    rng = np.random.default_rng(seed)
    names = [f"writer-{i}" for i in range(writers)] + [f"model-{i}" for i in range(models)]
    rows, item = [], 0
    for c in range(contexts):
        for i, left in enumerate(names):
            for right in names[i + 1 :]:
                item += 1
                for v in range(per_pair):
                    winner = "a" if rng.random() < 0.5 else "b"
                    rows.append((item, f"ctx-{c}", left, right, winner, f"rater-{v}"))
    judgments = pd.DataFrame(
        rows, columns=["item", "context", "system_a", "system_b", "winner", "judge"]
    ).assign(
        cluster=lambda f: f["context"],
        judge_kind="human",
        strength=np.nan,
        strength_max=2.0,
        shown_left="a",
    )
    systems = pd.DataFrame(
        {
            "kind": ["human"] * writers + ["model"] * models,
            "family": [""] * writers + ["gpt"] * models,
            "ttft_ms": np.nan,
            "external_score": np.nan,
        },
        index=pd.Index(names, name="system"),
    )
    completions = pd.DataFrame(
        columns=["completion", "system", "family", "kind", "ttft_ms", "strategies"]
    )
    return judgments, systems, completions


def null_simulation(preset: str, replicates: int = 20) -> dict[str, np.ndarray]:
    """Per human row, (elo, ci_low, ci_high) of each replicate, through ranking.board."""
    rows: dict[str, list] = {}
    for seed in range(replicates):
        judgments, systems, completions = null_study(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = board.board(
                judgments,
                systems=systems,
                completions=completions,
                params=board.params_resolve(preset),
                rule=verdicts.VerdictRule(),
                judges="human",
            )
        for row in result["human_rows"]:
            rows.setdefault(row["system"], []).append((row["elo"], row["ci_low"], row["ci_high"]))
    return {name: np.array(values) for name, values in rows.items()}


def _bias_and_coverage(values: np.ndarray) -> tuple[float, int]:
    bias = float(values[:, 0].mean() - 1500.0)
    covered = int(((values[:, 1] <= 1500.0) & (values[:, 2] >= 1500.0)).sum())
    return bias, covered


def test_under_the_null_the_average_human_is_unbiased_and_its_interval_covers():
    """3 writers and 3 models of identical quality, 60 contexts, 5 coin-flip verdicts a pair,
    20 replicates: every true Elo is 1500."""
    rows = null_simulation("default")
    bias, covered = _bias_and_coverage(rows[humans.AVERAGE])
    print(f"null, default: Average human bias {bias:+.1f} Elo, covered {covered}/20")
    assert abs(bias) <= 10.0
    assert covered >= 18  # 90 % of a nominal 95 % interval
    # The cross-fitted oracle is no luckier than a writer: no bias from choosing on its data.
    best_bias, best_covered = _bias_and_coverage(rows[humans.BEST])
    print(f"null, default: Best human bias {best_bias:+.1f} Elo, covered {best_covered}/20")
    assert abs(best_bias) <= 10.0
    assert best_covered >= 18


def test_under_the_null_the_papers_in_sample_oracle_is_lifted_by_luck():
    # What the paper's choice does (documented in docs/ranking.md): chosen and scored on the
    # same coin flips, the "best" writer comes out far above the truth, its interval missing it.
    rows = null_simulation("paper")
    bias, covered = _bias_and_coverage(rows[humans.BEST])
    print(f"null, paper: Best human bias {bias:+.1f} Elo, covered {covered}/20")
    assert bias > 40.0
    assert covered <= 2


# --------------------------------------------------------------------------- through the site


@pytest.mark.django_db
def test_the_leaderboard_carries_both_rows_with_their_notes():
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
    # One writer: the average human is that writer, rounds and all.
    assert rows[humans.AVERAGE]["elo"] == pytest.approx(y["elo"], abs=0.1)
    assert rows[humans.AVERAGE]["ci_low"] == pytest.approx(y["ci_low"], abs=0.1)
    assert rows[humans.AVERAGE]["n"] == y["n"]
    assert "drawn at random" in rows[humans.AVERAGE]["note"]
    # One human verdict a pair: no second half to score a cross-fitted choice on. The row
    # is left out, and the page says why.
    assert humans.BEST not in rows
    assert any("two judges" in w for w in result["warnings"])
    in_sample = services.leaderboard_from_data(
        services.study_data_load(built.study),
        study=built.study,
        judges="all",
        subset="all",
        params=services.params_resolve(bootstrap_rounds=200, best_human="in_sample"),
    )
    best = next(r for r in in_sample["human_rows"] if r["system"] == humans.BEST)
    assert "oracle" in best["note"] and "optimistic" in best["note"]
    assert best["elo"] == pytest.approx(y["elo"], abs=0.1)  # one writer: the best is them


@pytest.mark.django_db
def test_the_leaderboard_page_shows_the_derived_rows_and_what_they_mean(client):
    from django.contrib.auth import get_user_model

    cache.clear()
    built = build_study()
    add_known_verdicts(built)
    client.force_login(get_user_model().objects.create_superuser("root", password="x"))
    client.get(f"/studio/{built.study.slug}/leaderboard/")  # the refit follows the first read
    html = client.get(f"/studio/{built.study.slug}/leaderboard/").content.decode()
    assert '<th scope="row">Average human</th>' in html
    assert "an oracle" in html.lower()


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
    assert any(line.split()[:3] == ["-", "Average", "human"] for line in lines)
    assert any(line.startswith("note: Average human:") for line in lines)
