"""Peak memory of the web worker while the API imports a large judgments file.

    BENCH_DB_SUFFIX=_me DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        flock /tmp/heart-cpu.lock .venv/bin/python benchmarks/bench_api_import_memory.py \\
        [--mb 100] [--port 8151]

Makes its own database (`heart_bench_api_import` + BENCH_DB_SUFFIX, dropped at the end), a
study admin with an API token and a judgments file of about --mb megabytes (contract format,
with both reply texts on every line, as an export carries them), starts gunicorn as production
runs it (one worker process, so that worker alone does the import), uploads the file with curl
(`POST /api/studies/<slug>/imports/`, multipart, streamed from disk) and prints the worker's
peak resident memory (VmHWM) before and after, the time and the answer.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_export import bench_database_url  # noqa: E402

BENCH_DB = "heart_bench_api_import" + os.environ.get("BENCH_DB_SUFFIX", "")
REPLY = "It sounds like a lot to carry on your own, and it makes sense that you feel tired. "


def write_file(path: Path, megabytes: int) -> int:
    """Judgments over 2,000 contexts x 3 systems' pairs, one judge id per line group."""
    pairs = [("model-a", "model-b"), ("model-a", "model-c"), ("model-b", "model-c")]
    target = megabytes * 1024 * 1024
    lines = 0
    with open(path, "w", encoding="utf-8") as fh:
        judge = 0
        while fh.tell() < target:
            for context in range(2000):
                for a, b in pairs:
                    row = {
                        "context_id": f"ctx-{context}",
                        "system_a": a,
                        "system_b": b,
                        "completion_a": f"{a}: {REPLY}({context})",
                        "completion_b": f"{b}: {REPLY}({context})",
                        "judge": f"rater-{judge}",
                        "judge_kind": "human",
                        "winner": "ab"[(context + judge) % 2],
                        "strength": 1,
                        "rationale": "The first reply names the feeling; the second rushes.",
                    }
                    fh.write(json.dumps(row) + "\n")
                    lines += 1
            judge += 1
    return lines


def worker_pid(master: int) -> int:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return int(children[0])


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--port", type=int, default=8151)
    args = parser.parse_args()
    base = os.environ.get("DATABASE_URL")
    url = bench_database_url(base, name=BENCH_DB)
    env = dict(os.environ)
    env.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="benchmarks.bench_settings",
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        PYTHONPATH=str(ROOT),
        GUNICORN_WORKERS="1",  # one worker process does the import: its peak is the figure
        GUNICORN_THREADS="1",
    )
    env.pop("REDIS_URL", None)  # the import answers in the request; no broker involved
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    setup = (
        "from django.contrib.auth import get_user_model;"
        "from completions.models import Study;"
        "get_user_model().objects.create_superuser('bench', 'b@example.org', 'pw-bench-123');"
        "Study.objects.create(slug='bench-import', name='Bench import')"
    )
    subprocess.run([*manage, "shell", "-c", setup], env=env, check=True, cwd=ROOT)
    token = subprocess.run(
        [*manage, "api_token", "bench"],
        env=env,
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    folder = Path(tempfile.mkdtemp(prefix="bench-api-import-"))
    path = folder / "judgments.jsonl"
    lines = write_file(path, args.mb)
    size_mb = path.stat().st_size / 1024 / 1024
    gunicorn = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "gunicorn.conf.py"),
         "--timeout", "900", "--bind", f"127.0.0.1:{args.port}", "heart_site.wsgi:application"],
        env=env, cwd=ROOT, start_new_session=True,
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{args.port}/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.2)
        worker = worker_pid(gunicorn.pid)
        before = peak_rss_mb(worker)
        started = time.perf_counter()
        answer = subprocess.run(
            ["curl", "-sS", "-o", str(folder / "answer.json"), "-w", "%{http_code}",
             "-H", f"Authorization: Token {token}", "-H", "Host: localhost",
             "-F", "kind=judgments", "-F", f"file=@{path}",
             f"http://127.0.0.1:{args.port}/api/studies/bench-import/imports/"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        seconds = time.perf_counter() - started
        after = peak_rss_mb(worker)
        body = json.loads((folder / "answer.json").read_text() or "{}")
    finally:
        os.killpg(gunicorn.pid, signal.SIGTERM)
        gunicorn.wait(30)
        for item in folder.iterdir():
            item.unlink()
        folder.rmdir()
        bench_database_url(base, name=BENCH_DB, drop_only=True)
    print(f"file: {size_mb:.1f} MB, {lines:,} lines")
    print(f"answer: HTTP {answer}, created {body.get('report', {}).get('created')}")
    print(f"time: {seconds:.1f} s ({lines / seconds:,.0f} lines/s)")
    print(f"web worker peak RSS: {before:.0f} MB before the upload, {after:.0f} MB after")


if __name__ == "__main__":
    main()
