from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ranking import analysis


def test_axis_win_rates_count_ties_half_and_join_systems_from_pairs():
    judgments = pd.DataFrame(
        {
            "item": [1, 1, 2],
            "winner": ["a", "tie", "b"],
            "axis_H": ["a", "b", None],
            "axis_E": ["tie", "tie", "a"],
        }
    )
    pairs = {1: ("gpt", "human"), 2: ("human", "llama")}
    result = analysis.axis_win_rates(judgments, pairs)
    # gpt: wins item 1 once, ties once -> 0.75 overall; human: 0.25 on item 1, 0 on item 2.
    assert result.loc["gpt", "overall"] == pytest.approx(0.75)
    assert result.loc["human", "overall"] == pytest.approx((0.0 + 0.5 + 0.0) / 3)
    assert result.loc["llama", "overall"] == pytest.approx(1.0)
    assert result.loc["gpt", "H"] == pytest.approx(0.5)
    assert math.isnan(result.loc["llama", "H"])
    assert result.loc["human", "E"] == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert list(result.columns) == ["H", "E", "overall"]
    assert result.index[0] == "llama"


def test_head_to_head_shares_only_count_human_versus_model_rows():
    comparisons = pd.DataFrame(
        {
            "system_a": ["gpt", "human", "gpt", "human", "gpt", "dataset"],
            "system_b": ["human", "gpt", "human", "claude", "claude", "gpt"],
            "winner": ["a", "a", "tie", "b", "a", "b"],
        }
    )
    kinds = {"gpt": "model", "claude": "model", "human": "human", "dataset": "dataset"}
    shares = analysis.head_to_head_shares(comparisons, kinds)
    assert shares["n"] == 4
    assert shares["model_preferred"] == pytest.approx(2 / 4)
    assert shares["human_preferred"] == pytest.approx(1 / 4)
    assert shares["tie"] == pytest.approx(1 / 4)


def test_strategy_usage_percentages_and_spread():
    labels = pd.DataFrame(
        {
            "family": ["human", "human", "human", "human", "gpt"],
            "completion": ["c1", "c1", "c2", "c2", "c3"],
            "strategy": ["Affirmation", "Clarification", "Affirmation", "Affirmation", None],
        }
    )
    usage, spread = analysis.strategy_usage(labels)
    assert usage.shape == (15, 2)
    assert usage.loc["Affirmation", "human"] == pytest.approx(100.0)
    assert usage.loc["Clarification", "human"] == pytest.approx(50.0)
    assert usage["gpt"].sum() == 0.0
    human = spread.loc["human"]
    # 15 rates: 100, 50 and 13 zeros; mean 10; sample variance (90^2 + 40^2 + 13 * 10^2) / 14.
    assert human["sd"] == pytest.approx(math.sqrt(11000 / 14))
    assert human["range"] == pytest.approx(100.0)
    assert human["entropy"] == pytest.approx(
        -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)
    )
    assert human["mean_unique"] == pytest.approx(1.5)
    assert human["coverage"] == 2
    assert spread.loc["gpt", "completions"] == 1
    assert spread.loc["gpt", "mean_unique"] == 0.0


def test_correlation_reports_pearson_and_spearman_and_drops_missing_pairs():
    result = analysis.correlation([1, 2, 3, 4, 5, np.nan], [1, 3, 2, 5, 4, 7])
    # Ranks equal the values: rho = 1 - 6 * sum(d^2) / (n (n^2 - 1)) = 1 - 6 * 4 / 120.
    assert result["spearman_rho"] == pytest.approx(0.8)
    assert result["pearson_r"] == pytest.approx(0.8)
    assert result["n"] == 5
    assert 0.0 < result["pearson_p"] < 1.0


def test_correlation_is_nan_with_too_few_pairs():
    result = analysis.correlation([1.0, 2.0], [3.0, 4.0])
    assert math.isnan(result["pearson_r"])
    assert result["n"] == 2


def test_benjamini_hochberg_matches_the_hand_computed_step_up():
    result = analysis.benjamini_hochberg(pd.Series([0.01, 0.04, 0.03, 0.2, np.nan]))
    expected = [0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2]
    assert np.allclose(result["p_adjusted"].iloc[:4], expected)
    assert result["reject"].tolist() == [True, False, False, False, False]
    assert math.isnan(result["p_adjusted"].iloc[4])
