"""F1 and Cohen's kappa of LLM labels against the human consensus, against hand values."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import f1_score as sk_f1

from labelling.agreement import cohen_kappa, f1_score, label_agreement, present_table

# Ten items. Human truth and LLM prediction for one strategy:
TRUTH = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
PRED = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
# tp = 3, fp = 1, fn = 1, tn = 5.
# F1 = 2*3 / (2*3 + 1 + 1) = 6/8 = 0.75.
# p_o = 8/10 = 0.8; p_e = 0.4*0.4 + 0.6*0.6 = 0.52; kappa = (0.8 - 0.52) / 0.48 = 0.58333...


def test_f1_and_kappa_match_the_hand_computed_values():
    assert f1_score(TRUTH, PRED) == pytest.approx(0.75)
    assert cohen_kappa(TRUTH, PRED) == pytest.approx(0.28 / 0.48)


def test_they_match_scikit_learn():
    assert f1_score(TRUTH, PRED) == pytest.approx(sk_f1(TRUTH, PRED))
    assert cohen_kappa(TRUTH, PRED) == pytest.approx(cohen_kappa_score(TRUTH, PRED))


def test_undefined_cases_are_nan_not_zero():
    assert math.isnan(f1_score([0, 0, 0], [0, 0, 0]))
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))
    assert cohen_kappa([1, 0], [0, 1]) == pytest.approx(-1.0)


def test_per_strategy_and_macro_figures():
    # Four items, three strategies.
    human = present_table(
        {1: ["A", "B"], 2: ["A"], 3: [], 4: ["B"]},
        ["A", "B", "C"],
    )
    llm = present_table(
        {1: ["A"], 2: ["A", "C"], 3: [], 4: ["B"], 99: ["A"]},  # item 99 has no consensus
        ["A", "B", "C"],
    )
    result = label_agreement(llm, human, ["A", "B", "C"])
    table = result.per_strategy
    assert result.n_items == 4
    # A: truth 1,1,0,0 pred 1,1,0,0 -> F1 1, kappa 1.
    assert table.loc["A", "f1"] == pytest.approx(1.0)
    assert table.loc["A", "kappa"] == pytest.approx(1.0)
    # B: truth 1,0,0,1 pred 0,0,0,1 -> tp 1 fn 1 -> F1 2/3; p_o .75, p_e .5*.25+.5*.75=.5,
    # kappa .5.
    assert table.loc["B", "f1"] == pytest.approx(2 / 3)
    assert table.loc["B", "kappa"] == pytest.approx(0.5)
    # C: truth 0,0,0,0 pred 0,1,0,0 -> fp 1 -> F1 0; p_e = 1*.75 = .75, p_o .75 -> kappa 0.
    assert table.loc["C", "f1"] == pytest.approx(0.0)
    assert table.loc["C", "kappa"] == pytest.approx(0.0)
    assert result.macro_f1 == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert result.macro_kappa == pytest.approx(0.5)
    assert table.loc["B", ["tp", "fp", "fn"]].tolist() == [1, 0, 1]


def test_macro_averages_skip_undefined_strategies():
    human = present_table({1: ["A"], 2: []}, ["A", "B"])
    llm = present_table({1: ["A"], 2: []}, ["A", "B"])
    result = label_agreement(llm, human, ["A", "B"])
    assert math.isnan(result.per_strategy.loc["B", "f1"])
    assert result.macro_f1 == pytest.approx(1.0)


def test_no_shared_items_gives_empty_statistics():
    result = label_agreement(
        present_table({1: ["A"]}, ["A"]), pd.DataFrame(columns=["A"], dtype=bool), ["A"]
    )
    assert result.n_items == 0 and math.isnan(result.macro_f1)
