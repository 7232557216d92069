"""Benchmark ranking.bradley_terry against a reference MLE and peer implementations.

Run from the repository root:

    python benchmarks/bench_bradley_terry.py           # full run (a few minutes)
    python benchmarks/bench_bradley_terry.py --quick   # under a minute
    python benchmarks/bench_bradley_terry.py --bootstrap-only   # the bootstrap table alone

The bootstrap table fits 1,000 rounds in a fresh process per row and prints the time and the
process's peak resident memory (RSS), for the paper's 18 systems and for 200 systems x
1,000,000 comparisons, resampling contexts and resampling single comparisons.

See benchmarks/README.md for what each peer reproduces.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

# The script is run by path: make the repository root importable for `ranking`.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import peers  # noqa: E402
from ranking import bradley_terry as bt  # noqa: E402

TIE_SHARE = 0.15  # share of ties between equally strong systems


@dataclass
class Dataset:
    name: str
    comparisons: pd.DataFrame
    true_elo: pd.Series


def make_dataset(name: str, k: int, n: int, contexts: int, seed: int) -> Dataset:
    """BT-generated comparisons with ties whose expected score is still sigmoid(d).

    Pr(tie) = 2 * TIE_SHARE * min(p, 1 - p) and Pr(a wins) = p - Pr(tie) / 2, so the
    half-tie likelihood stays unbiased for the true strengths.
    """
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 0.8, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    tie = 2.0 * TIE_SHARE * np.minimum(p, 1.0 - p)
    u = rng.random(n)
    winner = np.where(u < p - tie / 2, "a", np.where(u < p + tie / 2, "tie", "b"))
    names = np.array([f"model-{i:03d}" for i in range(k)])
    frame = pd.DataFrame(
        {
            "system_a": names[a],
            "system_b": names[b],
            "winner": winner,
            "context": rng.integers(0, contexts, n),
        }
    )
    return Dataset(name, frame, pd.Series(bt.elo_from_theta(theta), index=names))


def best_time[T](fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def max_diff(left: pd.Series, right: pd.Series) -> float:
    return float(np.max(np.abs(left - right.reindex(left.index))))


class Table:
    """Prints one aligned row per (data set, method)."""

    HEADER = (
        f"{'data':<14}{'method':<46}{'time s':>9}{'x ours':>8}"
        f"{'|dElo| ours':>13}{'|dElo| ref':>12}{'|err| true':>12}"
    )

    def __init__(self) -> None:
        print(self.HEADER)
        print("-" * len(self.HEADER))

    def row(self, data: str, method: str, seconds: float, ours_s: float | None, **elos) -> None:
        """``elos``: ``elo`` and the series to compare it with: ``ours``, ``ref``, ``true``."""
        ratio = f"{seconds / ours_s:8.1f}" if ours_s else f"{'':>8}"
        cells = ""
        for name, width in (("ours", 13), ("ref", 12), ("true", 12)):
            other = elos.get(name)
            if "elo" in elos and other is not None:
                cells += f"{max_diff(elos['elo'], other):>{width}.3f}"
            else:
                cells += f"{'-':>{width}}"
        print(f"{data:<14}{method:<46}{seconds:9.3f}{ratio}{cells}", flush=True)


def run_point_fits(table: Table, data: Dataset, *, repeat: int, sklearn_ok: bool) -> None:
    frame, true = data.comparisons, data.true_elo
    row = partial(table.row, data.name)
    ours_s, result = best_time(lambda: bt.fit(frame), repeat)
    ours = result["elo"]
    ref_s, ref = best_time(lambda: peers.reference_mle(frame, ours.index), 1)
    row("ours: fit() from strings, Fisher CIs", ours_s, None, elo=ours, ref=ref, true=true)
    row("reference MLE: L-BFGS-B, unaggregated", ref_s, ours_s, elo=ref, ours=ours, true=true)
    inputs = peers.evalica_inputs(frame)
    peer_fits = {
        "(b) FastChat compute_bt, L-BFGS unique rows": lambda: peers.fastchat_compute_bt(frame),
        "(c) evalica.bradley_terry, defaults": lambda: peers.evalica_bt(*inputs),
    }
    if sklearn_ok:
        peer_fits["(a) sklearn LogisticRegression, dup. rows"] = partial(
            peers.sklearn_duplicated_rows, frame
        )
    for label, run in peer_fits.items():
        seconds, elo = best_time(run, 1 if label.startswith("(a)") else min(repeat, 3))
        row(label, seconds, ours_s, elo=elo, ours=ours, ref=ref, true=true)


def run_bootstraps(table: Table, data: Dataset, *, rounds: int, peer_rounds: int) -> None:
    frame = data.comparisons
    per_row = frame.drop(columns="context")
    ctx_s, ctx = best_time(lambda: bt.fit(frame, ci="bootstrap", bootstrap_rounds=rounds), 3)
    table.row(data.name, f"ours: {rounds} rounds, resampling contexts", ctx_s, None)
    row_s, rows = best_time(lambda: bt.fit(per_row, ci="bootstrap", bootstrap_rounds=rounds), 3)
    table.row(data.name, f"ours: {rounds} rounds, resampling comparisons", row_s, None)
    # Peers are compared with our comparison-level bootstrap at the same number of rounds.
    same = row_s
    if peer_rounds != rounds:
        same, _ = best_time(
            lambda: bt.fit(per_row, ci="bootstrap", bootstrap_rounds=peer_rounds), 3
        )
        table.row(data.name, f"ours: {peer_rounds} rounds, resampling comparisons", same, None)
    fc_s, fastchat = best_time(lambda: peers.fastchat_bootstrap_bt(frame, peer_rounds), 1)
    table.row(data.name, f"(b) FastChat Pool bootstrap, {peer_rounds} rounds", fc_s, same)
    inputs = peers.evalica_inputs(frame)
    ev_s, _ = best_time(lambda: peers.evalica_bootstrap(*inputs, peer_rounds), 1)
    table.row(data.name, f"(c) evalica.bootstrap, {peer_rounds} rounds", ev_s, same)
    centred = fastchat.sub(fastchat.mean(axis=1), axis=0) + 1500.0
    fc_width = (centred.quantile(0.975) - centred.quantile(0.025)).median()
    print(
        f"{'':<14}median 95% CI width: ours {_width(rows):.2f} Elo (comparisons), "
        f"{_width(ctx):.2f} Elo (contexts); FastChat {fc_width:.2f} Elo (comparisons)"
    )


def _width(result: pd.DataFrame) -> float:
    return float((result["ci_high"] - result["ci_low"]).median())


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def header(quick: bool, blas_threads: int | None) -> None:
    print(f"Bradley-Terry benchmark ({'quick' if quick else 'full'} run)")
    threads = blas_threads or "library default"
    print(f"BLAS threads: {threads}; load average at the start: {_load()}")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"pandas {pd.__version__}, {os.cpu_count()} CPUs, "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')!r} (left as is)"
    )
    print("time: best of several runs; x ours: peer time / our time on the same data")
    print("|dElo|: largest absolute Elo difference (every Elo centred on 1500) from ours,")
    print("the reference MLE, and the true strengths the data were generated from\n")


BOOTSTRAP_ROWS = [
    # (label, systems, comparisons, contexts or 0 for none)
    ("18 sys 42k", 18, 42_000, 300),
    ("18 sys 42k", 18, 42_000, 0),
    ("200 sys 1000k", 200, 1_000_000, 10_000),
    ("200 sys 1000k", 200, 1_000_000, 0),
]


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM; ru_maxrss survives exec on Linux, so a
    child would report its parent's peak)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bootstrap_child(k: int, n: int, contexts: int, rounds: int) -> None:
    """In a fresh process: time 'rounds' bootstrap rounds, print JSON with the peak RSS."""
    data = make_dataset("child", k=k, n=n, contexts=max(contexts, 1), seed=2)
    frame = data.comparisons if contexts else data.comparisons.drop(columns="context")
    before = peak_rss_mb()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = bt.fit(frame, ci="bootstrap", bootstrap_rounds=rounds)
    seconds = time.perf_counter() - start
    peak = peak_rss_mb()
    width = float((table["ci_high"] - table["ci_low"]).median())
    print(
        json.dumps(
            {
                "seconds": seconds,
                "rss_before_mb": before,
                "peak_mb": peak,
                "width": width,
                "mc_error": float(table["ci_mc_error"].max()),
            }
        )
    )


def run_bootstrap_table(rounds: int, blas_threads: int | None) -> None:
    print(f"\nBootstrap: {rounds} rounds, each row in a fresh process (time of the fit call;")
    print("peak RSS of the whole process, data included; 'before' = RSS with the data loaded)")
    print(
        f"{'data':<14}{'resampling':<14}{'time s':>9}{'peak RSS MB':>13}{'before MB':>11}"
        f"{'median CI width':>17}{'MC error max':>14}"
    )
    for label, k, n, contexts in BOOTSTRAP_ROWS:
        command = [
            sys.executable,
            __file__,
            "--child-bootstrap",
            str(k),
            str(n),
            str(contexts),
            str(rounds),
        ]
        if blas_threads:
            command += ["--blas-threads", str(blas_threads)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        unit = "contexts" if contexts else "comparisons"
        print(
            f"{label:<14}{unit:<14}{result['seconds']:9.2f}{result['peak_mb']:13.0f}"
            f"{result['rss_before_mb']:11.0f}{result['width']:17.2f}{result['mc_error']:14.2f}",
            flush=True,
        )


def run(quick: bool) -> None:
    big_n = 200_000 if quick else 1_000_000
    paper = make_dataset("18 sys 42k", k=18, n=42_000, contexts=300, seed=1)
    big = make_dataset(f"200 sys {big_n // 1000}k", k=200, n=big_n, contexts=10_000, seed=2)
    table = Table()
    run_point_fits(table, paper, repeat=10, sklearn_ok=True)
    run_point_fits(table, big, repeat=5, sklearn_ok=quick)
    if not quick:
        subset = Dataset("200 sys 200k", big.comparisons.iloc[:200_000], big.true_elo)
        run_point_fits(table, subset, repeat=5, sklearn_ok=True)
        print(f"{'':<14}(a) sklearn not run on 1M rows: its dense 2M x 200 design is 3.2 GB")
    print(f"\nBootstrap on {paper.name} (the peers resample single comparisons)")
    run_bootstraps(table, paper, rounds=1000, peer_rounds=50 if quick else 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller data, fewer peer rounds")
    parser.add_argument(
        "--bootstrap-only", action="store_true", help="only the bootstrap time/memory table"
    )
    parser.add_argument("--child-bootstrap", nargs=4, type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="limit BLAS threads for the whole run, every method alike (needs threadpoolctl)",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore", category=FutureWarning)
    limit = contextlib.nullcontext()
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        limit = threadpool_limits(limits=args.blas_threads, user_api="blas")
    if args.child_bootstrap:
        with limit:
            bootstrap_child(*args.child_bootstrap)
        return
    header(args.quick, args.blas_threads)
    with limit:
        if not args.bootstrap_only:
            run(args.quick)
    run_bootstrap_table(1000, args.blas_threads)
    print(f"\nload average at the end: {_load()}")


if __name__ == "__main__":
    main()
