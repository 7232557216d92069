"""How often each interval the board shows covers the truth: simulated studies of HEART's shape
with known strengths, fitted through the board's own code (the same simulation as
tests/ranking/test_coverage.py, larger).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_coverage.py [--replicates 200] [--seed 0]

Prints, per interval, the intervals counted, their coverage with its binomial standard error,
the mean width in Elo and the seconds taken.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ranking import board, bradley_terry, coverage, style  # noqa: E402

TIES = {"human": 0.15, "llm": 0.0}


def board_fit(params):
    def fit(comparisons):
        if params["ties"] == "drop":
            comparisons = comparisons[comparisons["winner"] != "tie"]
        return board.fit_board(comparisons, params)[0].table

    return fit


def style_fit(ci):
    def fit(comparisons):
        return style.fit(comparisons, ["length"], ci=ci).table

    return fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--conversations", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore", bradley_terry.BradleyTerryWarning)
    design = coverage.paper_design(
        systems=args.systems, conversations=args.conversations, seed=args.seed
    )
    small = coverage.paper_design(systems=args.systems, conversations=20, seed=args.seed + 1)
    theta = coverage.spread_strengths(sorted(set(design["system_a"])), 270.0)
    rng = np.random.default_rng(args.seed)
    length = rng.normal(0, 1, design["item"].max() + 1)[design["item"].to_numpy()]
    styled = design.assign(length=length / np.sqrt((length**2).mean()), offset=0.3 * length)
    paper = design.assign(weight=np.where(design["judge_kind"] == "human", design["weight"], 1.0))
    default = board.params_resolve("default")
    quick = board.quick_params(default)
    runs = [
        ("default: bootstrap over conversations", design, board_fit(default), 1),
        ("quick boards: robust (sandwich)", design, board_fit(quick), 4),
        ("small category: robust (sandwich)", small, board_fit(quick), 4),
        ("Fisher (--ci fisher)", design, board_fit(dict(default, ci="fisher")), 4),
        ("paper preset: SE = sqrt(1/n)", paper, board_fit(board.params_resolve("paper")), 4),
        ("style board: bootstrap", styled, style_fit("bootstrap"), 1),
        ("style board: robust (sandwich)", styled, style_fit("sandwich"), 4),
    ]
    print(
        f"{args.systems} systems, {args.conversations} conversations x 2 contexts, 5 pairs a "
        f"context, 5 human verdicts a pair ({len(design):,} comparisons), 15% human ties, "
        f"strengths over 270 Elo; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'interval':<40}{'intervals':>10}{'coverage':>10}{'± SE':>7}{'width':>8}{'s':>7}")
    for label, frame, fit, scale in runs:
        replicates = max(1, args.replicates * scale // 4) if scale > 1 else args.replicates // 4
        start = time.perf_counter()
        result = coverage.coverage(
            frame, theta, fit, replicates=replicates, seed=args.seed + 1, tie_share=TIES
        )
        print(
            f"{label:<40}{result.intervals:>10}{result.rate:>10.3f}"
            f"{result.standard_error():>7.3f}{result.mean_width:>8.1f}"
            f"{time.perf_counter() - start:>7.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
