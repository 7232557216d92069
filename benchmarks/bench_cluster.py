"""More than one machine, here: the launch burst against two web nodes and two worker nodes
behind HAProxy, one of each killed (SIGKILL) mid-run, with an LLM judge run going on.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .venv/bin/python benchmarks/bench_cluster.py                  # 1,000 raters, 60 s
    ... bench_cluster.py --raters 150 --arrival 10 --read 1            # the test's size

Every node is a process of its own on a port of its own (--base-port, then the next seven), as
docs/deployment.md lays them out on several machines:

| port | node |
| --- | --- |
| base | HAProxy: the one address raters use; health checks, retries on the other node |
| base+1, base+2 | web nodes: `gunicorn -c gunicorn.conf.py heart_site.wsgi` (DEBUG=0) |
| base+3 | PgBouncer (session pooling) in front of PostgreSQL (DATABASE_URL's server) |
| base+4 | Redis: broker and cache (a redis-server of this run's own) |
| base+5 | the fake LLM server (fakes/llm, OpenAI protocol) |

plus two Celery worker nodes (`-Q default,llm,refit`, two processes each) and one beat. The
study is the launch burst's (bench_launch_burst.py) in a database of its own
(`heart_bench_cluster`, dropped at the end unless --keep). Before the raters arrive an LLM
judge run over every pair (both orders) starts; --kill-at seconds into the burst web node 1
and worker node 1 are killed with SIGKILL (their whole process groups). Afterwards it checks:
the burst's checks (every acknowledged answer stored once, no pair over its quota, ...), every
LLM unit done and stored once (one verdict per pair, judge and order; the fake server asked
twice only for units in flight on the killed worker), and the leaderboard refitted by a live
worker over every judgment. It prints what it checked; exit 0 only if everything held.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

# Run as a script, so benchmarks/ is on sys.path (the checker knows it as benchmarks.…).
import bench_launch_burst as burst  # type: ignore[import-not-found]

ROOT = burst.ROOT
BENCH_DB = os.environ.get("BENCH_DB_NAME", "heart_bench_cluster")
JUDGE = "cluster-judge"


# --- the nodes -----------------------------------------------------------------------------


class Cluster:
    """Starts the nodes, remembers them, stops what is left of them."""

    def __init__(self, folder: Path, base_port: int) -> None:
        self.folder, self.base = folder, base_port
        self.procs: dict[str, subprocess.Popen] = {}

    def port(self, offset: int) -> int:
        return self.base + offset

    def spawn(self, name: str, command: list[str], env: dict | None = None) -> subprocess.Popen:
        log = (self.folder / f"{name}.log").open("ab")
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True
        )
        self.procs[name] = proc
        return proc

    def kill(self, name: str) -> None:
        """SIGKILL a node: its whole process group (gunicorn's or Celery's workers too)."""
        proc = self.procs[name]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)

    def stop_all(self) -> None:
        for proc in reversed(list(self.procs.values())):
            if proc.poll() is None:
                burst.stop(proc)

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"


def run_as_postgres(folder: Path) -> list[str]:
    """PgBouncer refuses to run as root: as root, run it as the postgres user."""
    if os.geteuid() != 0:
        return []
    account = pwd.getpwnam("postgres")
    os.chown(folder, account.pw_uid, account.pw_gid)
    return [shutil.which("runuser") or "runuser", "-u", "postgres", "--"]


def start_pgbouncer(cluster: Cluster, database: str) -> str:
    """PgBouncer in session mode: the backend's prepared statements and its per-connection SET
    need a server connection that stays with its client (docs/deployment.md)."""
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    folder = cluster.folder / "pgbouncer"
    folder.mkdir()
    cluster.folder.chmod(0o711)  # the postgres user reaches its folder inside
    parts = burst.urlsplit(database)
    name = parts.path.lstrip("/")
    (folder / "userlist.txt").write_text(f'"{parts.username or "postgres"}" ""\n')
    port = cluster.port(3)
    (folder / "pgbouncer.ini").write_text(
        f"""[databases]
{name} = host={parts.hostname or "127.0.0.1"} port={parts.port or 5432} dbname={name}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/userlist.txt
pool_mode = session
max_client_conn = 500
default_pool_size = 60
server_reset_query = DISCARD ALL
ignore_startup_parameters = extra_float_digits
logfile = {folder}/pgbouncer.log
"""
    )
    prefix = run_as_postgres(folder)
    for path in folder.iterdir():
        if prefix:
            os.chown(path, *_postgres_ids())
    cluster.spawn("pgbouncer", [*prefix, binary, str(folder / "pgbouncer.ini")])
    if not burst_wait(lambda: _pg_answers(port, name), 30):
        raise SystemExit(f"PgBouncer did not answer; see {folder}/pgbouncer.log")
    return burst.urlunsplit(
        parts._replace(netloc=f"{parts.username or 'postgres'}@127.0.0.1:{port}")
    )


def _postgres_ids() -> tuple[int, int]:
    account = pwd.getpwnam("postgres")
    return account.pw_uid, account.pw_gid


def _pg_answers(port: int, name: str) -> bool:
    import psycopg

    with psycopg.connect(host="127.0.0.1", port=port, dbname=name, user="postgres") as conn:
        conn.execute("SELECT 1")
    return True


def start_redis(cluster: Cluster) -> str:
    binary = shutil.which("redis-server") or "redis-server"
    port = cluster.port(4)
    cluster.spawn(
        "redis",
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(cluster.folder)],
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    if not burst_wait(lambda: _redis_answers(url), 20):
        raise SystemExit("redis-server did not answer")
    return url


def _redis_answers(url: str) -> bool:
    import redis

    return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5).ping())


def start_fake_llm(cluster: Cluster) -> str:
    port = cluster.port(5)
    cluster.spawn("fake-llm", [sys.executable, "-m", "fakes.llm", "--port", str(port)])
    url = f"http://127.0.0.1:{port}"
    import httpx

    if not burst_wait(lambda: httpx.get(f"{url}/healthz").status_code == 200, 30):
        raise SystemExit("the fake LLM server did not answer")
    return url


HAPROXY = """global
    maxconn 4000
    # Node state changes (a node down, up again) to the log; requests are not logged.
    log stderr format raw local0 notice

defaults
    mode http
    log global
    timeout connect 2s
    timeout client 120s
    timeout server 60s
    timeout queue 60s
    timeout http-keep-alive 30s
    # A request that reached a node which then died is sent to the other one: every rater
    # write is idempotent (an assignment's token, a consent by Prolific id, a qualification
    # answer by item), so a retried POST stores nothing twice (docs/deployment.md).
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response response-timeout 502 503

frontend raters
    bind 127.0.0.1:{port}
    # The client's address for the rate limits (RATELIMIT_IP_META_KEY): set, never appended
    # to, so a client cannot choose the address it is counted under.
    http-request set-header X-Forwarded-For %[src]
    default_backend web

backend web
    balance leastconn
    option httpchk
    http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1
    http-check expect status 200
    # Requests wait in HAProxy's queue (not in a node's), so a dead node's queue moves over.
    # A node is out after 3 failed checks a second apart (a check may take 5 s on a busy node:
    # a slow node is not a dead one, and taking it out would leave the others its load).
    timeout check 5s
    # ...but a node that refuses or drops a connection is out at once (observe layer4): with
    # leastconn, a dead node, having no connections, would otherwise draw every request until
    # its checks fail.
    default-server inter 1s fall 3 rise 2 maxconn 16 observe layer4 error-limit 1 on-error mark-down
{servers}
"""


def start_haproxy(cluster: Cluster, web_ports: list[int]) -> str:
    servers = "\n".join(
        f"    server web{i} 127.0.0.1:{p} check" for i, p in enumerate(web_ports, start=1)
    )
    config = cluster.folder / "haproxy.cfg"
    config.write_text(HAPROXY.format(port=cluster.port(0), servers=servers))
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    cluster.spawn("haproxy", [binary, "-f", str(config), "-db"])
    url = f"http://127.0.0.1:{cluster.port(0)}"
    import httpx

    if not burst_wait(lambda: httpx.get(f"{url}/healthz").status_code == 200, 30):
        raise SystemExit("HAProxy did not answer")
    return url


def start_web(cluster: Cluster, index: int, env: dict) -> None:
    port = cluster.port(index)
    proc = burst.start_gunicorn(env, port, cluster.log(f"web{index}"))
    cluster.procs[f"web{index}"] = proc


def start_worker(cluster: Cluster, index: int, env: dict) -> None:
    cluster.spawn(
        f"worker{index}",
        [sys.executable, "-m", "celery", "-A", "heart_site", "worker", "-Q", "default,llm,refit",
         "-n", f"worker{index}@%h", "--concurrency", "2", "--pool", "prefork",
         "--loglevel", "WARNING", "--without-heartbeat", "--without-gossip",
         "--without-mingle"],
        env,
    )  # fmt: skip


def start_beat(cluster: Cluster, env: dict) -> None:
    cluster.spawn(
        "beat",
        [sys.executable, "-m", "celery", "-A", "heart_site", "beat", "--loglevel", "WARNING",
         "-s", str(cluster.folder / "beat-schedule")],
        env,
    )  # fmt: skip


def _ping_workers() -> list[dict]:
    from heart_site.celery import app

    return app.control.ping(timeout=1.0) or []


def burst_wait(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.25)
    return False


# --- the LLM run and the refit (in this process, with Django) ------------------------------


def start_judge_run(study_id: int, fake_url: str, ttft_ms: int) -> int:
    from django.core.management import call_command

    from completions.models import Study
    from llm import services
    from llm.models import Endpoint

    call_command(
        "llm_endpoint", "add", JUDGE, "--provider", "openai",
        "--model", f"{JUDGE}@ttft={ttft_ms}", "--family", "gemini",
        "--base-url", f"{fake_url}/v1", "--max-concurrency", "8", stdout=io.StringIO(),
    )  # fmt: skip
    run = services.run_plan(
        study=Study.objects.get(pk=study_id),
        kind="judge",
        endpoints=[Endpoint.objects.get(name=JUDGE)],
    )
    services.run_start(run=run)  # queued on the llm queue for the worker nodes
    return run.pk


def llm_units(run_id: int) -> Counter[str]:
    from llm.models import Unit

    return Counter(Unit.objects.filter(run_id=run_id).values_list("status", flat=True))


def wait_for_run(run_id: int, timeout: float) -> bool:
    from llm.models import Run, RunStatus

    return burst_wait(lambda: Run.objects.get(pk=run_id).status == RunStatus.FINISHED, timeout)


def _server_key(unit: Any, kind: Any) -> str:
    """The fake server's count key of a unit's request: model | hash(system, first message)."""
    request = kind.build_requests([unit])[unit.pk]
    root = [{"role": "system", "content": request.system}, request.messages[0]]
    digest = hashlib.sha256(json.dumps(root, sort_keys=True, ensure_ascii=False).encode())
    return f"{unit.endpoint.model.partition('@')[0]}|{digest.hexdigest()[:16]}"


def verify_llm(run_id: int, study_id: int, fake_url: str, in_flight: set[int]) -> dict:
    import httpx

    from annotation.models import Judgment
    from llm.kinds import get_kind
    from llm.models import Run, Unit, UnitStatus

    units = list(Unit.objects.filter(run_id=run_id).select_related("endpoint"))
    verdicts = Counter(
        Judgment.objects.filter(study_id=study_id, judge_kind="llm").values_list(
            "pair_id", "judge", "shown_left"
        )
    )
    sent = httpx.get(f"{fake_url}/_control/stats").json()["requests"]
    kind = get_kind("judge")
    asked = {u.pk: sent.get(_server_key(u, kind), 0) for u in units}
    return {
        "checks": {
            "the judge run finished": Run.objects.get(pk=run_id).status == "finished",
            "every LLM unit done": all(u.status == UnitStatus.DONE for u in units),
            "one verdict per pair, judge and order": len(verdicts) == len(units)
            and set(verdicts.values()) == {1},
            "units sent again only if in flight on the killed worker": all(
                n == 1 or (pk in in_flight and n == 2) for pk, n in asked.items()
            ),
        },
        "counts": {
            "LLM units": len(units),
            "verdicts stored": sum(verdicts.values()),
            "units in flight at the kill": len(in_flight),
            "units asked twice": sum(1 for n in asked.values() if n == 2),
        },
    }


def refit_and_check(study_id: int, since: float, timeout: float) -> dict:
    """Queue a refit on the live workers and wait for a board over every judgment."""
    from datetime import UTC, datetime

    from django.db.models import Max

    from annotation.models import Judgment
    from annotation.quality import judgments_excluded_q
    from core.enqueue import enqueue
    from ranking.models import LeaderboardSnapshot

    # The last judgment the boards count (quality-check answers and excluded raters' are not).
    counted = Judgment.objects.filter(study_id=study_id, pair__isnull=False)
    last = counted.exclude(judgments_excluded_q()).aggregate(m=Max("id"))["m"]
    enqueue("ranking.tasks.refit_study", study_id, "manual")
    after = datetime.fromtimestamp(since, tz=UTC)

    def boards() -> dict[str, Any]:
        rows = LeaderboardSnapshot.objects.filter(study_id=study_id, created_at__gte=after)
        return {
            row.judges: row for row in rows if row.max_judgment_id == last or row.judges != "all"
        }

    done = burst_wait(lambda: {"all", "human", "llm"} <= set(boards()), timeout)
    found = boards() if done else {}
    board = found.get("all")
    return {
        "checks": {
            "the leaderboard refitted over every judgment (all, human and LLM boards)": done,
        },
        "counts": {
            "judgments in the refit": board.n_judgments if board else 0,
            "systems on the board": board.n_systems if board else 0,
        },
    }


# --- main ----------------------------------------------------------------------------------


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raters", type=int, default=1000)
    parser.add_argument("--arrival", type=float, default=60.0)
    parser.add_argument("--read", type=float, default=5.0)
    parser.add_argument("--fill", type=float, default=0.9)
    parser.add_argument("--kill-at", type=float, default=None, help="s into the burst")
    parser.add_argument("--base-port", type=int, default=8250)
    parser.add_argument("--llm-ttft", type=int, default=200, help="the fake judge's delay (ms)")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--keep", action="store_true", help="keep the database (and the logs if a check failed)"
    )
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    args = parser.parse_args()
    args.connections = args.raters
    # A reply the killed node was sending when it died arrives cut off; a person reloads the
    # page (every write is idempotent, so a POST sent again stores nothing twice).
    args.reload_cut = True
    if args.kill_at is None:
        args.kill_at = args.arrival / 2
    return args


def main() -> int:
    args = arguments()
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        raise SystemExit("set DATABASE_URL to a PostgreSQL server (the check needs one)")
    for name in ("haproxy", "pgbouncer", "redis-server"):
        if not (shutil.which(name) or Path(f"/usr/sbin/{name}").exists()):
            raise SystemExit(f"{name} is not installed (apt-get install haproxy pgbouncer)")
    busy = [p for p in range(args.base_port, args.base_port + 6) if not burst.port_free(p)]
    if busy:
        raise SystemExit(f"ports {busy} are in use: pass another --base-port")
    folder = Path(tempfile.mkdtemp(prefix="heart-cluster-"))
    cluster = Cluster(folder, args.base_port)
    database = burst.database_url(base, BENCH_DB)
    ok = False
    try:
        ok = run(args, cluster, database)
    finally:
        cluster.stop_all()
        from django.db import connections

        connections.close_all()
        if not args.keep:
            burst.database_url(base, BENCH_DB, drop_only=True)
        if ok or not args.keep:  # the nodes' logs are kept to read a failure
            shutil.rmtree(folder, ignore_errors=True)
        if args.keep:
            print(f"kept: database {BENCH_DB}" + ("" if ok else f", the nodes' logs in {folder}"))
    return 0 if ok else 1


def run(args, cluster: Cluster, database: str) -> bool:
    redis_url = start_redis(cluster)
    node_env = {
        "LLM_ALLOWED_HOSTS": "127.0.0.1",
        "LLM_ALLOW_PRIVATE_NETWORKS": "1",
        "LLM_LEASE_SECONDS": "5",  # a dead worker's units come back after 5 s...
        "LLM_RESUME_SECONDS": "10",  # ...and beat hands the run to a live worker every 10 s
        "LLM_EXECUTORS_PER_RUN": "2",
        "JOB_LEASE_SECONDS": "10",
        "CELERY_TASK_EVENTS": "0",
        "RATELIMIT_IP_META_KEY": "HTTP_X_FORWARDED_FOR",
    }
    here = burst.server_env(database, redis_url, **node_env)
    burst.django_setup(here)  # this process: builds the study, checks the database afterwards
    plan = burst.build_study(
        raters=args.raters, contexts=burst.contexts_for(args.raters, args.fill)
    )
    from django.db import connections

    connections.close_all()
    pooled = start_pgbouncer(cluster, database)
    nodes = burst.server_env(pooled, redis_url, **node_env)
    fake_url = start_fake_llm(cluster)
    for index in (1, 2):
        start_web(cluster, index, nodes)
    balancer = start_haproxy(cluster, [cluster.port(1), cluster.port(2)])
    for index in (1, 2):
        start_worker(cluster, index, nodes)
    start_beat(cluster, nodes)
    if not burst_wait(lambda: len(_ping_workers()) == 2, 240):
        raise SystemExit("the two worker nodes did not answer a ping")
    print(
        f"cluster: HAProxy {balancer} -> web1 :{cluster.port(1)}, web2 :{cluster.port(2)} "
        f"(gunicorn, DEBUG=0); worker1, worker2 (Celery, 2 processes each) and beat; PgBouncer "
        f":{cluster.port(3)} (session) -> PostgreSQL; Redis :{cluster.port(4)}; fake LLM "
        f":{cluster.port(5)}. {burst.load_line()}",
        flush=True,
    )
    run_id = start_judge_run(plan["study"], fake_url, args.llm_ttft)
    results: dict[str, Any] = {}
    started = time.time()
    loadgen = threading.Thread(
        target=lambda: results.update(burst.run_loadgen(balancer, plan, args)), daemon=True
    )
    loadgen.start()
    time.sleep(args.kill_at)
    # Mid-run for both: the raters' burst, and the judge run (some units done, not all).
    burst_wait(lambda: llm_units(run_id)["done"] > 0 or not loadgen.is_alive(), 120)
    before_kill = llm_units(run_id)
    killed_at = time.time() - started
    cluster.kill("web1")
    cluster.kill("worker1")
    from llm.models import Unit, UnitStatus

    in_flight = set(
        Unit.objects.filter(run_id=run_id, status=UnitStatus.IN_FLIGHT).values_list("pk", flat=True)
    )
    print(
        f"{killed_at:.0f} s into the burst: SIGKILL web1 and worker1 (LLM units then: "
        f"{dict(before_kill)})",
        flush=True,
    )
    loadgen.join()
    if not results:
        print("the load generator gave no results")
        return False
    finished = wait_for_run(run_id, timeout=600)
    print(f"judge run {'finished' if finished else 'NOT finished'}: {dict(llm_units(run_id))}")
    checked = [burst.verify(plan, results), verify_llm(run_id, plan["study"], fake_url, in_flight)]
    checked.append(refit_and_check(plan["study"], started, timeout=300))
    burst.print_table(
        f"launch burst through HAProxy, reading {args.read} s per item (web1 and worker1 "
        f"killed at {args.kill_at:.0f} s)",
        results,
    )
    for name in ("web1", "web2", "worker1", "worker2"):
        for line in burst.server_errors(cluster.log(name)):
            print(f"  {name} logged: {line}")
    merged = {
        "checks": {k: v for c in checked for k, v in c["checks"].items()},
        "counts": {k: v for c in checked for k, v in c["counts"].items()},
    }
    errors = sum(r["errors"] for r in results["pages"].values())
    merged["checks"]["no rater saw an error"] = errors == 0
    merged["counts"]["replies cut off by the kill, reloaded"] = sum(
        results.get("reloaded_after_a_cut", {}).values()
    )
    ok = burst.print_checks(merged)
    print(
        f"worst p95 of a rater page: {burst.worst_rater_p95(results):.0f} ms; {burst.load_line()}"
    )
    if args.json:
        print(json.dumps({**burst._public(results), **merged}))
    return ok


if __name__ == "__main__":
    sys.exit(main())
