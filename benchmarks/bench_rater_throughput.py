"""Rater throughput: "submit + next item" round trips against gunicorn + PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/12 \
        .venv/bin/python benchmarks/bench_rater_throughput.py --seconds 30

What it does:
1. creates the database `heart_bench_rater` (dropped at the end unless --keep), migrates it and
   generates a study (--contexts x 5 systems, 10 pairs per context, quota 5, 10 % quality
   checks seeded from the rubric) and --raters consented raters, each with the signed rater
   cookie a browser holds after consent (raters have no server-side session);
2. starts gunicorn (--worker-class, --workers processes x --threads threads; defaults gthread
   2 x 4 as in gunicorn.conf.py; persistent DB connections; no access log) with the production
   settings; the only change (benchmarks/bench_settings.py) is plain static storage, so no
   collectstatic manifest is needed;
3. runs the load generator in a separate process (asyncio with a minimal keep-alive HTTP/1.1
   client, at most --connections connections; each rater sends its own rater and CSRF
   cookies):
   - open phase: every rater thinks an exponential time (mean --think s) between round trips;
     one round trip = the htmx POST that stores a judgment and returns the next item;
   - closed phase: --closed-clients raters submit back to back (max throughput);
4. checks the database afterwards: one Judgment row per successful round trip, no pair over
   quota, no rater with a pair twice; prints round trips/s, p50/p95/p99 latency and errors.

Note: 1,000 raters thinking 10 s each offer about 100 round trips/s, so the open phase measures
latency at that load, and the closed phase measures the sustainable maximum.

Changes (2026-11-25): it refuses to start when something already listens on --port, and it
measures only once the server answering there echoes this run's nonce (benchmarks/bench_urls.py):
a server left running on the default port had passed the health check and been measured instead.
gunicorn now reads gunicorn.conf.py too (its hooks set up metrics when METRICS_TOKEN is set); the
layout flags still override it. Run with and without METRICS_TOKEN to see what metrics cost.

Changes (2026-11-22): the load generator used httpx, which cost it several ms of CPU per request
on the two cores it shares with gunicorn and PostgreSQL; it now speaks HTTP/1.1 itself (the same
requests on the wire: form-encoded POST, session + CSRF cookie, X-CSRFToken, HX-Request) and its
CPU is reported. --worker-class is honoured (it was ignored) and the default gunicorn layout
follows gunicorn.conf.py. The work per round trip and the database checks are unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, so benchmarks/ is on sys.path (the checker knows it as benchmarks.bench_export).
from bench_export import bench_database_url  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = os.environ.get("BENCH_DB_NAME", "heart_bench_rater")
SUBMIT = re.compile(rb'action="/r/a/([^/"]+)/submit/"')


# --- setup (in this process, with Django) ---------------------------------------------------


def server_env(database_url: str, redis_url: str) -> dict:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        DEBUG="0",
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        CONN_MAX_AGE="600",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="bench_settings",
        PYTHONPATH=f"{ROOT / 'benchmarks'}:{ROOT}",
    )
    return env


def build(args) -> list[dict]:
    """Migrate, generate the study and the raters; returns each rater's cookies."""
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone
    from django.utils.crypto import get_random_string

    from annotation.models import Pair, Rater
    from annotation.quality import quality_items_seed_from_rubric
    from completions.models import Completion, DialogueContext, Study, System

    call_command("migrate", verbosity=0)
    study = Study.objects.create(
        slug="bench",
        name="Bench",
        items_per_rater=100_000,
        quality_check_rate=0.1,
        judgments_per_pair=5,
        status="open",  # its pairs are made below, before any rater comes
    )
    systems = System.objects.bulk_create(
        System(study=study, name=f"bench-system-{i}", kind="model", family=f"fam{i}")
        for i in range(5)
    )
    turns = [
        {"speaker": "supporter", "text": "Hi, how are you today?"},
        {"speaker": "seeker", "text": "Honestly I'm struggling at work and can't sleep."},
    ]
    contexts = DialogueContext.objects.bulk_create(
        DialogueContext(study=study, external_id=f"c{i}", turns=turns) for i in range(args.contexts)
    )
    completions = Completion.objects.bulk_create(
        Completion(
            context=c,
            system=s,
            text=f"That sounds exhausting ({c.external_id}, {j}). What has been the hardest part?",
        )
        for c in contexts
        for j, s in enumerate(systems)
    )
    by_context: dict[int, list] = {}
    for comp in completions:
        by_context.setdefault(comp.context_id, []).append(comp)
    Pair.objects.bulk_create(
        Pair(study=study, context_id=cid, completion_a=a, completion_b=b, quota=5)
        for cid, comps in by_context.items()
        for i, a in enumerate(comps)
        for b in comps[i + 1 :]
    )
    quality_items_seed_from_rubric(study=study)
    if args.adaptive:  # served in the order a refit planned (uniform weights: no judgments yet)
        import numpy as np

        from ranking.design import priorities_write

        Study.objects.filter(pk=study.pk).update(adaptive_assignment=True)
        k = len(systems)
        weights = np.full((k, k), 1.0 / (k * (k - 1)))
        priorities_write(study=study, systems=[s.name for s in systems], weights=weights)
    now = timezone.now()
    raters = Rater.objects.bulk_create(
        Rater(study=study, pseudonym=f"r-bench{i:05d}", consented_at=now)
        for i in range(args.raters)
    )
    from django.db import connection

    # Fresh statistics, as autovacuum gathers them in a running study. Taken after the raters
    # exist: with the rater table analysed empty, the planner hash-joins every rater of the
    # study into the submit's assignment lookup (1 ms instead of 0.1 ms).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    from django.conf import settings

    from annotation.access import RATER_COOKIE, rater_cookie_value

    # What a browser holds after consent: the signed rater cookie (no server-side session).
    cookies = [
        {
            "rater": f"{RATER_COOKIE}={rater_cookie_value([rater.token])}",
            "csrf": get_random_string(32),
        }
        for rater in raters
    ]
    print(
        f"setup: {Pair.objects.count()} pairs (adaptive assignment "
        f"{'on' if args.adaptive else 'off'}), "
        f"{len(raters)} raters, signed rater cookie "
        f"(no session read), database engine {settings.DATABASES['default']['ENGINE']}",
        flush=True,
    )
    return [{**c, "invite": study.invite_token} for c in cookies]


def verify(accepted_tokens: set[str]) -> dict:
    from collections import Counter

    from django.db.models import F

    from annotation.models import Judgment, Pair

    rows = list(Judgment.objects.values_list("assignment__token", "rater_id", "pair_id"))
    stored = {t for t, _, _ in rows}
    pairs = Counter((r, p) for _, r, p in rows if p is not None)
    return {
        "judgments_stored": len(rows),
        "accepted_round_trips_without_row": len(accepted_tokens - stored),
        "pairs_over_quota": Pair.objects.filter(n_judgments__gt=F("quota")).count(),
        "rater_pair_duplicates": sum(1 for n in pairs.values() if n > 1),
    }


# --- the load generator (separate process, no Django) --------------------------------------


class _ClosedBeforeReply(Exception):
    """The connection was closed before a single byte of the reply arrived."""


class Http11Pool:
    """A minimal keep-alive HTTP/1.1 client on asyncio streams, for the load generator only.

    httpx cost the load generator several ms of CPU per request on the same two cores as the
    server, so it measured its own overhead as much as the server. Requests and responses are
    the same bytes on the wire (form-encoded POSTs, Content-Length bodies).
    """

    def __init__(self, host: str, port: int, size: int, timeout: float = 30.0) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.slots = asyncio.Semaphore(size)  # at most `size` requests (connections) at once
        self.idle: list = []

    async def request(self, method: str, path: str, headers: dict, body: bytes = b""):
        async with self.slots:
            reused = bool(self.idle)
            try:
                return await self._request(method, path, headers, body)
            except _ClosedBeforeReply:
                if not reused:
                    raise
                # The server had closed this idle keep-alive connection (gunicorn's keepalive
                # timeout) before the request reached it: send it again on a new connection,
                # as browsers and HTTP libraries do. Nothing was processed.
                return await self._request(method, path, headers, body, fresh=True)

    async def _request(self, method, path, headers, body, fresh: bool = False):
        if self.idle and not fresh:
            reader, writer = self.idle.pop()
        else:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), self.timeout
            )
        try:
            status, data, keep = await asyncio.wait_for(
                self._exchange(reader, writer, method, path, headers, body), self.timeout
            )
        except BaseException:
            writer.close()
            raise
        if keep:
            self.idle.append((reader, writer))
        else:  # e.g. gunicorn's sync workers close every connection
            writer.close()
        return status, data

    async def _exchange(self, reader, writer, method, path, headers, body):
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body or method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        try:
            status_line = await reader.readline()
        except ConnectionError as exc:
            raise _ClosedBeforeReply from exc
        if not status_line:
            raise _ClosedBeforeReply
        status = int(status_line.split(b" ", 2)[1])
        length, keep = 0, True
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                keep = False
            elif name == b"transfer-encoding":
                raise RuntimeError("chunked responses are not supported")
        return status, await reader.readexactly(length), keep


async def _round_trip(client: Http11Pool, rater: dict, stats: dict) -> bool:
    headers = {
        "Cookie": f"{rater['rater']}; csrftoken={rater['csrf']}",
        "X-CSRFToken": rater["csrf"],
        "HX-Request": "true",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    body = f"choice={random.randint(1, 5)}".encode()
    started = time.perf_counter()
    try:
        status, content = await client.request(
            "POST", f"/r/a/{rater['token']}/submit/", headers, body
        )
    except Exception as exc:  # noqa: BLE001 - any transport error counts as an error
        stats["errors"].append(repr(exc)[:200])
        return False
    latency = time.perf_counter() - started
    match = SUBMIT.search(content)
    if status != 200 or match is None:
        stats["errors"].append(f"HTTP {status}")
        return False
    stats["accepted"].append(rater["token"])
    stats["latencies"].append(latency)
    stats["done_at"].append(time.perf_counter())
    rater["token"] = match.group(1).decode()
    return True


async def _first_item(client: Http11Pool, rater: dict) -> None:
    headers = {"Cookie": f"{rater['rater']}; csrftoken={rater['csrf']}"}
    _, content = await client.request("GET", f"/r/{rater['invite']}/item/", headers)
    found = SUBMIT.search(content)
    if found is None:
        raise RuntimeError("the item page has no submit form")
    rater["token"] = found.group(1).decode()


async def _loadgen(host: str, port: int, raters: list[dict], args) -> dict:
    client = Http11Pool(host, port, args.connections)
    sem = asyncio.Semaphore(50)

    async def warm(r):
        async with sem:
            await _first_item(client, r)

    await asyncio.gather(*(warm(r) for r in raters))
    results: dict[str, Any] = {}
    # Open phase: Poisson-ish think times, every rater independently.
    stats: dict[str, list[Any]] = {"latencies": [], "done_at": [], "errors": [], "accepted": []}
    start = time.perf_counter()
    deadline = start + args.seconds

    async def thinker(r):
        await asyncio.sleep(random.uniform(0, args.think))  # arrivals spread from t=0
        while time.perf_counter() < deadline:
            await _round_trip(client, r, stats)
            left = deadline - time.perf_counter()  # no thinking past the end of the phase
            await asyncio.sleep(max(0.0, min(random.expovariate(1 / args.think), left)))

    await asyncio.gather(*(thinker(r) for r in raters))
    results["open"] = _summary(stats, start, deadline)
    # Closed phase: back to back, a fixed number of raters in flight.
    stats_c: dict[str, list[Any]] = {"latencies": [], "done_at": [], "errors": [], "accepted": []}
    start = time.perf_counter()
    deadline = start + args.closed_seconds

    async def hammer(r):
        while time.perf_counter() < deadline:
            await _round_trip(client, r, stats_c)

    await asyncio.gather(*(hammer(r) for r in raters[: args.closed_clients]))
    results["closed"] = _summary(stats_c, start, deadline)
    results["accepted"] = stats["accepted"] + stats_c["accepted"]
    return results


def _summary(stats: dict, start: float, deadline: float) -> dict:
    lat = sorted(stats["latencies"])
    window = [t for t in stats["done_at"] if t <= deadline]

    def pct(p: float) -> float:
        return round(1000 * lat[min(len(lat) - 1, int(p * len(lat)))], 1) if lat else float("nan")

    return {
        "round_trips": len(lat),
        "round_trips_per_s": round(len(window) / (deadline - start), 1),
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "mean_ms": round(1000 * statistics.fmean(lat), 1) if lat else float("nan"),
        "errors": len(stats["errors"]),
        "error_samples": sorted(set(stats["errors"]))[:5],
    }


def loadgen_main(args) -> None:
    raters = json.loads(Path(args.loadgen).read_text())
    results = asyncio.run(_loadgen("127.0.0.1", args.port, raters, args))
    print(json.dumps(results))


# --- orchestration --------------------------------------------------------------------------


def port_free(port: int) -> bool:
    """Nothing listens on 127.0.0.1:port (so the server answering there will be ours)."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def start_gunicorn(args, env: dict) -> subprocess.Popen:
    """gunicorn with gunicorn.conf.py's hooks (metrics) and the benchmark's layout; returns once
    the server that answers on the port is the one started here (it echoes this run's nonce)."""
    if not port_free(args.port):
        raise SystemExit(
            f"port {args.port} is already in use by another process: stop it or pass --port "
            "(the benchmark would otherwise measure a server it did not start)"
        )
    nonce = secrets.token_hex(16)
    env = {**env, "HEART_BENCH_NONCE": nonce}
    cmd = [
        str(ROOT / ".venv/bin/gunicorn"),
        "heart_site.wsgi:application",
        "-c",
        str(ROOT / "gunicorn.conf.py"),
        "-k",
        args.worker_class,
        "-w",
        str(args.workers),
        "--threads",
        str(args.threads),
        "-b",
        f"127.0.0.1:{args.port}",
        "--keep-alive",
        "30",
        "--backlog",
        "2048",
        "--log-level",
        "warning",
        "--chdir",
        str(ROOT),
    ]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    import httpx

    base = f"http://127.0.0.1:{args.port}"
    for _ in range(100):
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with {proc.returncode}")
        try:
            answer = httpx.get(f"{base}/_bench/nonce", timeout=1)
            if answer.status_code == 200 and answer.text != nonce:
                raise SystemExit(f"another server answers on port {args.port}: not measuring it")
            if answer.text == nonce and httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit("gunicorn did not come up")


def scrape_round_trips(port: int) -> float | None:
    """With METRICS_TOKEN set: the round trips the server's /metrics counted (all workers)."""
    token = os.environ.get("METRICS_TOKEN")
    if not token:
        return None
    import httpx

    text = httpx.get(
        f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"}
    ).text
    counts = re.findall(r"^heart_rater_round_trip_seconds_count\{[^}]*\} (\S+)$", text, re.M)
    return sum(float(c) for c in counts)


def process_tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its children (the gunicorn workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pids = [pid]
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            pids += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    for p in set(pids):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
    return total


def workers_rss_mb(pid: int) -> list[float]:
    """Resident memory (MB) of each gunicorn worker (the children of the arbiter `pid`)."""
    children: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            children += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    sizes = []
    for child in sorted(set(children)):
        try:
            status = Path(f"/proc/{child}/status").read_text()
        except OSError:
            continue
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
        sizes.append(round(kb / 1024, 1))
    return sizes


def _children_cpu_s(before) -> float:
    """CPU seconds of the reaped children since `before`: the load generator (gunicorn, still
    running, is not reaped yet)."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def machine_busy_s() -> float:
    """CPU seconds (all cores) the whole machine spent busy: PostgreSQL, Redis, everyone."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raters", type=int, default=1000)
    parser.add_argument("--think", type=float, default=10.0, help="mean think time (s)")
    parser.add_argument("--seconds", type=float, default=30.0, help="open phase length")
    parser.add_argument("--closed-seconds", type=float, default=15.0)
    parser.add_argument("--closed-clients", type=int, default=32)
    parser.add_argument("--contexts", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--worker-class", default="gthread", choices=["gthread", "sync"])
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    parser.add_argument(
        "--adaptive", action="store_true", help="the study uses adaptive assignment"
    )
    parser.add_argument("--loadgen", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.loadgen:
        return loadgen_main(args)

    if not port_free(args.port):  # checked again when gunicorn starts
        raise SystemExit(f"port {args.port} is already in use by another process: pass --port")
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        raise SystemExit("set DATABASE_URL to a PostgreSQL server (the benchmark needs one)")
    redis_url = os.environ.get("REDIS_URL", "")
    database_url = bench_database_url(base, name=BENCH_DB)
    env = server_env(database_url, redis_url)
    os.environ.update(
        {
            k: env[k]
            for k in (
                "DATABASE_URL",
                "REDIS_URL",
                "DEBUG",
                "DJANGO_SETTINGS_MODULE",
                "CONN_MAX_AGE",
            )
        }
    )
    raters = build(args)
    from django.db import connections

    connections.close_all()
    server = start_gunicorn(args, env)
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump(raters, fh)
        print(
            f"gunicorn {args.worker_class} {args.workers}x{args.threads}; {args.raters} raters, "
            f"think {args.think} s, open {args.seconds} s, closed {args.closed_clients} clients "
            f"{args.closed_seconds} s; load generator in its own process",
            flush=True,
        )
        rss_start = workers_rss_mb(server.pid)
        cpu_before, busy_before, wall_before = (
            process_tree_cpu_s(server.pid),
            machine_busy_s(),
            time.perf_counter(),
        )
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--loadgen",
                fh.name,
                "--port",
                str(args.port),
                "--think",
                str(args.think),
                "--seconds",
                str(args.seconds),
                "--closed-seconds",
                str(args.closed_seconds),
                "--closed-clients",
                str(args.closed_clients),
                "--connections",
                str(args.connections),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        results = json.loads(out.stdout.strip().splitlines()[-1])
        results["cpu"] = {
            "gunicorn_cpu_s": round(process_tree_cpu_s(server.pid) - cpu_before, 1),
            "machine_busy_cpu_s": round(machine_busy_s() - busy_before, 1),
            "loadgen_cpu_s": round(_children_cpu_s(children_before), 1),
            "wall_s": round(time.perf_counter() - wall_before, 1),
            "cores": os.cpu_count(),
        }
        results["metrics"] = scrape_round_trips(args.port)
        results["rss_mb"] = {"start": rss_start, "end": workers_rss_mb(server.pid)}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    report(results, verify(set(results.pop("accepted"))))
    connections.close_all()
    if not args.keep:
        bench_database_url(base, name=BENCH_DB, drop_only=True)


def report(results: dict, checks: dict) -> None:
    print(
        f"{'phase':<8}{'trips':>8}{'trips/s':>10}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"
        f"{'errors':>8}"
    )
    for phase in ("open", "closed"):
        r = results[phase]
        print(
            f"{phase:<8}{r['round_trips']:>8}{r['round_trips_per_s']:>10}{r['p50_ms']:>9}"
            f"{r['p95_ms']:>9}{r['p99_ms']:>9}{r['errors']:>8}"
        )
        if r["error_samples"]:
            print(f"  errors: {r['error_samples']}")
    cpu = results["cpu"]
    trips = results["open"]["round_trips"] + results["closed"]["round_trips"]
    print(
        f"gunicorn CPU {cpu['gunicorn_cpu_s']} s for {trips} round trips (and one warm-up GET "
        f"per rater): {1000 * cpu['gunicorn_cpu_s'] / max(trips, 1):.1f} ms CPU per trip; "
        f"machine busy {cpu['machine_busy_cpu_s']} CPU-s of {cpu['cores']} x "
        f"{cpu['wall_s']} s wall (includes PostgreSQL, the load generator, other jobs); "
        f"load generator CPU {cpu['loadgen_cpu_s']} s"
    )
    print("database checks:", json.dumps(checks))
    rss = results["rss_mb"]
    print(
        f"web worker RSS (MB, each worker): after start-up {rss['start']}, "
        f"after the benchmark {rss['end']}"
    )
    if results.get("metrics") is not None:
        print(
            f"metrics on (METRICS_TOKEN set): /metrics counted {results['metrics']:.0f} round "
            f"trips of {trips}"
        )
    else:
        print("metrics off (METRICS_TOKEN not set)")


if __name__ == "__main__":
    main()
