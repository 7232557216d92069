from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from ranking import bradley_terry as bt

ELO_PER_THETA = 400.0 / math.log(10.0)


def comparisons(rows: list[tuple[str, str, str]], **extra) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["system_a", "system_b", "winner"])
    for name, values in extra.items():
        frame[name] = values
    return frame


def synthetic(k: int = 6, n: int = 3000, tie_share: float = 0.15, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 0.7, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p_a = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    winner = np.where(rng.random(n) < p_a, "a", "b")
    winner = np.where(rng.random(n) < tie_share, "tie", winner)
    names = np.array([f"sys-{i}" for i in range(k)])
    return pd.DataFrame(
        {
            "system_a": names[a],
            "system_b": names[b],
            "winner": winner,
            "context": rng.integers(0, 40, n),
        }
    )


def reference_half_mle(frame: pd.DataFrame, systems: pd.Index) -> np.ndarray:
    """Independent MLE: scipy L-BFGS-B on the unaggregated likelihood, ties as y = 1/2."""
    a = systems.get_indexer(frame["system_a"])
    b = systems.get_indexer(frame["system_b"])
    y = frame["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    w = frame["weight"].to_numpy() if "weight" in frame else np.ones(len(frame))

    def nll(theta):
        d = theta[a] - theta[b]
        loss = (w * (y * np.logaddexp(0, -d) + (1 - y) * np.logaddexp(0, d))).sum()
        resid = w * (y - 1.0 / (1.0 + np.exp(-d)))
        grad = np.bincount(b, resid, len(theta)) - np.bincount(a, resid, len(theta))
        return loss, grad

    result = minimize(
        nll,
        np.zeros(len(systems)),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-11, "ftol": 1e-16, "maxiter": 10_000},
    )
    return bt.elo_from_theta(result.x)


def test_it_gives_the_hand_computed_elo_for_two_systems():
    # A beats B 3 times out of 4: theta_A - theta_B = ln 3, so the Elo gap is 400 log10(3).
    frame = comparisons([("A", "B", "a")] * 3 + [("A", "B", "b")])
    result = bt.fit(frame, prior=0.0)
    gap = 400 * math.log10(3)
    assert result.loc["A", "elo"] == pytest.approx(1500 + gap / 2, abs=1e-6)
    assert result.loc["B", "elo"] == pytest.approx(1500 - gap / 2, abs=1e-6)
    assert list(result.index) == ["A", "B"]
    assert result.index.name == "system"


def test_it_gives_the_hand_computed_fisher_standard_error_for_two_systems():
    # Information on d = theta_A - theta_B is n p (1 - p) = 4 * 3/4 * 1/4; theta_A - mean = d / 2.
    frame = comparisons([("A", "B", "a")] * 3 + [("A", "B", "b")])
    result = bt.fit(frame, prior=0.0)
    se_theta = math.sqrt(1.0 / (4 * 0.75 * 0.25)) / 2
    assert result.loc["A", "se"] == pytest.approx(ELO_PER_THETA * se_theta, rel=1e-9)
    half_width = result.loc["A", "ci_high"] - result.loc["A", "elo"]
    assert half_width == pytest.approx(1.959964 * ELO_PER_THETA * se_theta, rel=1e-6)


def test_it_centres_elo_on_1500_with_the_papers_formula():
    result = bt.fit(synthetic())
    assert result["elo"].mean() == pytest.approx(1500.0, abs=1e-9)
    theta = result["theta"].to_numpy()
    expected = 400 * (theta - theta.mean()) / math.log(10) + 1500
    assert np.allclose(result["elo"].to_numpy(), expected)


def test_it_matches_an_independent_maximum_likelihood_fit():
    frame = synthetic()
    result = bt.fit(frame)
    reference = reference_half_mle(frame, result.index)
    assert np.max(np.abs(result["elo"].to_numpy() - reference)) < 0.01


def test_it_matches_an_independent_fit_with_weights():
    frame = synthetic(seed=5)
    frame["weight"] = np.random.default_rng(0).choice([1.0, 1.5, 2.0], len(frame))
    result = bt.fit(frame)
    reference = reference_half_mle(frame, result.index)
    assert np.max(np.abs(result["elo"].to_numpy() - reference)) < 0.01


def test_a_weight_of_two_counts_like_a_duplicated_row():
    rows = [("A", "B", "a"), ("B", "C", "a"), ("C", "A", "tie"), ("A", "C", "b"), ("B", "A", "a")]
    weighted = comparisons(rows, weight=[2.0, 1, 1, 1, 1])
    duplicated = comparisons(rows + [rows[0]])
    assert np.allclose(bt.fit(weighted)["elo"], bt.fit(duplicated)["elo"])


def test_it_matches_an_independent_davidson_fit():
    frame = synthetic(k=5, n=2000, tie_share=0.25)
    result = bt.fit(frame, ties="davidson")
    systems = result.index
    a = systems.get_indexer(frame["system_a"])
    b = systems.get_indexer(frame["system_b"])
    outcome = frame["winner"].to_numpy()

    def nll(params):
        theta, log_nu = params[:-1], params[-1]
        half = 0.5 * (theta[a] - theta[b])
        log_denom = np.log(np.exp(half) + np.exp(-half) + np.exp(log_nu))
        log_p = np.where(outcome == "a", half, np.where(outcome == "b", -half, log_nu))
        return -(log_p - log_denom).sum()

    ref = minimize(nll, np.zeros(len(systems) + 1), method="BFGS", options={"gtol": 1e-9})
    assert np.max(np.abs(result["elo"].to_numpy() - bt.elo_from_theta(ref.x[:-1]))) < 0.01
    assert result.attrs["nu"] == pytest.approx(math.exp(ref.x[-1]), rel=1e-4)


def test_davidson_bootstrap_gives_intervals_around_the_estimate():
    result = bt.fit(
        synthetic(k=4, n=800, tie_share=0.3), ties="davidson", ci="bootstrap", bootstrap_rounds=30
    )
    assert (result["ci_low"] <= result["elo"]).all()
    assert (result["elo"] <= result["ci_high"]).all()
    assert (result["ci_high"] > result["ci_low"]).all()


def test_davidson_without_ties_is_plain_bradley_terry():
    frame = synthetic(tie_share=0.0)
    davidson = bt.fit(frame, ties="davidson")
    half = bt.fit(frame)
    assert davidson.attrs["nu"] == 0.0
    assert np.allclose(davidson["elo"], half["elo"].loc[davidson.index])
    assert np.allclose(davidson["se"], half["se"].loc[davidson.index])


def test_it_gives_finite_estimates_and_warns_when_a_system_always_wins():
    frame = comparisons(
        [("champ", "B", "a"), ("C", "champ", "b"), ("B", "C", "a"), ("C", "B", "a")] * 3
    )
    with pytest.warns(bt.BradleyTerryWarning, match=r"champ always wins against"):
        result = bt.fit(frame)
    assert np.isfinite(result[["theta", "elo", "se", "ci_low", "ci_high"]].to_numpy()).all()
    assert result.index[0] == "champ"


def test_it_gives_finite_estimates_and_names_the_components_of_a_disconnected_graph():
    frame = comparisons([("A", "B", "a"), ("B", "A", "a"), ("C", "D", "a"), ("D", "C", "tie")])
    with pytest.warns(bt.BradleyTerryWarning, match=r"disconnected.*: A and B; C and D\)"):
        result = bt.fit(frame, ci="bootstrap", bootstrap_rounds=50)
    assert np.isfinite(result[["elo", "se", "ci_low", "ci_high"]].to_numpy()).all()


def test_it_does_not_warn_on_well_connected_data():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bt.fit(synthetic())


def test_it_counts_comparisons_wins_and_win_rates_with_ties_as_half():
    frame = comparisons(
        [("A", "B", "a"), ("A", "B", "tie"), ("B", "C", "b"), ("C", "A", "a")],
        weight=[2.0, 1.0, 1.0, 1.0],
    )
    with pytest.warns(bt.BradleyTerryWarning):  # C never loses
        result = bt.fit(frame)
    assert result.loc["A", "n"] == 3
    assert result.loc["B", "n"] == 3
    assert result.loc["C", "n"] == 2
    assert result.loc["A", "wins"] == pytest.approx(2.5)  # 2 + half a tie
    assert result.loc["A", "win_rate"] == pytest.approx(2.5 / 4.0)
    assert result.loc["C", "win_rate"] == pytest.approx(1.0)


def test_paper_intervals_use_one_over_root_n_on_the_theta_scale():
    frame = synthetic()
    result = bt.fit(frame, ci="paper")
    expected = ELO_PER_THETA * np.sqrt(1.0 / result["n"].to_numpy())
    assert np.allclose(result["se"].to_numpy(), expected)
    assert np.allclose(result["ci_high"] - result["elo"], 1.959964 * expected, rtol=1e-6)


def test_bootstrap_intervals_are_reproducible_and_bracket_the_estimate():
    frame = synthetic()
    first = bt.fit(frame, ci="bootstrap", bootstrap_rounds=200, seed=7)
    second = bt.fit(frame, ci="bootstrap", bootstrap_rounds=200, seed=7)
    assert first.equals(second)
    assert (first["ci_low"] < first["elo"]).all()
    assert (first["elo"] < first["ci_high"]).all()


def test_bootstrap_resamples_contexts_not_single_comparisons():
    # One context holds every comparison: resampling contexts can only redraw it whole.
    frame = synthetic().assign(context="only-one")
    result = bt.fit(frame, ci="bootstrap", bootstrap_rounds=100)
    assert np.allclose(result["ci_low"], result["elo"])
    assert np.allclose(result["ci_high"], result["elo"])
    per_row = bt.fit(frame.drop(columns="context"), ci="bootstrap", bootstrap_rounds=100)
    assert (per_row["ci_high"] - per_row["ci_low"] > 1.0).all()


def test_bootstrap_spread_is_close_to_the_fisher_standard_error():
    frame = synthetic(n=6000).drop(columns="context")
    fisher = bt.fit(frame)
    boot = bt.fit(frame, ci="bootstrap", bootstrap_rounds=400).loc[fisher.index]
    assert np.allclose(boot["se"], fisher["se"], rtol=0.2)


def test_no_interval_gives_nan_bounds():
    result = bt.fit(synthetic(), ci=None)
    assert result["ci_low"].isna().all()
    assert result["elo"].notna().all()


def test_categorical_columns_give_the_same_fit_as_strings():
    frame = synthetic()
    as_categories = frame.astype({"system_a": "category", "system_b": "category"})
    as_categories["system_a"] = as_categories["system_a"].cat.add_categories(["never-seen"])
    pd.testing.assert_frame_equal(bt.fit(frame), bt.fit(as_categories).loc[bt.fit(frame).index])


def test_fit_matrix_agrees_with_fit_on_the_aggregated_matrix():
    frame = synthetic()
    agg = bt.aggregate(frame)
    theta, _, _ = bt.fit_matrix(agg.wins)
    result = bt.fit(frame).loc[agg.systems]
    assert np.allclose(bt.elo_from_theta(theta), result["elo"].to_numpy())


def test_aggregate_folds_half_ties_into_the_win_matrix():
    frame = comparisons([("A", "B", "a"), ("B", "A", "tie"), ("B", "A", "a")])
    agg = bt.aggregate(frame)
    a, b = agg.systems.get_indexer(["A", "B"])
    assert agg.wins[a, b] == pytest.approx(1.5)
    assert agg.wins[b, a] == pytest.approx(1.5)
    assert agg.ties[a, b] == agg.ties[b, a] == pytest.approx(1.0)
    strict = bt.aggregate(frame, ties="davidson")
    assert strict.wins[a, b] == pytest.approx(1.0)


def test_it_rejects_unknown_winners_and_self_comparisons():
    with pytest.raises(ValueError, match="winner"):
        bt.fit(comparisons([("A", "B", "A is better")]))
    with pytest.raises(ValueError, match="itself"):
        bt.fit(comparisons([("A", "A", "a")]))


def test_it_returns_an_empty_frame_for_no_comparisons():
    result = bt.fit(comparisons([]))
    assert result.empty
    assert {"theta", "elo", "ci_low", "ci_high", "n"} <= set(result.columns)


@pytest.mark.parametrize(
    ("scheme", "expected"),
    [
        ("none", [1.0, 1.0, 1.0, 1.0, 1.0]),
        ("raw", [1.0, 2.0, 5.0, 1.0, 1.0]),
        ("normalized", [1.0, 2.0, 2.0, 1.0, 1.0]),
    ],
)
def test_strength_weight_schemes(scheme, expected):
    strength = pd.Series([1.0, 2.0, 5.0, np.nan, 4.0])
    strength_max = pd.Series([2.0, 2.0, 5.0, 2.0, 5.0])
    winner = pd.Series(["a", "b", "a", "tie", "tie"])
    weights = bt.strength_weight(strength, strength_max, scheme, winner=winner)
    assert weights.tolist() == expected


def test_normalized_strength_maps_an_llm_scale_onto_one_to_two():
    weights = bt.strength_weight(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 5.0)
    assert np.allclose(weights, [1.0, 1.25, 1.5, 1.75, 2.0])
