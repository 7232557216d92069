"""Judgment export in constant memory: CSV, JSONL, Parquet and the API's paginated list
(`api`: every page of GET /api/studies/<slug>/judgments/, 1,000 rows a page) for N/10 vs N.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .venv/bin/python benchmarks/bench_export.py --n 1000000

On PostgreSQL it creates its own database `heart_bench_export` (dropped at the end unless
--keep); without DATABASE_URL it uses a temporary SQLite file. Two studies are filled with
bulk_create (N/10 and N judgments, half human raters, half LLM judges, per-axis marks and a
rationale on each). Every export runs in a fresh child process, which prints rows/s and its own
peak resident memory (the kernel's VmHWM of the child's address space) next to its resident
memory before the export: constant memory means the same peak for N/10 and N rows.

Why not getrusage's ru_maxrss: on Linux a process keeps, across exec, the peak of the process it
was forked from, so a child started by this (large, after filling the database) parent reported
the parent's peak, whatever the export did. Before 2026-11-25 this script printed that number.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = "heart_bench_export" + os.environ.get("BENCH_DB_SUFFIX", "")
SYSTEMS = 5
CONTEXTS = 1000
BATCH = 10_000


def _status_mb(field: str) -> float:
    """A memory field of /proc/self/status (VmRSS: now, VmHWM: peak) of this process's own
    address space, in MB; getrusage's ru_maxrss where there is no /proc (not this process's
    own peak on Linux: see the module's docstring)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    return _status_mb("VmRSS")


def peak_rss_mb() -> float:
    return _status_mb("VmHWM")


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heart_site.settings")
    os.environ.setdefault("SECRET_KEY", "benchmark-only-key-not-secret-0123456789abcdef")
    import django

    django.setup()


def bench_database_url(base: str | None, *, name: str = BENCH_DB, drop_only: bool = False) -> str:
    """A fresh database `name` for a benchmark: PostgreSQL next to DATABASE_URL, else SQLite.

    Every benchmark script uses this one helper with its own database name.
    """
    if not base or not base.startswith(("postgres://", "postgresql://")):
        path = Path("/tmp") / f"{name}.sqlite3"
        path.unlink(missing_ok=True)
        return f"sqlite:///{path}"
    import psycopg

    parts = urlsplit(base)
    admin = urlunsplit(parts._replace(scheme="postgresql", path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        if not drop_only:
            conn.execute(f"CREATE DATABASE {name}")
    return urlunsplit(parts._replace(path=f"/{name}"))


def fill(slug: str, n: int) -> None:
    """A study with CONTEXTS x SYSTEMS completions, all pairs, and n judgments."""
    from annotation.models import Judgment, Pair, Rater
    from completions.models import Completion, DialogueContext, Study, System

    study = Study.objects.create(slug=slug, name=slug, judgments_per_pair=30000)
    systems = System.objects.bulk_create(
        System(study=study, name=f"model-{i}", kind="model", family="gpt") for i in range(SYSTEMS)
    )
    turns = [
        {"speaker": "supporter", "text": "Hi, how are you?"},
        {"speaker": "seeker", "text": "I am overwhelmed at work and I do not know what to do."},
    ]
    contexts = DialogueContext.objects.bulk_create(
        (
            DialogueContext(study=study, external_id=f"{slug}-c{i}", turns=turns)
            for i in range(CONTEXTS)
        ),
        batch_size=BATCH,
    )
    completions = Completion.objects.bulk_create(
        (
            Completion(
                context=c, system=s, text=f"A caring reply by {s.name} to {c.external_id}. " * 3
            )
            for c in contexts
            for s in systems
        ),
        batch_size=BATCH,
    )
    by_context: dict[int, list[int]] = {}
    for comp in completions:
        by_context.setdefault(comp.context_id, []).append(comp.pk)
    pairs = Pair.objects.bulk_create(
        (
            Pair(study=study, context_id=ctx, completion_a_id=a, completion_b_id=b, quota=30000)
            for ctx, ids in by_context.items()
            for i, a in enumerate(ids)
            for b in ids[i + 1 :]
        ),
        batch_size=BATCH,
    )
    judges = -(-n // len(pairs))
    raters = Rater.objects.bulk_create(
        Rater(study=study, pseudonym=f"{slug}-r{i:06d}", external_id=f"PANEL-{slug}-{i}")
        for i in range(judges)
    )
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    axes = {"H": {"winner": "a", "strength": 2}, "E": {"winner": "b", "strength": 1}}

    def judgment(k: int) -> Judgment:
        pair, j = pairs[k % len(pairs)], k // len(pairs)
        human = j % 2 == 0
        return Judgment(
            study=study,
            pair=pair,
            judge_kind="human" if human else "llm",
            rater=raters[j] if human else None,
            judge=raters[j].pseudonym if human else f"llm-judge-{j}",
            judge_family="" if human else "gpt",
            winner="ab"[k % 2],
            strength=1 + k % 2,
            strength_max=2 if human else 5,
            axes=axes,
            rationale="The first reply reflects the feeling before advising.",
            shown_left="ab"[(k // 2) % 2],
            duration_ms=9000 + k % 5000,
            submitted_at=t0 + timedelta(seconds=k),
            source="bench",
        )

    for start in range(0, n, BATCH):
        Judgment.objects.bulk_create(
            [judgment(k) for k in range(start, min(n, start + BATCH))], batch_size=BATCH
        )


def api_child(slug: str, out: str) -> int:
    """Page through GET /api/studies/<slug>/judgments/ (1,000 a page) as a study admin,
    in process through the whole Django stack (no HTTP server); writes the rows as JSON Lines."""
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    user = User.objects.filter(username="bench-admin").first() or User.objects.create_superuser(
        "bench-admin", password="x"
    )
    client = APIClient()
    client.force_authenticate(user)
    url, rows = f"/api/studies/{slug}/judgments/?page_size=1000", 0
    with open(out, "w") as fh:
        while url:
            body = client.get(url, secure=True).json()  # production settings: HTTPS only
            fh.writelines(json.dumps(r) + "\n" for r in body["results"])
            rows += len(body["results"])
            url = body["next"]
    return rows


def export_child(slug: str, fmt: str, out: str) -> None:
    os.environ.setdefault("API_THROTTLE_USER", "100000000/minute")
    setup_django()
    from annotation.judgment_export import judgments_export
    from completions.models import Study

    study = Study.objects.get(slug=slug)
    before = rss_mb()
    start = time.perf_counter()
    if fmt == "api":
        rows = api_child(slug, out)
    else:
        rows = judgments_export(study=study, fmt=fmt, path=out)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "study": slug,
                "format": fmt,
                "rows": rows,
                "seconds": round(seconds, 2),
                "rows_per_s": round(rows / seconds),
                "rss_before_mb": round(before, 1),
                "peak_rss_mb": round(peak_rss_mb(), 1),
                "file_mb": round(os.path.getsize(out) / 2**20, 1),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="judgments in the big study")
    parser.add_argument("--formats", default="csv,jsonl,parquet,api")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    parser.add_argument(
        "--child", nargs=3, metavar=("SLUG", "FORMAT", "OUT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        return export_child(*args.child)
    base = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = bench_database_url(base)
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    sizes = {"bench-small": max(1, args.n // 10), "bench-big": args.n}
    print(f"this process (filling the database) before: {rss_mb():.1f} MB resident")
    for slug, n in sizes.items():
        start = time.perf_counter()
        fill(slug, n)
        print(
            f"created {n:,} judgments ({slug}) on {connection.vendor} in "
            f"{time.perf_counter() - start:.1f} s"
        )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # what autovacuum would do before anyone exports
            cursor.execute("ANALYZE")
    connection.close()
    print(
        f"this process after filling: {rss_mb():.1f} MB resident, peak {peak_rss_mb():.1f} MB "
        "(not counted in the exports' figures below)"
    )
    try:
        for fmt in args.formats.split(","):
            for slug in sizes:
                out = f"/tmp/{BENCH_DB}-{slug}.{fmt}"
                child = subprocess.run(
                    [sys.executable, __file__, "--child", slug, fmt, out],
                    env=os.environ,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                r = json.loads(child.stdout.strip().splitlines()[-1])
                print(
                    f"{fmt:8s} {r['rows']:>9,} rows  {r['seconds']:7.2f} s  "
                    f"{r['rows_per_s']:>8,} rows/s  RSS before {r['rss_before_mb']:6.1f} MB  "
                    f"peak {r['peak_rss_mb']:6.1f} MB  file {r['file_mb']:7.1f} MB"
                )
                os.unlink(out)
    finally:
        if not args.keep:
            bench_database_url(base, drop_only=True)


if __name__ == "__main__":
    main()
