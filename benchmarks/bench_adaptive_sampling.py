"""Adaptive against uniform assignment on synthetic studies like HEART's, with the project's fit.

    .venv/bin/python benchmarks/bench_adaptive_sampling.py --seeds 0 1 2 --budget 3000

A synthetic study has --systems systems whose true Elo follows the paper's leaderboard (1343 to
1612 Elo; more systems are interpolated, --spread scales the gaps) and --contexts contexts.
Each judgment is a 5-point verdict (A much / slightly better, tie, B slightly / much better,
i.e. winner plus strength 1-2 of 2, ties --tie-rate) drawn from Bradley–Terry on the true Elo,
counted as the leaderboard counts it (`ranking.board.comparisons_from_judgments`, normalised
strengths, ties half a win) and fitted with `ranking.bradley_terry.fit_detailed` (Fisher
intervals: a thousand bootstrap fits per point would take hours; both designs are read alike).

- uniform: what the engine does without adaptive assignment: every system pair gets the same
  number of judgments (the least-judged pair first), --budget judgments;
- adaptive: after a uniform warm-up of --batch judgments, each refit computes the engine's
  weights (`ranking.adaptive.pair_weights`, the same function the refit stores for the claim)
  and the next --batch judgments are drawn with them (on random contexts, at most --quota per
  context pair), until its width is at the uniform design's.

Printed per seed: the judgments the adaptive design needs to reach the uniform design's mean
95 % half-width of the differences between neighbouring systems on the board (what adaptive
assignment shrinks), and the per-system half-widths of both designs at that point; then the
planner check: the analytic half-width (`ranking.adaptive.mean_half_width`) against the fitted
one for the uniform design. Last, the bound: how many fewer judgments the A-optimal design
(`ranking.adaptive.optimal_design`) would need if the true strengths were known, for the
neighbour differences and for the per-system intervals; no rule that estimates the strengths
as it goes can beat it.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking import adaptive, board, bradley_terry  # noqa: E402

PAPER_ELO = [1611.8, 1604.0, 1587.5, 1561.8, 1552.7, 1540.9, 1539.1, 1531.8, 1510.0]
PAPER_ELO += [1504.0, 1495.9, 1477.7, 1471.0, 1441.2, 1427.9, 1415.0, 1384.6, 1343.1]


def true_elo(n_systems: int, spread: float) -> np.ndarray:
    """The paper's Elo values, interpolated to ``n_systems`` and scaled about their mean."""
    paper = np.array(sorted(PAPER_ELO, reverse=True))
    grid = np.interp(np.linspace(0, len(paper) - 1, n_systems), np.arange(len(paper)), paper)
    return 1500.0 + spread * (grid - grid.mean())


def verdicts(rng, elo, a, b, contexts, tie_rate) -> pd.DataFrame:
    """5-point verdicts on the pairs (a[n], b[n]) in the project's judgment columns."""
    p = 1.0 / (1.0 + 10 ** ((elo[b] - elo[a]) / 400.0))
    u = rng.random(len(a))
    winner = np.where(u < tie_rate, "tie", np.where(rng.random(len(a)) < p, "a", "b"))
    clear = np.abs(2 * p - 1)  # a clearer difference is more often "much better"
    strength = np.where(rng.random(len(a)) < 0.35 + 0.4 * clear, 2.0, 1.0)
    return pd.DataFrame(
        {
            "system_a": [f"s{i:02d}" for i in a],
            "system_b": [f"s{j:02d}" for j in b],
            "winner": winner,
            "strength": np.where(winner == "tie", np.nan, strength),
            "strength_max": 2.0,
            "context": contexts,
        }
    )


class Study:
    """Judgments so far on a synthetic study, with the per-context-pair cap."""

    def __init__(self, rng, elo, contexts: int, quota: int, tie_rate: float) -> None:
        self.rng, self.elo, self.tie_rate = rng, elo, tie_rate
        self.k, self.contexts, self.quota = len(elo), contexts, quota
        self.filled: dict[tuple[int, int, int], int] = {}
        self.frames: list[pd.DataFrame] = []
        self.n = 0

    def judge(self, pairs: list[tuple[int, int]]) -> None:
        chosen = [self._context(i, j) for i, j in pairs]
        a = np.array([i for i, _ in pairs])
        b = np.array([j for _, j in pairs])
        self.frames.append(verdicts(self.rng, self.elo, a, b, chosen, self.tie_rate))
        self.n += len(pairs)

    def _context(self, i: int, j: int) -> int:
        for _ in range(100):
            c = int(self.rng.integers(self.contexts))
            if self.filled.get((i, j, c), 0) < self.quota:
                self.filled[(i, j, c)] = self.filled.get((i, j, c), 0) + 1
                return c
        raise RuntimeError("the pair is full")

    def fit(self):
        judgments = pd.concat(self.frames, ignore_index=True)
        comparisons = board.comparisons_from_judgments(judgments, weights="normalized")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bradley_terry.BradleyTerryWarning)
            result = bradley_terry.fit_detailed(comparisons, ci="fisher")
        return comparisons, result


def uniform_pairs(k: int, n: int, start: int) -> list[tuple[int, int]]:
    """The least-judged pair first: every system pair in turn."""
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    return [pairs[(start + t) % len(pairs)] for t in range(n)]


def widths(result, systems: list[str]) -> tuple[float, float]:
    """(mean half-width of neighbouring differences, mean per-system half-width), Elo."""
    table = result.table
    cov = result.covariance.loc[table.index, table.index].to_numpy()
    contrasts = adaptive.neighbour_contrasts(table["theta"].to_numpy())
    neighbour = np.sqrt(np.einsum("ir,ij,jr->r", contrasts, cov, contrasts))
    per_system = (table["ci_high"] - table["ci_low"]).to_numpy() / 2
    return 1.96 * float(neighbour.mean()), float(per_system.mean())


def run_seed(args, seed: int) -> dict:
    elo = true_elo(args.systems, args.spread)
    systems = [f"s{i:02d}" for i in range(args.systems)]
    pairs = [(i, j) for i in range(args.systems) for j in range(i + 1, args.systems)]
    uniform = Study(np.random.default_rng(seed), elo, args.contexts, args.quota, args.tie_rate)
    uniform.judge(uniform_pairs(args.systems, args.budget, seed))
    _, uniform_fit = uniform.fit()
    target, uniform_system = widths(uniform_fit, systems)

    adaptive_study = Study(
        np.random.default_rng(seed + 10_000), elo, args.contexts, args.quota, args.tie_rate
    )
    adaptive_study.judge(uniform_pairs(args.systems, args.batch, seed))
    started = time.perf_counter()
    while True:
        comparisons, fitted = adaptive_study.fit()
        reached, adaptive_system = widths(fitted, systems)
        if reached <= target or adaptive_study.n >= 3 * args.budget:
            break
        theta, counts, weight = adaptive.fit_inputs(
            comparisons, fitted.table, systems=list(fitted.table.index)
        )
        order = [systems.index(name) for name in fitted.table.index]
        weights = adaptive.pair_weights(theta, counts, batch=args.batch, verdict_weight=weight)
        flat = np.array([weights[order.index(i), order.index(j)] for i, j in pairs])
        picks = adaptive_study.rng.choice(len(pairs), size=args.batch, p=flat / flat.sum())
        adaptive_study.judge([pairs[t] for t in picks])
    planned = np.ones((args.systems, args.systems)) * args.budget / len(pairs)
    np.fill_diagonal(planned, 0)
    theta_true = (elo - elo.mean()) / bradley_terry.ELO_SCALE
    analytic = adaptive.mean_half_width(
        theta_true, planned, verdict_weight=float(uniform.fit()[0]["weight"].mean())
    )
    return {
        "seed": seed,
        "uniform_judgments": args.budget,
        "adaptive_judgments": adaptive_study.n,
        "saving": 1 - adaptive_study.n / args.budget,
        "neighbour_half_width": target,
        "adaptive_neighbour_half_width": reached,
        "uniform_system_half_width": uniform_system,
        "adaptive_system_half_width": adaptive_system,
        "analytic_system_half_width": analytic,
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--contexts", type=int, default=300)
    parser.add_argument("--quota", type=int, default=5, help="judgments per context pair")
    parser.add_argument("--budget", type=int, default=3000, help="uniform design's judgments")
    parser.add_argument("--batch", type=int, default=100, help="judgments between refits")
    parser.add_argument("--spread", type=float, default=1.0, help="scale of the Elo gaps")
    parser.add_argument("--tie-rate", type=float, default=0.15)
    args = parser.parse_args()
    print(
        f"{args.systems} systems (paper Elo x {args.spread}), {args.contexts} contexts, "
        f"uniform budget {args.budget}, refit every {args.batch} judgments, ties {args.tie_rate}"
    )
    print(
        f"{'seed':>5}{'uniform':>9}{'adaptive':>10}{'saving':>8}{'nbr hw':>8}{'sys hw U':>10}"
        f"{'sys hw A':>10}{'analytic':>10}{'s':>6}"
    )
    rows = [run_seed(args, seed) for seed in args.seeds]
    for r in rows:
        print(
            f"{r['seed']:>5}{r['uniform_judgments']:>9}{r['adaptive_judgments']:>10}"
            f"{r['saving']:>8.0%}{r['neighbour_half_width']:>8.1f}"
            f"{r['uniform_system_half_width']:>10.1f}{r['adaptive_system_half_width']:>10.1f}"
            f"{r['analytic_system_half_width']:>10.1f}{r['seconds']:>6.0f}"
        )
    mean = np.mean([r["saving"] for r in rows])
    print(f"mean saving: {mean:.0%} fewer judgments for the same neighbour half-width")
    theta = (true_elo(args.systems, args.spread) - 1500.0) / bradley_terry.ELO_SCALE
    uniform = np.ones((args.systems, args.systems)) - np.eye(args.systems)
    for criterion, what in (("neighbours", "neighbour"), ("systems", "per-system")):
        best = adaptive.optimal_design(theta, criterion=criterion)
        bound = 1 - adaptive.design_criterion(
            theta, best, criterion=criterion
        ) / adaptive.design_criterion(theta, uniform, criterion=criterion)
        print(
            f"bound: the best fixed design, knowing the true strengths, needs {bound:.0%} fewer "
            f"judgments than uniform for the same {what} variance (ranking.adaptive.optimal_design)"
        )


if __name__ == "__main__":
    main()
