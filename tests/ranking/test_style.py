"""Style-controlled Bradley–Terry against an independent logistic regression."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from ranking import bradley_terry as bt
from ranking import style

ELO_PER_THETA = 400.0 / math.log(10.0)


def independent_covariates(len_a, len_b) -> np.ndarray:
    """The contract's recipe (DESIGN.md), written out again: (a - b) / (a + b), 0 when both
    are 0, over its RMS."""
    a, b = np.asarray(len_a, float), np.asarray(len_b, float)
    total = a + b
    diff = np.divide(a - b, total, out=np.zeros_like(total), where=total != 0)
    return diff / np.sqrt(np.mean(diff**2))


def independent_elo(frame: pd.DataFrame, x: np.ndarray, systems: pd.Index):
    """sklearn's unpenalised logistic regression, each comparison split into a win row
    (weight w y) and a loss row (weight w (1 - y)): ties are half a win, as Arena fits them."""
    n, k = len(frame), len(systems)
    design = np.zeros((n, k))
    design[np.arange(n), systems.get_indexer(frame["system_a"])] = 1.0
    design[np.arange(n), systems.get_indexer(frame["system_b"])] = -1.0
    design = np.hstack([design, x.reshape(n, -1)])
    y = frame["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    w = frame["weight"].to_numpy() if "weight" in frame else np.ones(n)
    model = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000)
    model.fit(
        np.vstack([design, design]),
        np.r_[np.ones(n), np.zeros(n)],
        sample_weight=np.r_[w * y, w * (1.0 - y)],
    )
    theta = model.coef_[0][:k]
    return pd.Series(ELO_PER_THETA * (theta - theta.mean()) + 1500.0, systems), model.coef_[0][k:]


def length_biased(n: int = 4000, k: int = 6, bias: float = 0.9, seed: int = 5):
    """Judges that prefer the longer reply; systems differ in how long they write."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 0.5, k)
    verbosity = np.linspace(-1.0, 1.0, k)  # s5 writes longest
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    len_a = np.maximum(3, rng.normal(60 + 30 * verbosity[a], 12)).round()
    len_b = np.maximum(3, rng.normal(60 + 30 * verbosity[b], 12)).round()
    x = independent_covariates(len_a, len_b)
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b] + bias * x)))
    u = rng.random(n)
    winner = np.where(u < p - 0.05, "a", np.where(u < p + 0.05, "tie", "b"))
    names = np.array([f"s{i}" for i in range(k)])
    frame = pd.DataFrame(
        {
            "system_a": names[a],
            "system_b": names[b],
            "winner": winner,
            "weight": rng.choice([1.0, 1.5, 2.0], n),
            "context": rng.integers(0, 200, n),
        }
    )
    return frame, len_a, len_b, theta


def test_text_features_count_words_questions_lists_and_markdown():
    texts = pd.Series(
        ["How are you? Fine?", "- one\n- two\n3. three", "# Head\nSome **bold** text", None]
    )
    counts = style.text_features(texts)
    assert counts["length"].tolist()[:3] == [4, 6, 5]
    assert counts["questions"].tolist()[:3] == [2, 0, 0]
    assert counts["lists"].tolist()[:3] == [0, 3, 0]
    assert counts["markdown"].tolist()[:3] == [0, 0, 2]
    assert counts.iloc[3].isna().all()


def test_covariates_are_normalised_differences_over_their_rms():
    a = pd.DataFrame({"length": [10.0, 30.0, 20.0], "lists": [0.0, 0.0, 0.0]})
    b = pd.DataFrame({"length": [30.0, 10.0, 20.0], "lists": [0.0, 0.0, 0.0]})
    x, dropped = style.covariates(a, b)
    expected = independent_covariates([10, 30, 20], np.array([30, 10, 20]))
    assert np.allclose(x["length"], expected)
    assert "lists" not in x and "lists" in dropped


def test_two_replies_without_the_feature_differ_by_nothing_in_it():
    a = pd.DataFrame({"questions": [0.0, 2.0, 1.0]})
    b = pd.DataFrame({"questions": [0.0, 0.0, 3.0]})
    x, _ = style.covariates(a, b)
    d = np.array([0.0, 1.0, -0.5])
    assert np.allclose(x["questions"], d / np.sqrt(np.mean(d**2)))


def test_which_reply_is_stored_first_does_not_move_the_controlled_board():
    frame, len_a, len_b, _ = length_biased(n=2000)
    swapped = frame.assign(
        system_a=frame["system_b"],
        system_b=frame["system_a"],
        winner=frame["winner"].map({"a": "b", "b": "a", "tie": "tie"}),
    )
    boards = []
    for data, (first, second) in ((frame, (len_a, len_b)), (swapped, (len_b, len_a))):
        x = style.covariates(pd.DataFrame({"length": first}), pd.DataFrame({"length": second}))
        boards.append(style.fit(data.assign(length=x[0]["length"].to_numpy()), ["length"]))
    assert np.allclose(boards[0].table["elo"], boards[1].table["elo"].loc[boards[0].table.index])


def test_parse_features_checks_names_and_keeps_display_order():
    assert style.parse_features("questions, length") == ["length", "questions"]
    with pytest.raises(ValueError, match="unknown style feature"):
        style.parse_features("length,colour")


def test_controlled_elo_equals_an_independent_logistic_regression_on_length_biased_data():
    frame, len_a, len_b, _ = length_biased()
    x = style.covariates(pd.DataFrame({"length": len_a}), pd.DataFrame({"length": len_b}))[0]
    fitted = style.fit(frame.assign(length=x["length"].to_numpy()), ["length"], ci="fisher")
    systems = fitted.table.index
    reference, coefficients = independent_elo(frame, independent_covariates(len_a, len_b), systems)
    assert np.abs(fitted.table["elo"] - reference).max() < 0.5
    assert fitted.coefficients.loc["length", "coef"] == pytest.approx(coefficients[0], abs=1e-4)


def test_it_recovers_the_known_length_bias_and_corrects_the_ranking():
    frame, len_a, len_b, theta = length_biased(n=8000, bias=1.2)
    x = style.covariates(pd.DataFrame({"length": len_a}), pd.DataFrame({"length": len_b}))[0]
    fitted = style.fit(
        frame.assign(length=x["length"].to_numpy()),
        ["length"],
        ci="bootstrap",
        bootstrap_rounds=200,
    )
    coef = fitted.coefficients.loc["length"]
    assert coef["ci_low"] < 1.2 < coef["ci_high"]
    true = pd.Series(bt.elo_from_theta(theta), [f"s{i}" for i in range(6)])
    plain = bt.fit(frame, ci=None)["elo"]
    controlled = fitted.table["elo"]
    # The longest writer is inflated on the plain board and set right under control.
    assert abs(controlled["s5"] - true["s5"]) < 30 < plain["s5"] - true["s5"]
    assert fitted.unit == "clusters" and fitted.draws.shape == (200, 6)


def test_a_fit_without_covariates_is_the_plain_bradley_terry_fit():
    frame, *_ = length_biased(n=1500)
    fitted = style.fit(frame, [], ci="fisher")
    plain = bt.fit(frame, ci="fisher")
    assert np.abs(fitted.table["elo"] - plain["elo"].reindex(fitted.table.index)).max() < 1e-6
    assert np.abs(fitted.table["se"] - plain["se"].reindex(fitted.table.index)).max() < 1e-4


def test_comparisons_of_one_item_are_summed_without_changing_the_fit():
    frame, len_a, len_b, _ = length_biased(n=1200)
    x = independent_covariates(len_a, len_b)
    frame = frame.assign(length=x, item=np.arange(len(frame)))
    doubled = pd.concat([frame, frame.assign(weight=frame["weight"] * 0.5)])
    one = style.fit(frame.assign(weight=frame["weight"] * 1.5), ["length"], ci=None)
    two = style.fit(doubled, ["length"], ci=None)
    assert np.abs(one.table["elo"] - two.table["elo"]).max() < 1e-6


def test_an_anchor_sits_at_1500_and_the_differences_stay():
    frame, len_a, len_b, _ = length_biased(n=1500)
    frame = frame.assign(length=independent_covariates(len_a, len_b))
    centred = style.fit(frame, ["length"], ci="fisher")
    anchored = style.fit(frame, ["length"], ci="fisher", anchor="s2")
    assert anchored.table.loc["s2", "elo"] == pytest.approx(1500.0)
    assert anchored.table.loc["s2", "se"] == pytest.approx(0.0, abs=1e-9)
    gap = centred.table["elo"] - anchored.table["elo"]
    assert np.ptp(gap.to_numpy()) < 1e-9
