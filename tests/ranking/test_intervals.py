"""Intervals against outside code: arena-rank's sandwich and contextual model (reference values
computed with arena-rank itself, tests/ranking/data/arena_rank_reference.json says how) and
statsmodels' robust GLM covariance."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from ranking import bradley_terry, style

DATA = Path(__file__).parent / "data"
Z95 = 1.959963984540054


@pytest.fixture(scope="module")
def arena() -> tuple[pd.DataFrame, dict]:
    frame = pd.read_csv(DATA / "arena_rank_comparisons.csv")
    reference = json.loads((DATA / "arena_rank_reference.json").read_text())
    return frame, reference


def _on_our_scale(rows: dict[str, list[float]]) -> pd.DataFrame:
    table = pd.DataFrame(rows, index=["elo", "ci_low", "ci_high"]).T
    return table - table["elo"].mean() + 1500.0  # arena-rank centres on 1000, we on 1500


def test_plain_elo_equals_arena_ranks_bradley_terry(arena):
    frame, reference = arena
    ours = bradley_terry.fit(frame[["system_a", "system_b", "winner"]], ci="fisher")
    theirs = _on_our_scale(reference["bradley_terry"]).reindex(ours.index)
    assert (ours["elo"] - theirs["elo"]).abs().max() < 0.06


def test_sandwich_intervals_equal_arena_ranks_within_one_percent_of_width(arena):
    frame, reference = arena
    ours = bradley_terry.fit(frame[["system_a", "system_b", "winner"]], ci="sandwich")
    theirs = _on_our_scale(reference["bradley_terry"]).reindex(ours.index)
    width = (ours["ci_high"] - ours["ci_low"]) / (theirs["ci_high"] - theirs["ci_low"])
    assert (width - 1).abs().max() < 0.01
    assert (ours["elo"] - theirs["elo"]).abs().max() < 0.06
    # Ties carry less surprise than wins: the robust interval is narrower than Fisher's here.
    fisher = bradley_terry.fit(frame[["system_a", "system_b", "winner"]], ci="fisher")
    assert ((fisher["ci_high"] - fisher["ci_low"]) > (ours["ci_high"] - ours["ci_low"])).all()


def test_weighted_sandwich_equals_statsmodels_robust_glm(arena):
    frame, _ = arena
    ours = bradley_terry.fit(frame[["system_a", "system_b", "winner", "weight"]], ci="sandwich")
    names = sorted(ours.index)
    index = {name: i for i, name in enumerate(names)}
    k, rows = len(names), np.arange(len(frame))
    x = np.zeros((len(frame), k))
    x[rows, frame["system_a"].map(index)] = 1.0
    x[rows, frame["system_b"].map(index)] = -1.0
    y = frame["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fractional outcomes: statsmodels warns, fits all the same
        glm = sm.GLM(
            y, x[:, 1:], family=sm.families.Binomial(), var_weights=frame["weight"].to_numpy()
        ).fit(cov_type="HC0")
    covariance = np.zeros((k, k))
    covariance[1:, 1:] = glm.cov_params()
    centre = np.eye(k) - 1.0 / k
    se = np.sqrt(np.diag(centre @ covariance @ centre.T)) * 400 / math.log(10)
    assert np.abs(ours["se"].reindex(names).to_numpy() - se).max() < 1e-3
    # A verdict of weight 2 is one verdict, not two: Fisher's interval is too narrow here.
    fisher = bradley_terry.fit(frame[["system_a", "system_b", "winner", "weight"]], ci="fisher")
    assert (fisher["se"] < ours["se"]).all()


def test_sandwich_needs_ties_counted_half():
    comparisons = pd.DataFrame({"system_a": ["x"], "system_b": ["y"], "winner": ["tie"]})
    with pytest.raises(ValueError, match="sandwich"):
        bradley_terry.fit(comparisons, ci="sandwich", ties="davidson")


def _style_comparisons(frame: pd.DataFrame) -> pd.DataFrame:
    counts = {
        side: pd.DataFrame(
            {"length": frame[f"len_{side}"], "questions": frame[f"q_{side}"]}, dtype=float
        )
        for side in ("a", "b")
    }
    covariates, dropped = style.covariates(counts["a"], counts["b"])
    assert not dropped
    return frame[["system_a", "system_b", "winner"]].assign(
        weight=1.0, **{name: covariates[name] for name in covariates.columns}
    )


def test_the_arena_recipe_reproduces_arena_ranks_contextual_model(arena):
    frame, reference = arena
    fitted = style.fit(
        _style_comparisons(frame), ["length", "questions"], ci="sandwich", recipe="arena"
    )
    theirs = _on_our_scale(reference["contextual"]).reindex(fitted.table.index)
    ours = fitted.table
    assert (ours["elo"] - theirs["elo"]).abs().max() < 0.06
    width = (ours["ci_high"] - ours["ci_low"]) / (theirs["ci_high"] - theirs["ci_low"])
    assert (width - 1).abs().max() < 0.01
    assert fitted.coefficients["coef"].to_numpy() == pytest.approx(
        reference["contextual_coeffs"], abs=1e-5
    )


def test_the_arena_ridge_shrinks_the_coefficient_our_recipe_estimates_freely(arena):
    frame, _ = arena
    comparisons = _style_comparisons(frame)
    ours = style.fit(comparisons, ["length", "questions"], ci="fisher")
    arenas = style.fit(comparisons, ["length", "questions"], ci="fisher", recipe="arena")
    # The data were drawn with a length effect of 0.6 per unit of normalised difference.
    assert ours.coefficients.loc["length", "ci_low"] > 0.1
    assert 0 < arenas.coefficients.loc["length", "coef"] < ours.coefficients.loc["length", "coef"]
