"""Raters, judges and the study measured: what the measures cost at the paper's size, and the
rater-weights simulation (10 % of the raters answering at random).

    .venv/bin/python benchmarks/bench_measures.py [--seeds 10] [--judgments 42000]

Prints the Spearman correlation with the true order of a clean study's board, of the same study
with 10 % random raters unweighted, weighted by reliability and without the outliers (mean over
seeds), then the seconds of the rater model, the judge audit and the split-half reliability on
``--judgments`` human verdicts (pure code, no database).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# As the web and worker processes run (heart_site/__init__.py): one BLAS thread. Threaded BLAS
# made the rater model's L-BFGS-B 20-35x slower on this 2-core machine under load.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    from ranking import bradley_terry, judge_audit, raters, study_quality
    from tests.ranking.test_raters import board_order, spearman, study

    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--judgments", type=int, default=42000)
    args = parser.parse_args()
    scores: dict[str, list[float]] = {
        "clean": [],
        "unweighted": [],
        "reliability": [],
        "no-outliers": [],
    }
    for seed in range(args.seeds):
        frame, truth = study(seed)
        honest, _ = study(seed, noisy_share=0.0)
        quality = raters.rater_quality(frame)
        scores["clean"].append(spearman(board_order(honest), truth))
        scores["unweighted"].append(spearman(board_order(frame), truth))
        for mode in ("reliability", "no-outliers"):
            factor = raters.judgment_weights(frame, quality, mode)
            scores[mode].append(spearman(board_order(frame, factor), truth))
    print(f"Spearman with the true order, mean over {args.seeds} seeds (12 systems, 40 raters):")
    for name, values in scores.items():
        print(f"  {name:<12} {np.mean(values):.4f}  (min {np.min(values):.4f})")

    contexts = max(1, round(args.judgments / 40))
    frame, _ = study(0, systems=18, contexts=contexts)
    print(f"\nTimes on {len(frame)} human verdicts, 18 systems:")
    started = time.perf_counter()
    raters.rater_quality(frame)
    print(f"  rater model + outlier test   {time.perf_counter() - started:.2f} s")
    llm = frame.assign(judge="judge-x", judge_kind="llm")
    both = frame.assign(cluster=(frame["context"] // 2).astype(str))
    both = pd.concat(
        [both, llm.assign(cluster=(llm["context"] // 2).astype(str))], ignore_index=True
    )
    started = time.perf_counter()
    judge_audit.judge_audit(both, min_human=2, n_boot=1000)
    print(f"  judge audit (1,000 bootstraps) {time.perf_counter() - started:.2f} s")
    comparisons = frame.assign(cluster=(frame["context"] // 2).astype(str))[
        ["system_a", "system_b", "winner", "cluster"]
    ]
    started = time.perf_counter()
    encoded = bradley_terry.encode(comparisons)  # as the refit does: each half a mask
    study_quality.split_half(comparisons, lambda half: bradley_terry.elo_of_rows(encoded, half))
    print(f"  split-half reliability (20 splits) {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
