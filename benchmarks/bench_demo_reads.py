"""The embedded demo's leaderboard over HTTP: the first read, and the read after new judgments.

    .venv/bin/python benchmarks/bench_demo_reads.py [--port 9180] [--reads 10]

What `make demo` runs, in a temporary SQLite file: `migrate`, `load_demo` (which leaves fresh
snapshots), then Django's development server with eager Celery (no worker, no Redis). A study
admin's session reads the leaderboard page (the default board, then split by emotion type)
and the cohort page; then new judgments arrive (an LLM judge's verdicts on 50 pairs) and the
page is read again: it answers from the old snapshot saying "updating", while the refit runs
in the server after the response. Prints each read's wall-clock milliseconds as the client
saw them (the whole body received), how long the refit took to land (the default board stored)
and to finish (every board), and the reads after it.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _env(db: Path) -> dict[str, str]:
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{db}", DEBUG="1")
    env.pop("REDIS_URL", None)
    env.setdefault("SECRET_KEY", "benchmark-only-key-not-secret-0123456789abcdef")
    return env


def _setup(db: Path) -> str:
    """Migrate, load the demo, and return a study admin's session key."""
    code = (
        "import django; django.setup();"
        "from django.core.management import call_command;"
        "call_command('migrate', verbosity=0);"
        "from studio.demo import load_demo; load_demo();"
        "from django.contrib.auth import get_user_model;"
        "from django.contrib.sessions.backends.db import SessionStore;"
        "user = get_user_model().objects.create_superuser('bench', password='x');"
        "s = SessionStore(); s['_auth_user_id'] = str(user.pk);"
        "s['_auth_user_backend'] = 'django.contrib.auth.backends.ModelBackend';"
        "s['_auth_user_hash'] = user.get_session_auth_hash(); s.create(); print(s.session_key)"
    )
    env = dict(_env(db), DJANGO_SETTINGS_MODULE="heart_site.settings")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip().splitlines()[-1]


def _add_judgments(db: Path) -> None:
    code = (
        "import django; django.setup();"
        "from annotation.models import Judgment, Pair;"
        "from completions.models import Study;"
        "study = Study.objects.get(slug='demo');"
        "pairs = list(Pair.objects.filter(study=study).order_by('id')[:50]);"
        "Judgment.objects.bulk_create(Judgment(study=study, pair=p, judge_kind='llm',"
        " judge='late-judge', judge_family='other', winner='a', strength=3, strength_max=5,"
        " shown_left='a', source='import') for p in pairs)"
    )
    env = dict(_env(db), DJANGO_SETTINGS_MODULE="heart_site.settings")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)


def _get(url: str, session: str) -> tuple[float, str]:
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={session}"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        body = response.read().decode()
    return 1000 * (time.perf_counter() - start), body


def _status(body: str) -> str:
    marker = 'data-status="'
    at = body.find(marker)
    return body[at + len(marker) : body.find('"', at + len(marker))] if at >= 0 else "?"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=9180)
    parser.add_argument("--reads", type=int, default=10)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; load average at the start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.sqlite3"
        start = time.perf_counter()
        session = _setup(db)
        print(f"migrate + load_demo (boards fitted): {time.perf_counter() - start:.1f} s")
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{args.port}", "--noreload"],
            cwd=ROOT,
            env=_env(db),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _run(f"http://127.0.0.1:{args.port}", session, db, args.reads)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def _refits_running(db: Path) -> bool:
    with sqlite3.connect(db) as conn:
        (n,) = conn.execute(
            "SELECT count(*) FROM ranking_refitjob WHERE status IN ('queued', 'running')"
        ).fetchone()
    return bool(n)


def _run(base: str, session: str, db: Path, reads: int) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    board = f"{base}/studio/demo/leaderboard/"
    pages = [
        ("leaderboard page", board),
        ("split by emotion_type", f"{board}?by=emotion_type"),
        ("cohort page", f"{board}cohorts/"),
    ]
    for name, url in pages:
        first, body = _get(url, session)
        times = sorted(_get(url, session)[0] for _ in range(reads))
        print(
            f"{name:24s} first read {first:6.0f} ms ({_status(body)}); next {reads}: "
            f"p50 {times[len(times) // 2]:.0f} ms, max {times[-1]:.0f} ms"
        )
    _add_judgments(db)
    after, body = _get(board, session)
    print(f"{'after new judgments':24s} read {after:6.0f} ms ({_status(body)})")
    start = time.perf_counter()
    status, took = _status(body), after
    while status != "current" and time.perf_counter() - start < 300:
        time.sleep(0.5)
        took, body = _get(board, session)
        status = _status(body)
    print(
        f"{'refit landed':24s} after {time.perf_counter() - start:.1f} s; that read "
        f"{took:.0f} ms ({status})"
    )
    # The refit stores the default board first; the server may still be fitting the others
    # (and the splits) in the same process while that read runs. The reads once it is done:
    start = time.perf_counter()
    while _refits_running(db) and time.perf_counter() - start < 300:
        time.sleep(0.5)
    print(f"{'refit finished':24s} after {time.perf_counter() - start:.1f} s more")
    times = sorted(_get(board, session)[0] for _ in range(reads))
    print(
        f"{'after the refit':24s} next {reads}: p50 {times[len(times) // 2]:.0f} ms, "
        f"max {times[-1]:.0f} ms"
    )


if __name__ == "__main__":
    main()
