"""Benchmark the style-controlled fit (ranking.style) beside the plain fit it sits next to.

Run from the repository root:

    python benchmarks/bench_style.py            # HEART-shaped: 20 systems, 300 contexts
    python benchmarks/bench_style.py --quick    # 100 contexts

Synthetic study with a known length bias: every context has replies from all 20 systems,
every pair of them is judged ``--judgments`` times, systems differ in how long they write and
the judges add ``--bias`` log-odds per SD of the normalised length difference. Prints the time
of the plain fit (Fisher and 1,000-round clustered bootstrap), of the style-controlled fit
(Fisher and bootstrap, on the same resampled source conversations), the estimated coefficient
against the true one, and how far each board's Elo is from the true strengths.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ranking import bradley_terry as bt  # noqa: E402
from ranking import style  # noqa: E402


def make_study(systems: int, contexts: int, judgments: int, bias: float, seed: int):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 0.5, systems)
    verbosity = rng.normal(0.0, 1.0, systems)
    length = np.maximum(5, rng.normal(60 + 25 * verbosity[None, :], 15, (contexts, systems)))
    a, b = np.triu_indices(systems, 1)
    ctx = np.repeat(np.arange(contexts), len(a))
    aa, bb = np.tile(a, contexts), np.tile(b, contexts)
    item = np.arange(len(aa))
    la, lb = length[ctx, aa].round(), length[ctx, bb].round()
    covariates = style.covariates(pd.DataFrame({"length": la}), pd.DataFrame({"length": lb}))[0]
    x = covariates["length"].to_numpy()
    rep = np.repeat(np.arange(len(aa)), judgments)
    p = 1.0 / (1.0 + np.exp(-(theta[aa[rep]] - theta[bb[rep]] + bias * x[rep])))
    u = rng.random(len(rep))
    winner = np.where(u < p - 0.05, "a", np.where(u < p + 0.05, "tie", "b"))
    names = np.array([f"model-{i:02d}" for i in range(systems)])
    frame = pd.DataFrame(
        {
            "system_a": names[aa[rep]],
            "system_b": names[bb[rep]],
            "winner": winner,
            "item": item[rep],
            "cluster": ctx[rep] // 2,  # two contexts cut from one source conversation
            "length": x[rep],
        }
    )
    return frame, pd.Series(bt.elo_from_theta(theta), index=names)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--contexts", type=int, default=300)
    parser.add_argument("--judgments", type=int, default=3, help="verdicts per pair")
    parser.add_argument("--bias", type=float, default=0.8)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    contexts = 100 if args.quick else args.contexts
    frame, true = make_study(args.systems, contexts, args.judgments, args.bias, args.seed)
    print(
        f"{args.systems} systems, {contexts} contexts, {len(frame):,} comparisons on "
        f"{frame['item'].nunique():,} pairs; true length bias {args.bias} per SD; "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    print(f"{'fit':<52}{'time s':>8}{'max |Elo - true|':>18}{'length coef [95% CI]':>26}")
    rows = [
        ("plain: bradley_terry.fit, Fisher", lambda: bt.fit(frame, ci="fisher"), None),
        (
            f"plain: bradley_terry.fit, bootstrap {args.rounds}",
            lambda: bt.fit(frame, ci="bootstrap", bootstrap_rounds=args.rounds),
            None,
        ),
        ("style: style.fit(length), Fisher", lambda: style.fit(frame, ["length"]), "style"),
        (
            f"style: style.fit(length), bootstrap {args.rounds}",
            lambda: style.fit(frame, ["length"], ci="bootstrap", bootstrap_rounds=args.rounds),
            "style",
        ),
    ]
    for label, run, kind in rows:
        seconds, result = timed(run)
        table = result.table if kind else result
        error = float(np.abs(table["elo"] - true.reindex(table.index)).max())
        coef = ""
        if kind:
            c = result.coefficients.loc["length"]
            coef = f"{c['coef']:.3f} [{c['ci_low']:.3f}, {c['ci_high']:.3f}]"
        print(f"{label:<52}{seconds:8.2f}{error:18.1f}{coef:>26}", flush=True)


if __name__ == "__main__":
    main()
