"""What the metrics middleware adds to one request, in CPU time, as gunicorn runs it.

    .venv/bin/python benchmarks/bench_metrics_overhead.py [--requests 200000]

Calls core.metrics.MetricsMiddleware around a view that does nothing, for a request that
resolved to the rater's submit view (the hot path: per-view histogram, response counter and the
round-trip histogram), in the two ways a process keeps its values: in memory (one process) and
in per-process files (PROMETHEUS_MULTIPROC_DIR, what gunicorn.conf.py sets up for several
workers). Each mode runs in a fresh interpreter (prometheus_client chooses at import). Prints
microseconds of CPU per request, to set against the round trip's few milliseconds of CPU
(bench_rater_throughput.py prints its "ms CPU per trip").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(requests: int) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.update(DJANGO_SETTINGS_MODULE="heart_site.settings", METRICS_TOKEN="bench")
    import django

    django.setup()
    from django.http import HttpResponse
    from django.test import RequestFactory
    from django.urls import resolve

    from core.metrics import MetricsMiddleware

    response = HttpResponse(b"item")
    request = RequestFactory().post("/r/a/token/submit/")
    request.resolver_match = resolve("/r/a/token/submit/")
    bare = MetricsMiddleware(lambda r: response)
    rounds = {}
    for name, call in (("no middleware", lambda: response), ("middleware", lambda: bare(request))):
        for _ in range(2000):  # warm-up (label children created, files mapped)
            call()
        started = time.process_time()
        for _ in range(requests):
            call()
        rounds[name] = (time.process_time() - started) / requests * 1e6
    print(json.dumps(rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.requests)
    print(f"{'values kept':<34}{'no middleware':>15}{'middleware':>12}{'added':>10}  (µs CPU)")
    for mode in ("in memory (one process)", "per-process files (gunicorn)"):
        env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        with tempfile.TemporaryDirectory(prefix="bench-metrics-") as directory:
            if mode.startswith("per-process"):
                env["PROMETHEUS_MULTIPROC_DIR"] = directory
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--requests", str(args.requests)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        added = r["middleware"] - r["no middleware"]
        print(f"{mode:<34}{r['no middleware']:>15.2f}{r['middleware']:>12.2f}{added:>10.2f}")


if __name__ == "__main__":
    main()
