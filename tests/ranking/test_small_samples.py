"""Honest statistics at small n, per-axis Bradley–Terry fits and the percentile view (Figure 4),
checked against hand-computed values and scipy (no Django)."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ranking import analysis, bradley_terry, plots, report


def test_a_perfect_correlation_of_four_systems_has_the_exact_p_not_zero():
    result = analysis.correlation([1, 2, 3, 4], [10, 20, 30, 40])
    assert result["spearman_rho"] == pytest.approx(1.0)
    # Two of the 4! = 24 orderings reach |rho| = 1: the observed one and its reverse.
    assert result["spearman_p"] == pytest.approx(2 / 24)
    assert result["pearson_p"] == pytest.approx(2 / 24)
    assert result["p_method"] == "exact permutation"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_exact_p_matches_scipys_permutation_test(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=6), rng.normal(size=6)
    ours = analysis.correlation(x, y)
    reference = stats.permutation_test(
        (y,),
        lambda v: abs(stats.pearsonr(x, v).statistic),
        permutation_type="pairings",
        n_resamples=math.factorial(6),
        alternative="greater",  # two-sided as P(|r*| >= |r|)
    )
    assert ours["pearson_p"] == pytest.approx(reference.pvalue)
    spearman = stats.permutation_test(
        (y,),
        lambda v: abs(stats.spearmanr(x, v).statistic),
        permutation_type="pairings",
        n_resamples=math.factorial(6),
        alternative="greater",
    )
    assert ours["spearman_p"] == pytest.approx(spearman.pvalue)


def test_larger_samples_use_the_asymptotic_p():
    x = np.arange(20.0)
    y = x + np.sin(x)
    result = analysis.correlation(x, y)
    assert result["p_method"] == "asymptotic"
    assert result["pearson_p"] == pytest.approx(stats.pearsonr(x, y).pvalue)


@pytest.mark.parametrize(
    ("x", "y", "reason"),
    [
        ([1.0, 2.0], [3.0, 4.0], "needs at least 3 systems with both values, has 2"),
        ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], "one of the two values is the same for every system"),
    ],
)
def test_a_statistic_that_cannot_be_computed_says_why(x, y, reason):
    result = analysis.correlation(x, y)
    assert math.isnan(result["spearman_rho"]) and result["reason"] == reason


def test_percentiles_match_scipys_mean_percentile_among_the_others():
    values = pd.Series({"a": 1400.0, "b": 1500.0, "c": 1500.0, "d": 1650.0, "e": np.nan})
    ranks = analysis.percentile_ranks(values)
    assert ranks["a"] == 0 and ranks["d"] == 100 and ranks["b"] == ranks["c"] == 50
    assert math.isnan(ranks["e"])
    for name in "abcd":
        others = values.drop([name, "e"]).to_numpy()
        expected = stats.percentileofscore(others, values[name], kind="mean")
        assert ranks[name] == pytest.approx(expected)
    assert analysis.percentile_ranks(pd.Series({"solo": 1500.0})).isna().all()


def _axis_judgments() -> pd.DataFrame:
    """x beats y on H 3 times of 4 and loses on E every time; z meets x and y on H only."""
    rows = []
    for i in range(4):
        rows.append(
            {"system_a": "x", "system_b": "y", "winner": "a", "context": i,
             "axis_H": "a" if i < 3 else "b", "axis_E": "b"}
        )  # fmt: skip
    rows.append({"system_a": "z", "system_b": "x", "winner": "b", "context": 9, "axis_H": "b"})
    rows.append({"system_a": "z", "system_b": "y", "winner": "b", "context": 8, "axis_H": "tie"})
    return pd.DataFrame(rows)


def test_each_axis_is_fitted_from_its_own_marks():
    judgments = _axis_judgments()
    params = {"ci": "bootstrap", "bootstrap_rounds": 200, "seed": 1, "alpha": 0.05}
    fits = report.axis_fits(judgments, ["x", "y", "z"], params)
    assert fits["axes"] == ["H", "E"]
    assert fits["notes"]["A"] == "no judgment marked this axis"
    cells = {row["system"]: row["axes"] for row in fits["systems"]}
    direct = bradley_terry.fit(
        analysis.axis_comparisons(judgments, "H"),
        ci="bootstrap",
        bootstrap_rounds=200,
        seed=1,
    )
    assert cells["x"]["H"]["elo"] == pytest.approx(direct.loc["x", "elo"], abs=0.05)
    assert cells["x"]["H"]["ci_low"] <= cells["x"]["H"]["elo"] <= cells["x"]["H"]["ci_high"]
    assert cells["x"]["H"]["percentile"] == 100 and cells["x"]["E"]["percentile"] == 0
    assert cells["y"]["E"]["percentile"] == 100
    assert "E" not in cells["z"]  # z has no E marks: no rating, no percentile
    assert cells["x"]["H"]["n"] == 5
    assert fits["systems"][2]["cells"] == [cells["z"]["H"], None]


def test_png_downloads_are_print_resolution_and_the_percentile_view_draws():
    from PIL import Image

    result = {
        "judges": "human",
        "subset": "all",
        "systems": [
            {
                "system": "x",
                "elo": 1550.0,
                "ci_low": 1500.0,
                "ci_high": 1600.0,
                "kind": "model",
                "win_rate": 0.7,
                "axes": {"H": 0.7},
            },
            {
                "system": "y",
                "elo": 1450.0,
                "ci_low": 1400.0,
                "ci_high": 1500.0,
                "kind": "human",
                "win_rate": 0.3,
                "axes": {"H": 0.3},
            },
        ],  # fmt: skip
        "axis_fits": {
            "axes": ["H"],
            "systems": [
                {"system": "x", "axes": {"H": {"percentile": 100.0}}},
                {"system": "y", "axes": {"H": {"percentile": 0.0}}},
            ],
        },
    }
    for name in plots.PLOTS:
        png = Image.open(io.BytesIO(plots.render(name, result, "png")))
        dpi = png.info.get("dpi", (0, 0))[0]
        assert round(dpi) >= 300, name
        assert png.width >= 5 * 300, name
    svg = plots.render("axes-percentile", result, "svg").decode()
    assert "<svg" in svg and "Percentile per HEART axis" in svg
