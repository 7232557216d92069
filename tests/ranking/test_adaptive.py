"""Adaptive design maths (ranking/adaptive.py) against hand-computed and refitted values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from ranking import adaptive, bradley_terry

Z95 = 1.959963984540054


def _complete(k: int, n: float) -> np.ndarray:
    counts = np.full((k, k), n)
    np.fill_diagonal(counts, 0)
    return counts


def test_one_verdict_between_equals_carries_a_quarter():
    info = adaptive.comparison_information(np.zeros(3))
    assert info[0, 1] == pytest.approx(0.25) and info[1, 1] == 0


def test_the_covariance_of_a_complete_design_matches_the_hand_value():
    # L = 0.25 n (3 I - J); Var(theta_i - theta_j) = 2 / (0.75 n) = 8 / (3 n).
    cov = adaptive.covariance(_complete(3, 12), adaptive.comparison_information(np.zeros(3)), 0)
    d = np.array([1.0, -1.0, 0.0])
    assert d @ cov @ d == pytest.approx(8 / 36)


def test_the_gain_is_the_exact_drop_of_the_neighbour_variances():
    theta = np.array([0.8, 0.1, -0.9])
    counts = np.array([[0, 5, 2], [5, 0, 7], [2, 7, 0]], float)
    info = adaptive.comparison_information(theta, 1.3)
    contrasts = adaptive.neighbour_contrasts(theta)

    def total(c):
        cov = adaptive.covariance(c, info)
        return np.einsum("ir,ij,jr->", contrasts, cov, contrasts)

    gains = adaptive.pair_gains(adaptive.covariance(counts, info), info, contrasts)
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        more = counts.copy()
        more[i, j] += 1
        more[j, i] += 1
        assert gains[i, j] == pytest.approx(total(counts) - total(more), rel=1e-9)


def test_weights_favour_neighbours_over_far_apart_systems_and_sum_to_one():
    theta = np.array([2.0, 0.0, -2.0])
    weights = adaptive.pair_weights(theta, _complete(3, 10), batch=100)
    assert weights[np.triu_indices(3, 1)].sum() == pytest.approx(1.0)
    assert weights[0, 2] < weights[0, 1] and weights[0, 2] < weights[1, 2]
    assert weights[0, 2] > 0  # the floor keeps every open pair reachable


def test_a_closed_pair_gets_no_weight():
    open_pairs = np.ones((3, 3), bool)
    open_pairs[0, 1] = open_pairs[1, 0] = False
    weights = adaptive.pair_weights(np.zeros(3), _complete(3, 4), batch=20, open_pairs=open_pairs)
    assert weights[0, 1] == 0 and weights[1, 2] > 0


def test_the_stopping_rule_matches_the_hand_values_for_two_systems():
    # 400 verdicts at p = 0.6: Var(diff) = 1 / (400 p (1 - p)) on the logit scale.
    theta = np.array([math.log(0.6 / 0.4) / 2, -math.log(0.6 / 0.4) / 2])
    counts = np.array([[0, 400], [400, 0]], float)
    (status,) = adaptive.pair_statuses(theta, counts)
    sd = adaptive.ELO_SCALE / math.sqrt(400 * 0.24)
    assert status.difference == pytest.approx(adaptive.ELO_SCALE * math.log(1.5))
    assert status.half_width == pytest.approx(Z95 * sd, rel=1e-4)
    assert status.separated  # 70.4 Elo against a half-width of 34.7


def test_an_unseparated_pair_is_separated_after_the_judgments_it_is_told_it_needs():
    theta = np.array([0.1, -0.1])
    counts = np.array([[0, 50], [50, 0]], float)
    (status,) = adaptive.pair_statuses(theta, counts)
    assert not status.separated and status.judgments_needed > 0
    more = counts + status.judgments_needed * (1 - np.eye(2))
    (after,) = adaptive.pair_statuses(theta, more)
    assert after.separated
    (before,) = adaptive.pair_statuses(theta, more - 2 * (1 - np.eye(2)))
    assert not before.separated


def test_a_tie_is_never_promised_separation():
    (status,) = adaptive.pair_statuses(np.zeros(2), np.array([[0, 10], [10, 0]], float))
    assert status.judgments_needed is None


def test_the_planned_half_width_matches_the_hand_value():
    # Two equal systems, n verdicts: Var(theta_1 - mean) = Var(diff) / 4 = 1 / n.
    counts = np.array([[0, 100], [100, 0]], float)
    width = adaptive.mean_half_width(np.zeros(2), counts)
    assert width == pytest.approx(Z95 * adaptive.ELO_SCALE / 10, rel=1e-4)


def test_judgments_for_a_half_width_scale_as_the_inverse_square():
    design = _complete(5, 1)
    at_1000 = adaptive.mean_half_width(np.zeros(5), design * 100)  # 10 pairs x 100
    assert adaptive.judgments_for_half_width(np.zeros(5), design, at_1000) == 1000
    assert adaptive.judgments_for_half_width(np.zeros(5), design, at_1000 / 2) == 4000


def test_the_planned_half_width_agrees_with_fits_of_simulated_studies():
    rng = np.random.default_rng(3)
    elo = np.linspace(1380, 1620, 8)
    theta = (elo - elo.mean()) / adaptive.ELO_SCALE
    pairs = [(i, j) for i in range(8) for j in range(i + 1, 8)]
    fitted = []
    for _ in range(5):
        a, b = np.array(pairs * 40).T
        p = 1 / (1 + np.exp(theta[b] - theta[a]))
        winner = np.where(rng.random(len(a)) < p, "a", "b")
        frame = pd.DataFrame({"system_a": a.astype(str), "system_b": b.astype(str)})
        table = bradley_terry.fit(frame.assign(winner=winner), ci="fisher")
        fitted.append(((table["ci_high"] - table["ci_low"]) / 2).mean())
    planned = adaptive.mean_half_width(theta, _complete(8, 40))
    assert np.mean(fitted) == pytest.approx(planned, rel=0.05)


def _criterion_by_scipy(theta, criterion):
    """The A-optimal design found by a general constrained optimiser (SLSQP on the simplex)."""
    k = len(theta)
    upper = np.triu_indices(k, 1)

    def objective(share):
        design = np.zeros((k, k))
        design[upper] = share
        return adaptive.design_criterion(theta, design + design.T, criterion=criterion)

    n = len(upper[0])
    found = optimize.minimize(
        objective,
        np.full(n, 1.0 / n),
        method="SLSQP",
        bounds=[(1e-9, 1.0)] * n,
        constraints=[{"type": "eq", "fun": lambda s: s.sum() - 1.0}],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    return found.fun


@pytest.mark.parametrize("criterion", ["neighbours", "systems"])
def test_the_optimal_design_matches_a_general_optimiser(criterion):
    theta = np.array([1.2, 0.5, 0.3, -0.4, -1.6])
    design = adaptive.optimal_design(theta, criterion=criterion)
    ours = adaptive.design_criterion(theta, design, criterion=criterion)
    assert design[np.triu_indices(5, 1)].sum() == pytest.approx(1.0)
    assert ours == pytest.approx(_criterion_by_scipy(theta, criterion), rel=1e-4)


def test_between_equals_the_uniform_design_is_already_optimal_for_the_systems():
    theta = np.zeros(6)
    design = adaptive.optimal_design(theta, criterion="systems")
    uniform = np.ones((6, 6)) - np.eye(6)
    assert adaptive.design_criterion(theta, design, criterion="systems") == pytest.approx(
        adaptive.design_criterion(theta, uniform, criterion="systems"), rel=1e-6
    )
