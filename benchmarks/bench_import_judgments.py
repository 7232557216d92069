"""Judgments JSONL import speed: N judgments (default 1,000,000) into a fresh study, then again.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_DB_SUFFIX=_me \
        .venv/bin/python benchmarks/bench_import_judgments.py --n 1000000 [--systems 200] [--refit]

Prints the first import (everything written), the re-import (everything already present),
reading and validating the file alone (no database) and, on PostgreSQL, the floor: the same
rows, as the import stored them, written again into the same table by one raw binary `COPY`
(the rows read out with `COPY ... TO STDOUT (FORMAT BINARY)` beforehand, deleted, copied back
and their deferred constraints checked, all inside a transaction rolled back afterwards), with
the import's rate as a share of it. With --refit, the imported study's full refit and the
leaderboard read from its snapshot afterwards. --keep leaves the database for a later
`--again --refit` (the refit and reads alone, on the study as imported: its snapshots and
"system added" events deleted first; for a profiler).

Uses its own database (`heart_bench_import` on PostgreSQL, dropped at the end unless --keep; a
temporary SQLite file otherwise). The file has 300 contexts x --systems systems (default 6:
4,500 pairs; 200: 5,970,000 possible pairs, of which the lines use the first N), human and LLM
judges.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import bench_export  # noqa: E402  (database set-up helpers)

BENCH_DB = "heart_bench_import" + os.environ.get("BENCH_DB_SUFFIX", "")


def rows(n: int, n_systems: int = 6):
    systems = [f"model-{i}" for i in range(n_systems)]
    pairs = [(c, a, b) for i, a in enumerate(systems) for b in systems[i + 1 :] for c in range(300)]
    pairs = pairs[: max(1, min(len(pairs), n // 2))]  # every pair judged at least twice
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
    parser.add_argument("--systems", type=int, default=6)
    parser.add_argument(
        "--refit",
        action="store_true",
        help="then refit the imported study's leaderboard (every section) and read it back",
    )
    parser.add_argument("--reads", type=int, default=10)
    parser.add_argument(
        "--import-only",
        action="store_true",
        help="the first import alone (no re-import, raw COPY or validation): with --refit",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the database afterwards (PostgreSQL), for --again or a profiler",
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="no import: refit and read the study a --keep run left (with --refit)",
    )
    args = parser.parse_args()
    if args.again:
        return refit_again(args.reads)
    path = Path(f"/tmp/{BENCH_DB}.jsonl")
    with open(path, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows(args.n, args.systems))
    print(f"{os.cpu_count()} CPUs; load average at the start: {os.getloadavg()[0]:.1f}")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "0")  # the reads go through the test client
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
        rates = {}
        for label in ("first import",) if args.import_only else ("first import", "re-import"):
            start = time.perf_counter()
            report = judgments_import(study=study, path=path)
            took = time.perf_counter() - start
            rates[label] = args.n / took
            print(
                f"{label:12s} {args.n:,} lines on {connection.vendor}: {took:.2f} s "
                f"({args.n / took:,.0f} lines/s); created {report.created:,}, "
                f"already present {report.already_present:,}"
            )
        if connection.vendor == "postgresql" and not args.import_only:
            copied, took = raw_copy(study.pk)
            print(
                f"{'raw COPY':12s} {copied:,} rows, binary, same table: {took:.2f} s "
                f"({copied / took:,.0f} rows/s); the first import ran at "
                f"{rates['first import'] / (copied / took):.0%} of it"
            )
        if not args.import_only:
            start = time.perf_counter()
            read_judgments(path)
            took = time.perf_counter() - start
            print(
                f"{'validation':12s} {args.n:,} lines, no database: {took:.2f} s "
                f"({args.n / took:,.0f} lines/s)"
            )
        if args.refit:
            refit_and_read(study, args.reads)
    finally:
        connection.close()
        if args.keep:
            print(f"kept the database {BENCH_DB}: drop it when done")
        else:
            bench_export.bench_database_url(base, name=BENCH_DB, drop_only=True)
        path.unlink()


def refit_again(n_reads: int) -> None:
    """Refit and read the study of the database a --keep run left."""
    base = os.environ["DATABASE_URL"]
    parts = urlsplit(base)
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{BENCH_DB}"))
    os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
    bench_export.setup_django()
    from completions.models import Study
    from ranking.models import BoardEvent, BoardEventKind, LeaderboardSnapshot

    study = Study.objects.get(slug="bench")
    # As the import left it: no snapshot to confirm, no "system added" on record.
    LeaderboardSnapshot.objects.filter(study=study).delete()
    BoardEvent.objects.filter(study=study, kind=BoardEventKind.SYSTEM_ADDED).delete()
    print(f"{os.cpu_count()} CPUs; load average at the start: {os.getloadavg()[0]:.1f}")
    refit_and_read(study, n_reads)


def refit_and_read(study, n_reads: int) -> None:
    """The full refit of the imported study (the three default boards, every section,
    agreement, stored), then the pages and the API reading the stored snapshot."""
    from benchmarks.bench_leaderboard_refit import peak_rss_mb, reads
    from ranking import services

    start = time.perf_counter()
    snaps = services.snapshot_refit_study(study_id=study.pk, trigger="command")
    took = time.perf_counter() - start
    print(
        f"{'full refit':12s} load + 3 boards (every section) + agreement + store: {took:.1f} s; "
        f"snapshots {[s.duration_ms for s in snaps]} ms, comparisons "
        f"{[s.n_comparisons for s in snaps]}"
    )
    for name, p50, p95 in reads(study, n_reads):
        print(f"{'read':12s} the leaderboard ({name}): p50 {p50:.0f} ms, p95 {p95:.0f} ms")
    print(f"{'peak RSS':12s} {peak_rss_mb():.0f} MB")


def raw_copy(study_id: int) -> tuple[int, float]:
    """Rows copied and seconds: the study's judgments written again by one raw binary COPY.

    The rows are read out first (not timed), then, in a transaction rolled back at the end,
    deleted and copied back; the deferred foreign-key checks run before the clock stops, as
    the import's run at its commit.
    """
    import io

    from django.db import connection, transaction

    from annotation.models import Judgment

    table = Judgment._meta.db_table
    columns = ", ".join(str(f.column) for f in Judgment._meta.concrete_fields)
    select = f"SELECT {columns} FROM {table} WHERE study_id = {int(study_id)}"
    buffer = io.BytesIO()
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY ({select}) TO STDOUT (FORMAT BINARY)") as copy:
            for block in copy:
                buffer.write(block)
        cursor.execute(f"SELECT count(*) FROM {table} WHERE study_id = %s", [study_id])
        count = cursor.fetchone()[0]
    data = buffer.getvalue()
    took = 0.0
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE study_id = %s", [study_id])
            start = time.perf_counter()
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
                for at in range(0, len(data), 1 << 20):
                    copy.write(data[at : at + (1 << 20)])
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            took = time.perf_counter() - start
        transaction.set_rollback(True)
    return count, took


if __name__ == "__main__":
    main()
