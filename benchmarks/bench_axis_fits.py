"""Cost of the per-axis Bradley–Terry fits the leaderboard adds (five fits with a bootstrap).

    python benchmarks/bench_axis_fits.py [--judgments 42000] [--systems 20] [--rounds 1000]

Synthetic judgments with a mark on every axis for half of them; prints seconds per call.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking import report  # noqa: E402


def synthetic(n: int, k: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = rng.normal(size=k)
    a = rng.integers(0, k, size=n)
    b = (a + rng.integers(1, k, size=n)) % k
    p = 1 / (1 + np.exp(strength[b] - strength[a]))
    winner = np.where(rng.random(n) < p, "a", "b")
    frame = pd.DataFrame(
        {
            "system_a": [f"s{i}" for i in a],
            "system_b": [f"s{i}" for i in b],
            "winner": winner,
            "context": rng.integers(0, n // 20, size=n),
        }
    )
    for axis in report.AXES:
        marked = rng.random(n) < 0.5
        flip = rng.random(n) < 0.2
        axis_winner = np.where(flip, np.where(winner == "a", "b", "a"), winner)
        frame[f"axis_{axis}"] = pd.Series(axis_winner, dtype=object).where(marked, None).to_numpy()
    return frame


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judgments", type=int, default=42_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=1000)
    args = parser.parse_args()
    frame = synthetic(args.judgments, args.systems)
    order = sorted(set(frame["system_a"]) | set(frame["system_b"]))
    params = {"ci": "bootstrap", "bootstrap_rounds": args.rounds, "seed": 0, "alpha": 0.05}
    report.axis_fits(frame, order, params)  # warm-up
    start = time.perf_counter()
    fits = report.axis_fits(frame, order, params)
    elapsed = time.perf_counter() - start
    print(
        f"per-axis fits: {args.judgments} judgments, {args.systems} systems, "
        f"{len(fits['axes'])} axes x {args.rounds} bootstrap rounds: {elapsed:.2f} s"
    )


if __name__ == "__main__":
    main()
