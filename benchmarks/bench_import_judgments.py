"""Judgments JSONL import speed: N judgments (default 1,000,000) into a fresh study, then again.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_DB_SUFFIX=_me \
        .venv/bin/python benchmarks/bench_import_judgments.py --n 1000000

Prints the first import (everything written), the re-import (everything already present) and,
to show where the time goes, reading and validating the file alone (no database).

Uses its own database (`heart_bench_import` on PostgreSQL, dropped at the end; a temporary SQLite
file otherwise). The file has 300 contexts x 6 systems (4,500 pairs), human and LLM judges.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import bench_export  # noqa: E402  (database set-up helpers)

BENCH_DB = "heart_bench_import" + os.environ.get("BENCH_DB_SUFFIX", "")

SYSTEMS = [f"model-{i}" for i in range(6)]


def rows(n: int):
    pairs = [(c, a, b) for c in range(300) for i, a in enumerate(SYSTEMS) for b in SYSTEMS[i + 1 :]]
    for k in range(n):
        c, a, b = pairs[k % len(pairs)]
        judge = k // len(pairs)
        human = judge % 2 == 0
        yield {
            "context_id": f"ctx-{c}",
            "system_a": a,
            "system_b": b,
            "completion_a": f"{a} on {c}",
            "completion_b": f"{b} on {c}",
            "shown_left": "a",
            "judge": f"PANEL-{judge}" if human else f"llm-{judge}",
            "judge_kind": "human" if human else "llm",
            "judge_family": None if human else "gpt",
            "winner": "ab"[k % 2],
            "strength": 1,
            "strength_max": 2 if human else 5,
            "axes": {"H": {"winner": "a", "strength": 1}},
            "rationale": "r",
            "duration_ms": 9000,
            "submitted_at": "2026-01-01T00:00:00+00:00",
            "quality_check": False,
            "excluded": False,
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args()
    path = Path(f"/tmp/{BENCH_DB}.jsonl")
    with open(path, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows(args.n))
    base = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = bench_export.bench_database_url(base, name=BENCH_DB)
    bench_export.setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.judgment_io import judgments_import
    from annotation.judgment_sources import read_judgments
    from completions.models import Study

    call_command("migrate", verbosity=0)
    study = Study.objects.create(slug="bench", name="bench")
    try:
        for label in ("first import", "re-import"):
            start = time.perf_counter()
            report = judgments_import(study=study, path=path)
            took = time.perf_counter() - start
            print(
                f"{label:12s} {args.n:,} lines on {connection.vendor}: {took:.2f} s "
                f"({args.n / took:,.0f} lines/s); created {report.created:,}, "
                f"already present {report.already_present:,}"
            )
        start = time.perf_counter()
        read_judgments(path)
        took = time.perf_counter() - start
        print(
            f"{'validation':12s} {args.n:,} lines, no database: {took:.2f} s "
            f"({args.n / took:,.0f} lines/s)"
        )
    finally:
        connection.close()
        bench_export.bench_database_url(base, name=BENCH_DB, drop_only=True)
        path.unlink()


if __name__ == "__main__":
    main()
