from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ranking import factors


def test_cronbach_alpha_matches_the_hand_computed_value():
    items = np.array([[1, 2], [2, 3], [3, 3], [4, 5]], dtype=float)
    # Item variances 5/3 and 19/12 (sum 3.25); totals 3, 5, 6, 9 have variance 6.25:
    # alpha = 2/1 * (1 - 3.25 / 6.25) = 0.96.
    assert factors.cronbach_alpha(items) == pytest.approx(0.96)


def test_response_scores_credit_each_side_with_plus_one_zero_minus_one():
    frame = pd.DataFrame(
        {
            "context": [1, 1, 1],
            "system_a": ["x", "x", "y"],
            "system_b": ["y", "y", "x"],
            "winner": ["a", "tie", "a"],
            "axis_H": ["a", "b", None],
        }
    )
    scores = factors.response_scores(frame)
    assert scores.loc[(1, "x"), "overall"] == pytest.approx((1 + 0 - 1) / 3)
    assert scores.loc[(1, "y"), "overall"] == pytest.approx((-1 + 0 + 1) / 3)
    assert scores.loc[(1, "x"), "H"] == pytest.approx(0.0)  # won once, lost once


def _synthetic(n_contexts: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for context in range(n_contexts):
        quality = {"x": rng.normal(), "y": rng.normal()}
        for judge in range(5):
            diff = quality["x"] - quality["y"]
            marks = {
                f"axis_{axis}": "a" if diff + rng.normal(scale=0.3) > 0 else "b"
                for axis in factors.AXES
            }
            rows.append(
                {
                    "context": context,
                    "system_a": "x",
                    "system_b": "y",
                    "winner": "a" if diff + rng.normal(scale=0.3) > 0 else "b",
                    "judge": judge,
                    **marks,
                }
            )
    return pd.DataFrame(rows)


def test_one_latent_skill_gives_one_dominant_factor():
    summary = factors.factor_structure(_synthetic(60))
    assert summary["n_responses"] == 120
    assert summary["explained_by_first"] > 0.8
    assert all(loading > 0.8 for loading in summary["loadings"].values())
    assert summary["cronbach_alpha"] > 0.9
    assert summary["correlation_with_overall"] > 0.8


def test_too_few_responses_give_no_factor_structure():
    assert factors.factor_structure(_synthetic(3)) is None
