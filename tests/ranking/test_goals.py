"""Adaptive sampling for a goal (ranking.goals): which pairs it plans, the planner, and a small
simulation with known strengths, written apart from the benchmark's, where finding the best
system takes far fewer judgments than uniform assignment."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ranking import bradley_terry, goals
from ranking.adaptive import ELO_SCALE

ELO = np.array([1660.0, 1620.0, 1560.0, 1520.0, 1480.0, 1440.0, 1390.0, 1330.0])
THETA = (ELO - ELO.mean()) / ELO_SCALE


def test_each_goal_names_the_pairs_whose_order_it_needs():
    theta = np.array([0.0, 0.3, -0.2, 0.1])  # board order: 1, 3, 0, 2
    assert goals.goal_pairs(theta, goals.Goal("best")) == [(1, 3), (1, 0), (1, 2)]
    top2 = goals.goal_pairs(theta, goals.Goal("top_k", k=2))
    assert sorted(top2) == [(1, 0), (1, 2), (3, 0), (3, 2)]
    assert goals.goal_pairs(theta, goals.Goal("anchor", anchor=0)) == [(1, 0), (3, 0), (0, 2)]
    assert goals.goal_pairs(theta, goals.Goal("order")) == [(1, 3), (3, 0), (0, 2)]
    with pytest.raises(ValueError):
        goals.Goal("anchor")
    with pytest.raises(ValueError):
        goals.Goal("worst")


def test_the_goal_is_reached_only_when_every_pair_clears_the_simultaneous_bound():
    theta = np.array([1.0, 0.0, -1.0])
    cov = np.diag([0.04, 0.04, 0.04])  # each difference has sd sqrt(0.08) = 0.283
    status = goals.goal_status(theta, cov, goals.Goal("best"))
    z = stats.norm.ppf(1 - 0.05 / 4)  # two statements at 95 % together
    assert status.z == pytest.approx(z)
    sd = 0.08**0.5
    assert z * sd < 1.0 and status.settled == [True, True]
    assert status.reached
    wide = goals.goal_status(theta, cov * 6, goals.Goal("best"))  # sd 0.69: z sd = 1.55
    assert wide.settled == [False, True] and not wide.reached


def test_best_sends_the_judgments_to_the_leaders_close_race():
    counts = np.full((8, 8), 20.0) - 20.0 * np.eye(8)
    weights = goals.goal_pair_weights(THETA, counts, goals.Goal("best"), batch=200)
    assert weights[np.triu_indices(8, 1)].sum() == pytest.approx(1.0)
    # The leader against its nearest contender gets the most; pairs without the leader or the
    # runner-up get only the floor share.
    assert np.unravel_index(np.argmax(weights), weights.shape) in {(0, 1), (1, 0)}
    far = [(i, j) for i in range(2, 8) for j in range(i + 1, 8)]
    assert sum(weights[i, j] for i, j in far) < 0.05


def test_anchor_and_order_plan_where_their_pairs_are():
    counts = np.full((8, 8), 20.0) - 20.0 * np.eye(8)
    anchor = goals.goal_pair_weights(THETA, counts, goals.Goal("anchor", anchor=4), batch=200)
    with_anchor = anchor[4].sum()
    assert with_anchor > 0.8  # pairs with the anchor system
    order = goals.goal_pair_weights(THETA, counts, goals.Goal("order"), batch=200)
    adjacent = sum(order[i, i + 1] for i in range(7))
    assert adjacent > 0.8


def test_the_planner_predicts_a_large_saving_for_the_best_at_close_strengths():
    plan = goals.goal_plan(THETA, goals.Goal("best"))
    assert plan.uniform is not None and plan.adaptive is not None
    assert plan.adaptive < plan.uniform and plan.saving is not None and plan.saving > 0.5
    tied = goals.goal_plan(np.array([0.0, 0.0, -1.0]), goals.Goal("best"))
    assert tied.uniform is None and tied.saving is None


# --------------------------------------------------------------------------- simulation


def _fit(wins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Theta and Elo covariance through the public fit on aggregated rows (weights = counts)."""
    k = len(wins)
    rows = [
        (f"s{i}", f"s{j}", "a", wins[i, j]) for i in range(k) for j in range(k) if wins[i, j] > 0
    ]
    frame = pd.DataFrame(rows, columns=["system_a", "system_b", "winner", "weight"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bradley_terry.BradleyTerryWarning)
        fitted = bradley_terry.fit_detailed(frame, ci="fisher")
    names = [f"s{i}" for i in range(k)]
    theta = fitted.table.loc[names, "theta"].to_numpy()
    cov = fitted.covariance.loc[names, names].to_numpy() / ELO_SCALE**2
    return theta, cov


def _best_found(theta: np.ndarray, cov: np.ndarray) -> bool:
    """The leader is ahead of every other system at 95 % for all of them together."""
    leader = int(np.argmax(theta))
    z = stats.norm.ppf(1 - 0.05 / (2 * (len(theta) - 1)))
    for j in range(len(theta)):
        if j != leader:
            var = cov[leader, leader] + cov[j, j] - 2 * cov[leader, j]
            if theta[leader] - theta[j] <= z * np.sqrt(var):
                return False
    return True


def _study(design: str, seed: int) -> tuple[int, bool]:
    """Judgments until the best is found, and whether it is the true best."""
    rng = np.random.default_rng(seed)
    k = len(THETA)
    wins, counts = np.zeros((k, k)), np.zeros((k, k))
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    picks = [p for p in pairs for _ in range(2)]  # a start of two verdicts per pair
    while True:
        for i, j in picks:
            i_wins = rng.random() < 1 / (1 + np.exp(THETA[j] - THETA[i]))
            winner, loser = (i, j) if i_wins else (j, i)
            wins[winner, loser] += 1
            counts[i, j] += 1
            counts[j, i] += 1
        n = int(counts.sum() // 2)
        theta, cov = _fit(wins)
        if _best_found(theta, cov) or n > 200_000:
            return n, int(np.argmax(theta)) == 0
        batch = max(50, n // 10)
        if design == "uniform":
            picks = [pairs[t % len(pairs)] for t in range(n, n + batch)]
        else:
            weights = goals.goal_pair_weights(theta, counts, goals.Goal("best"), batch=batch)
            flat = np.array([weights[i, j] for i, j in pairs])
            chosen = rng.choice(len(pairs), size=batch, p=flat / flat.sum())
            picks = [pairs[t] for t in chosen]


def test_finding_the_best_takes_far_fewer_judgments_than_uniform_assignment():
    uniform = [_study("uniform", seed) for seed in range(4)]
    adaptive = [_study("adaptive", seed + 100) for seed in range(4)]
    assert all(right for _, right in uniform + adaptive)  # the true best, every time
    saving = 1 - np.mean([n for n, _ in adaptive]) / np.mean([n for n, _ in uniform])
    assert saving > 0.5, saving
