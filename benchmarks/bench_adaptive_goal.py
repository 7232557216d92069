"""Adaptive sampling for a stated goal against uniform assignment, on simulated studies whose
true strengths are known.

    .venv/bin/python benchmarks/bench_adaptive_goal.py [--runs 10] [--goals best]

A simulated study has --systems systems whose true Elo follows the paper's leaderboard (1343 to
1612 Elo, interpolated; --spreads scales the gaps about the mean). Each judgment is a verdict
drawn from Bradley–Terry on the true Elo, a tie with probability --tie-rate (counted as half a
win each, as the board counts it). Verdicts are kept as a wins matrix and fitted with the
project's own fit (`ranking.bradley_terry.fit_matrix`, Fisher covariance from its Hessian).

Both designs start with two judgments of every system pair, then grow by --growth of their
judgments between refits (at least --min-batch). At each refit the goal is checked
(`ranking.goals.goal_status`: every goal pair separated at 95 % for the goal as a whole,
Bonferroni over its pairs); the study stops when it is reached, or at --cap judgments.

- uniform: every system pair in turn (the engine without adaptive assignment);
- adaptive: the next batch drawn with `ranking.goals.goal_pair_weights` (the function the
  refit stores for the claim), from the latest fit.

Printed per goal and spread, over --runs simulated studies: the mean judgments each design
needed, the saving, how often the stopped study's answer matched the TRUE order (the true
best, the true top k as a set, each system's true side of the anchor, the true order: the
share that must be about 95 %), what adaptive sampling costs the other systems' intervals
(their mean 95 % half-width against the uniform design's at the same number of judgments) and
the planner's prediction (`ranking.goals.goal_plan` on the true strengths).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking import bradley_terry, goals  # noqa: E402
from ranking.adaptive import ELO_SCALE  # noqa: E402

PAPER_ELO = [1611.8, 1604.0, 1587.5, 1561.8, 1552.7, 1540.9, 1539.1, 1531.8, 1510.0]
PAPER_ELO += [1504.0, 1495.9, 1477.7, 1471.0, 1441.2, 1427.9, 1415.0, 1384.6, 1343.1]
Z95 = 1.959964


def true_elo(n_systems: int, spread: float) -> np.ndarray:
    """The paper's Elo values, interpolated to ``n_systems`` and scaled about their mean."""
    paper = np.array(sorted(PAPER_ELO, reverse=True))
    grid = np.interp(np.linspace(0, len(paper) - 1, n_systems), np.arange(len(paper)), paper)
    return 1500.0 + spread * (grid - grid.mean())


@dataclass
class Outcome:
    judgments: int
    reached: bool
    correct: bool
    other_half_width: float  # mean 95 % half-width (Elo) of the systems outside the goal


class Simulation:
    """One simulated study: the verdicts so far as counts and a wins matrix."""

    def __init__(self, theta: np.ndarray, rng: np.random.Generator, tie_rate: float) -> None:
        self.theta, self.rng, self.tie_rate = theta, rng, tie_rate
        self.k = len(theta)
        self.counts = np.zeros((self.k, self.k))
        self.wins = np.zeros((self.k, self.k))
        self.n = 0
        self.fitted = np.zeros(self.k)
        self.upper = np.triu_indices(self.k, 1)

    def judge(self, per_pair: np.ndarray) -> None:
        """``per_pair``: judgments per upper-triangle pair."""
        i, j = self.upper
        p = 1.0 / (1.0 + np.exp(-(self.theta[i] - self.theta[j])))
        ties = self.rng.binomial(per_pair, self.tie_rate)
        won = self.rng.binomial(per_pair - ties, p)
        self.wins[i, j] += won + ties / 2
        self.wins[j, i] += per_pair - ties - won + ties / 2
        self.counts[i, j] += per_pair
        self.counts[j, i] += per_pair
        self.n += int(per_pair.sum())

    def fit(self) -> tuple[np.ndarray, np.ndarray]:
        theta, hess, _ = bradley_terry.fit_matrix(self.wins, theta0=self.fitted)
        self.fitted = theta
        cov = np.linalg.inv(hess + np.ones((self.k, self.k)) / self.k)
        centred = cov - cov.mean(axis=0) - cov.mean(axis=1, keepdims=True) + cov.mean()
        return theta, centred


def correct(theta_hat: np.ndarray, theta: np.ndarray, goal: goals.Goal) -> bool:
    """The stopped study's answer against the true strengths."""
    true_order, order = np.argsort(-theta), np.argsort(-theta_hat)
    if goal.kind in ("best", "top_k"):
        return set(order[: goal.top()]) == set(true_order[: goal.top()])
    if goal.kind == "anchor":
        a = int(goal.anchor or 0)
        return bool(np.all(np.sign(theta_hat - theta_hat[a]) == np.sign(theta - theta[a])))
    return bool(np.array_equal(order, true_order))


def others(theta: np.ndarray, goal: goals.Goal) -> np.ndarray:
    """The systems the goal does not ask about: outside the true top k + 1 for best and top k;
    every system but the anchor; every system for the order."""
    order = np.argsort(-theta)
    if goal.kind in ("best", "top_k"):
        return order[goal.top() + 1 :]
    if goal.kind == "anchor":
        return np.array([i for i in range(len(theta)) if i != goal.anchor])
    return order


def run(
    theta: np.ndarray, goal: goals.Goal, design: str, seed: int, args: argparse.Namespace
) -> Outcome:
    sim = Simulation(theta, np.random.default_rng(seed), args.tie_rate)
    n_pairs = len(sim.upper[0])
    sim.judge(np.full(n_pairs, 2))
    turn = 0
    while True:
        theta_hat, cov = sim.fit()
        status = goals.goal_status(theta_hat, cov, goal)
        if status.reached or sim.n >= args.cap:
            width = Z95 * ELO_SCALE * np.sqrt(np.clip(np.diag(cov), 0, None))
            rest = others(theta, goal)
            return Outcome(
                sim.n, status.reached, correct(theta_hat, theta, goal), float(width[rest].mean())
            )
        batch = max(args.min_batch, int(args.growth * sim.n))
        if design == "uniform":
            per_pair = np.full(n_pairs, batch // n_pairs)
            extra = (turn + np.arange(batch % n_pairs)) % n_pairs
            np.add.at(per_pair, extra, 1)
            turn = (turn + batch) % n_pairs
        else:
            weights = goals.goal_pair_weights(theta_hat, sim.counts, goal, batch=batch)
            flat = weights[sim.upper]
            per_pair = sim.rng.multinomial(batch, flat / flat.sum())
        sim.judge(per_pair)


def goals_for(k: int, top_k: int) -> list[goals.Goal]:
    return [
        goals.Goal("best"),
        goals.Goal("top_k", k=top_k),
        goals.Goal("anchor", anchor=k // 2),
        goals.Goal("order"),
    ]


def label(goal: goals.Goal) -> str:
    return {"top_k": f"top {goal.k}", "anchor": f"anchor #{(goal.anchor or 0) + 1}"}.get(
        goal.kind, goal.kind
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="simulated studies per cell")
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--spreads", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--goals", nargs="+", default=list(goals.GOALS), choices=goals.GOALS)
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--tie-rate", type=float, default=0.15)
    parser.add_argument("--growth", type=float, default=0.05, help="batch / judgments so far")
    parser.add_argument("--min-batch", type=int, default=100)
    parser.add_argument("--cap", type=int, default=5_000_000, help="judgments at most per study")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"{args.systems} systems (the paper's Elo x spread), ties {args.tie_rate}, "
        f"{args.runs} simulated studies per cell, refit every {args.growth:.0%} of the "
        f"judgments (at least {args.min_batch}), goal at 95 % (Bonferroni over its pairs)"
    )
    header = (
        f"{'spread':>6} {'goal':<10}{'uniform':>10}{'adaptive':>10}{'saving':>8}"
        f"{'right U':>9}{'right A':>9}{'others hw U':>13}{'others hw A':>13}{'cost':>7}"
        f"{'plan U':>10}{'plan A':>10}{'s':>5}"
    )
    print(header)
    for spread in args.spreads:
        elo = true_elo(args.systems, spread)
        theta = (elo - elo.mean()) / ELO_SCALE
        for goal in [g for g in goals_for(args.systems, args.top_k) if g.kind in args.goals]:
            started = time.perf_counter()
            seeds = [args.seed + 1000 * r for r in range(args.runs)]
            uni = [run(theta, goal, "uniform", s, args) for s in seeds]
            ada = [run(theta, goal, "adaptive", s + 1, args) for s in seeds]
            n_u = float(np.mean([o.judgments for o in uni]))
            n_a = float(np.mean([o.judgments for o in ada]))
            # The uniform design's interval at the adaptive design's judgments (width ~ 1/sqrt N).
            hw_u = float(np.mean([o.other_half_width * np.sqrt(o.judgments / n_a) for o in uni]))
            hw_a = float(np.mean([o.other_half_width for o in ada]))
            plan = goals.goal_plan(theta, goal, tie_rate=args.tie_rate)
            reached = min(np.mean([o.reached for o in uni]), np.mean([o.reached for o in ada]))
            right_u = np.mean([o.correct for o in uni])
            right_a = np.mean([o.correct for o in ada])
            print(
                f"{spread:>6g} {label(goal):<10}{n_u:>10,.0f}{n_a:>10,.0f}{1 - n_a / n_u:>8.0%}"
                f"{right_u:>9.0%}{right_a:>9.0%}"
                f"{hw_u:>13.1f}{hw_a:>13.1f}{hw_a / hw_u - 1:>+7.0%}"
                f"{plan.uniform or 0:>10,}{plan.adaptive or 0:>10,}"
                f"{time.perf_counter() - started:>5.0f}"
                + ("" if reached == 1 else f"  (cap reached in {1 - reached:.0%} of studies)")
            )
    print(
        "uniform/adaptive: mean judgments until the goal was reached; right: share of stopped "
        "studies whose answer matches the true strengths; others hw: mean 95 % half-width (Elo) "
        "of the systems the goal does not ask about, uniform read at the adaptive design's "
        "judgments; cost: how much wider adaptive leaves them; plan: the planner's prediction."
    )


if __name__ == "__main__":
    main()
