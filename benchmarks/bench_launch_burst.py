"""A Prolific launch burst: 1,000 raters arriving within 60 s, against gunicorn on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/12 \
        .venv/bin/python benchmarks/bench_launch_burst.py                 # with reading time
    ... bench_launch_burst.py --read 0                                     # the stress test
    ... bench_launch_burst.py --profile                                    # where the time goes

What it does:
1. creates the database `heart_bench_burst` (BENCH_DB_NAME; dropped at the end unless --keep),
   migrates it and builds a Prolific study: 5 systems, all 10 pairs per context, quota 5,
   10 real items per rater plus the rubric's quality checks (10 %), qualification on with the
   rubric's five items (training items with feedback, then the qualification items, pass
   share 0.75), Prolific entry only and as many Prolific places (`max_active_raters`) as
   raters. There are --fill (0.9) times as many places on pairs as the raters who pass want,
   so the last raters race for the last places (a place can stay empty only when every
   rater still wanting items has had that pair or an item of its context: one per context);
2. starts gunicorn as docs/running.md does (`gunicorn -c gunicorn.conf.py heart_site.wsgi`,
   DEBUG=0, persistent database connections, its workers and threads unless --workers or
   --threads say otherwise). The settings are the production ones plus /_bench/nonce and plain
   static storage (bench_settings.py). The load generator is one client address, so the
   per-client limits on new raters are raised (they still run, on Redis);
3. runs the load generator in a process of its own (asyncio + aiohttp, one connection per
   rater as browsers have): each rater arrives at a uniformly drawn moment of the --arrival
   window and goes through the Prolific link (PROLIFIC_PID, STUDY_ID, SESSION_ID), consent,
   instructions, the five qualification items (feedback after each training item, then the
   result) and their items, reading --read seconds (±50 %) per item and a third of that per
   other page; 4 % of raters answer the qualification wrongly (screened out) and 5 % of
   answers are posted twice (a double click), as real raters do. Every page is timed from the
   client; anything but the page the journey expects is an error and ends that rater's visit;
4. checks the database afterwards: every acknowledged answer stored exactly once (judgments
   and qualification answers), no answer stored that was not acknowledged, no pair over its
   quota and each pair's count equal to its judgments, no place left empty that a rater sent
   away short could have taken, no rater with a pair twice, one rater per Prolific
   participant, no lease left; and prints a table per page (count, errors, p50, p95, max)
   and the checks.

--profile also samples one gunicorn worker with py-spy (CPU by function, our code and the
libraries under it) and PostgreSQL's pg_stat_activity every 20 ms (which statements are running
or waiting, and on what), and prints both. --json prints the whole result as one JSON line.
--url measures a server that is already running (a balancer in front of several, as
bench_cluster.py does) against a study this script builds in the database DATABASE_URL names.
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
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = os.environ.get("BENCH_DB_NAME", "heart_bench_burst")
SYSTEMS = 5
PAIRS_PER_CONTEXT = SYSTEMS * (SYSTEMS - 1) // 2
QUOTA = 5
ITEMS_PER_RATER = 10
FAIL_SHARE = 0.04  # raters who answer the qualification wrongly
DOUBLE_SHARE = 0.05  # answers posted twice
SUBMIT = re.compile(r'action="(/r/a/([^/"]+)/submit/)"')
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
NUMBER_INPUT = re.compile(r'name="number" value="(\d+)"')
# The order in which the rater meets the pages (the table's rows).
PAGES = [
    "entry (Prolific link)",
    "consent GET",
    "consent POST",
    "instructions",
    "item (to qualification)",
    "qualify GET",
    "qualify POST",
    "qualify feedback",
    "qualify result",
    "item (first)",
    "submit (answer + next)",
    "submit (posted twice)",
    "done",
]
RATER_PAGES = PAGES  # every row is a page a rater uses


# --- the database and the study (in this process, with Django) -----------------------------


def database_url(base: str, name: str, *, drop_only: bool = False) -> str:
    """A fresh PostgreSQL database `name` next to DATABASE_URL (dropped first if it exists)."""
    import psycopg

    parts = urlsplit(base)
    admin = urlunsplit(parts._replace(scheme="postgresql", path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}"))


def server_env(database: str, redis_url: str, **extra: str) -> dict[str, str]:
    """The environment of a web node (and of this process's Django): production settings."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database,
        REDIS_URL=redis_url,
        DEBUG="0",
        SECRET_KEY=os.environ.get("SECRET_KEY") or "bench-only-secret-key-" + "0" * 40,
        PSEUDONYM_KEY=os.environ.get("PSEUDONYM_KEY") or "bench-only-pseudonym-key",
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        CONN_MAX_AGE="600",
        # One client address plays a thousand participants: the per-address limits would
        # refuse them (each participant has an address of their own on a real launch).
        RATER_CREATE_RATE="1000000/h",
        RATER_ENTRY_RATE="1000000/m",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="bench_settings",
        PYTHONPATH=f"{ROOT / 'benchmarks'}:{ROOT}",
    )
    env.update(extra)
    return env


def django_setup(env: dict[str, str]) -> None:
    """Django in this process, with the nodes' settings (it builds the study and checks)."""
    os.environ.update({k: v for k, v in env.items() if k != "PYTHONPATH"})
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
    import django

    django.setup()


def contexts_for(raters: int, fill: float) -> int:
    """Contexts whose places are `fill` times what the raters who pass want."""
    wanted = raters * (1 - FAIL_SHARE) * ITEMS_PER_RATER
    return max(ITEMS_PER_RATER, int(fill * wanted / (PAIRS_PER_CONTEXT * QUOTA)))


def build_study(*, raters: int, contexts: int, slug: str = "burst") -> dict[str, Any]:
    """Migrate and build the launch's study; returns what the load generator needs."""
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Pair, QualityCheckItem
    from annotation.quality import quality_items_seed_from_rubric
    from care.models import CareSettings, QualificationItem
    from care.services import qualification_items_seed_from_rubric
    from completions.models import Completion, DialogueContext, Study, System

    call_command("migrate", verbosity=0)
    study = Study.objects.create(
        slug=slug,
        name="Launch burst",
        items_per_rater=ITEMS_PER_RATER,
        quality_check_rate=0.1,
        judgments_per_pair=QUOTA,
        rater_entry="prolific",
        max_active_raters=raters,  # the Prolific places
        prolific_redirect_url="https://app.prolific.com/submissions/complete",
        status="open",  # its pairs are made below, before any rater comes
    )
    systems = System.objects.bulk_create(
        System(study=study, name=f"burst-system-{i}", kind="model", family=f"fam{i}")
        for i in range(SYSTEMS)
    )
    contexts_made = DialogueContext.objects.bulk_create(
        DialogueContext(
            study=study,
            external_id=f"c{i}",
            turns=[
                {"speaker": "supporter", "text": "Hi, how are you today?"},
                {"speaker": "seeker", "text": f"I'm struggling at work and can't sleep ({i})."},
            ],
        )
        for i in range(contexts)
    )
    completions = Completion.objects.bulk_create(
        Completion(context=c, system=s, text=f"That sounds exhausting ({c.external_id}, {j}).")
        for c in contexts_made
        for j, s in enumerate(systems)
    )
    by_context: dict[int, list[Completion]] = defaultdict(list)
    for comp in completions:
        by_context[comp.context_id].append(comp)
    Pair.objects.bulk_create(
        Pair(study=study, context_id=cid, completion_a=a, completion_b=b, quota=QUOTA)
        for cid, comps in by_context.items()
        for i, a in enumerate(comps)
        for b in comps[i + 1 :]
    )
    quality_items_seed_from_rubric(study=study)
    CareSettings.objects.create(study=study, qualification_enabled=True)
    qualification_items_seed_from_rubric(study=study)
    items = sorted(
        QualificationItem.objects.filter(study=study),
        key=lambda i: (i.phase != QualificationItem.Phase.TRAINING, i.position, i.pk),
    )  # the order the qualification pages show them (care.selectors.qualification_step)
    from markupsafe import escape

    checks = [
        {
            "a": str(escape(q.text_a.split("\n")[0][:40])),
            "b": str(escape(q.text_b.split("\n")[0][:40])),
            "expected": q.expected,
            "choice": q.expected_choice,
        }
        for q in QualityCheckItem.objects.filter(study=study)
    ]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # fresh statistics, as autovacuum gathers in a running study
    return {
        # The quality checks as the page shows them, so the raters answer them with care (a
        # rater who fails them is left out of the leaderboard, which the cluster check refits).
        "checks": checks,
        "study": study.pk,
        "invite": study.invite_token,
        "places": contexts * PAIRS_PER_CONTEXT * QUOTA,
        "pairs": contexts * PAIRS_PER_CONTEXT,
        # By page number: the side the reference prefers, and the item's note.
        "qualification": [
            {"expected": i.expected, "note": i.note, "training": i.phase == "training"}
            for i in items
        ],
    }


# --- the load generator (a process of its own: asyncio + aiohttp, no Django) ---------------


class JourneyError(Exception):
    """A page other than the one the journey expects: the rater's visit ends there."""


class Stats:
    def __init__(self) -> None:
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, list[str]] = defaultdict(list)
        self.outcomes: Counter[str] = Counter()
        self.consented: list[str] = []  # Prolific ids whose consent was acknowledged
        self.qualification: list[tuple[str, int]] = []  # (Prolific id, page number)
        self.answers: list[str] = []  # assignment tokens whose answer was acknowledged
        self.screened_out: list[str] = []
        self.codes: list[str] = []  # Prolific ids shown the completion code
        self.timeline: list[tuple[float, str, float]] = []  # (sent at, page, latency)
        self.error_times: list[float] = []  # when each error happened (perf_counter)
        self.reloaded: dict[str, list[str]] = defaultdict(list)  # replies cut off, asked again


# --reload-cut (the cluster check): a reply cut off in the middle (its node was killed while
# sending it) is asked again once, as a person reloads a half-loaded page; counted apart.
RELOAD_CUT = False


async def _call(session, stats: Stats, page: str, method: str, path: str, expect, **kw):
    """One request, timed; returns (status, text, headers)."""
    import aiohttp

    started = time.perf_counter()
    try:
        try:
            async with session.request(method, path, allow_redirects=False, **kw) as reply:
                text = await reply.text()
                status, headers = reply.status, reply.headers
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError) as cut:
            if not RELOAD_CUT:
                raise
            stats.reloaded[page].append(type(cut).__name__)
            async with session.request(method, path, allow_redirects=False, **kw) as reply:
                text = await reply.text()
                status, headers = reply.status, reply.headers
    except Exception as exc:  # noqa: BLE001 - any transport failure is an error of this page
        stats.errors[page].append(type(exc).__name__ + ": " + str(exc)[:120])
        stats.error_times.append(time.perf_counter())
        raise JourneyError from exc
    latency = time.perf_counter() - started
    stats.latencies[page].append(latency)
    stats.timeline.append((started, page, latency))
    if status not in expect:
        stats.errors[page].append(f"HTTP {status} on {method} {_shape(path)}")
        stats.error_times.append(time.perf_counter())
        raise JourneyError
    return status, text, headers


def _shape(path: str) -> str:
    """A path without its tokens (for the error summary)."""
    return re.sub(r"/(r|a|w)/[^/?]+", r"/\1/…", path.split("?")[0])


def _csrf(session) -> str:
    for cookie in session.cookie_jar:
        if cookie.key == "csrftoken":
            return cookie.value
    raise JourneyError("no csrftoken cookie")


async def _read(seconds: float, rng: random.Random) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds * rng.uniform(0.5, 1.5))


async def rater_journey(base: str, plan: dict, index: int, stats: Stats, connector, args) -> None:
    """One participant from the Prolific link to the completion code."""
    import aiohttp

    rng = random.Random(f"{args.seed}-{index}")
    await asyncio.sleep(plan["arrivals"][index])
    invite, pid = plan["invite"], f"PID{args.seed}x{index:05d}"
    fails = rng.random() < FAIL_SHARE
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1 (an address, not a name)
    timeout = aiohttp.ClientTimeout(total=args.timeout)
    async with aiohttp.ClientSession(
        base, connector=connector, connector_owner=False, cookie_jar=jar, timeout=timeout
    ) as s:
        try:
            await _journey(s, stats, invite, pid, plan, rng, fails, args.read)
        except JourneyError:
            stats.outcomes["error"] += 1


async def _journey(s, stats, invite, pid, plan, rng, fails, read) -> None:
    r = f"/r/{invite}"
    query = f"?PROLIFIC_PID={pid}&STUDY_ID=STUDY{invite[:6]}&SESSION_ID=S{pid}"
    await _call(s, stats, "entry (Prolific link)", "GET", f"{r}/{query}", {302})
    _, page, _ = await _call(s, stats, "consent GET", "GET", f"{r}/consent/", {200})
    await _read(read / 3, rng)
    token = CSRF_INPUT.search(page)
    if token is None:
        raise JourneyError("no consent form")
    form = {"agree": "on", "csrfmiddlewaretoken": token.group(1)}
    _, _, h = await _call(s, stats, "consent POST", "POST", f"{r}/consent/", {302}, data=form)
    if not h["Location"].endswith("/instructions/"):
        raise JourneyError(f"consent led to {h['Location']}")
    stats.consented.append(pid)
    await _call(s, stats, "instructions", "GET", f"{r}/instructions/", {200})
    await _read(read / 3, rng)
    await _call(s, stats, "item (to qualification)", "GET", f"{r}/item/", {302})
    if not await _qualify(s, stats, r, pid, plan, rng, fails, read):
        return
    status, page, h = await _call(s, stats, "item (first)", "GET", f"{r}/item/", {200, 302})
    answered = 0
    while status == 200 and (found := SUBMIT.search(page)):
        url, assignment = found.groups()
        await _read(read, rng)
        headers = {"HX-Request": "true", "X-CSRFToken": _csrf(s)}
        data = {"choice": _choice(page, plan["checks"], rng)}
        status, page, h = await _call(
            s, stats, "submit (answer + next)", "POST", url, {200}, data=data, headers=headers
        )
        stats.answers.append(assignment)
        answered += 1
        if rng.random() < DOUBLE_SHARE:  # a double click: the same answer again
            await _call(
                s, stats, "submit (posted twice)", "POST", url, {200}, data=data, headers=headers
            )
        if "HX-Redirect" in h:
            break
    _, page, _ = await _call(s, stats, "done", "GET", f"{r}/done/", {200})
    if answered and "completion code" in page.lower():
        stats.codes.append(pid)
        stats.outcomes["completed"] += 1
    elif not answered and "no items are available" in page.lower():
        stats.outcomes["no items left"] += 1
    else:
        stats.errors["done"].append("the done page is not the one the rater's work calls for")
        raise JourneyError


def _choice(page: str, checks: list[dict], rng: random.Random) -> str:
    """A careful rater's answer: the right one on a quality check, any other time a draw."""
    for check in checks:
        if check["a"] in page and check["b"] in page:
            if check["choice"]:  # an attention check names the answer it wants
                return str(check["choice"])
            left = "a" if page.index(check["a"]) < page.index(check["b"]) else "b"
            return "1" if check["expected"] == left else "5"
    return str(rng.randint(1, 5))


async def _qualify(s, stats, r, pid, plan, rng, fails, read) -> bool:
    """The training and qualification items; False when the rater was screened out."""
    items = plan["qualification"]
    for number, item in enumerate(items, start=1):
        _, page, _ = await _call(s, stats, "qualify GET", "GET", f"{r}/qualify/", {200})
        shown = NUMBER_INPUT.search(page)
        if shown is None or int(shown.group(1)) != number:
            raise JourneyError(f"qualification page {shown and shown.group(1)} != {number}")
        await _read(read, rng)
        right = "1" if item["expected"] == "a" else "5"
        choice = "3" if fails and not item["training"] else right
        form = {"choice": choice, "number": str(number), "csrfmiddlewaretoken": _csrf(s)}
        _, _, h = await _call(s, stats, "qualify POST", "POST", f"{r}/qualify/", {302}, data=form)
        stats.qualification.append((pid, number))
        if h["Location"].endswith("/feedback/"):
            await _call(s, stats, "qualify feedback", "GET", f"{r}/qualify/feedback/", {200})
            await _read(read / 3, rng)
    _, page, _ = await _call(s, stats, "qualify result", "GET", f"{r}/qualify/result/", {200})
    if "Start judging" in page:
        return True
    stats.screened_out.append(pid)
    stats.outcomes["screened out"] += 1
    return False


async def _loadgen(plan: dict, args) -> Stats:
    import aiohttp

    stats = Stats()
    connector = aiohttp.TCPConnector(limit=args.connections, limit_per_host=0, force_close=False)
    try:
        await asyncio.gather(
            *(
                rater_journey(plan["base"], plan, i, stats, connector, args)
                for i in range(len(plan["arrivals"]))
            )
        )
    finally:
        await connector.close()
    return stats


def loadgen_main(args) -> None:
    """The load generator's process: reads the plan, prints one JSON line of results."""
    global RELOAD_CUT
    RELOAD_CUT = args.reload_cut
    plan = json.loads(Path(args.loadgen).read_text())
    started = time.perf_counter()
    stats = asyncio.run(_loadgen(plan, args))
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "pages": {
                    p: summarise(stats.latencies.get(p, []), stats.errors.get(p, [])) for p in PAGES
                },  # fmt: skip
                "outcomes": dict(stats.outcomes),
                "consented": stats.consented,
                "qualification": stats.qualification,
                "answers": stats.answers,
                "screened_out": stats.screened_out,
                "codes": stats.codes,
                "wall_s": round(wall, 1),
                "loadgen_cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
                "requests_per_s": per_second(stats.timeline),
                "reloaded_after_a_cut": {p: len(v) for p, v in stats.reloaded.items()},
                "errors_between_s": [
                    round(min(stats.error_times) - started, 1),
                    round(max(stats.error_times) - started, 1),
                ]
                if stats.error_times
                else None,
            }
        )
    )


def summarise(latencies: list[float], errors: list[str]) -> dict[str, Any]:
    ordered = sorted(latencies)

    def pct(p: float) -> float | None:
        if not ordered:
            return None
        return round(1000 * ordered[min(len(ordered) - 1, int(p * len(ordered)))], 1)

    return {
        "count": len(ordered) + sum(1 for e in errors if not e.startswith("HTTP")),
        "errors": len(errors),
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "max_ms": round(1000 * ordered[-1], 1) if ordered else None,
        "error_samples": [f"{n} x {e}" for e, n in Counter(errors).most_common(4)],
    }


def per_second(timeline: list[tuple[float, str, float]]) -> dict[str, float]:
    """Requests per second: over the whole run and in its busiest 10 s."""
    if not timeline:
        return {"mean": 0.0, "peak_10s": 0.0}
    starts = sorted(t for t, _, _ in timeline)
    span = max(starts[-1] - starts[0], 1e-9)
    peak, j = 0, 0
    for i, t in enumerate(starts):
        while starts[j] < t - 10:
            j += 1
        peak = max(peak, i - j + 1)
    return {"mean": round(len(starts) / span, 1), "peak_10s": round(peak / 10, 1)}


def run_loadgen(base: str, plan: dict, args) -> dict[str, Any]:
    """Run the load generator in its own process against `base`; its results."""
    rng = random.Random(args.seed)
    arrivals = sorted(rng.uniform(0, args.arrival) for _ in range(args.raters))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({**plan, "base": base, "arrivals": arrivals}, fh)
    command = [
        sys.executable, __file__, "--loadgen", fh.name, "--read", str(args.read),
        "--seed", str(args.seed), "--connections", str(args.connections),
        "--timeout", str(args.timeout),
        *(["--reload-cut"] if getattr(args, "reload_cut", False) else []),
    ]  # fmt: skip
    try:
        done = subprocess.run(command, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"the load generator failed:\n{exc.stderr[-3000:]}") from exc
    finally:
        os.unlink(fh.name)
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- gunicorn ------------------------------------------------------------------------------


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        # As servers bind (connections of a stopped run still in TIME_WAIT do not count).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def start_gunicorn(env: dict[str, str], port: int, log: Path, **layout: int) -> subprocess.Popen:
    """`gunicorn -c gunicorn.conf.py heart_site.wsgi` on 127.0.0.1:port, as docs/running.md
    starts it; returns once this run's server answers there (it echoes the run's nonce)."""
    import httpx

    if not port_free(port):
        raise SystemExit(f"port {port} is in use by another process: pass another --port")
    nonce = secrets.token_hex(16)
    env = {
        **env,
        "HEART_BENCH_NONCE": nonce,
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_CONTROL_SOCKET": str(log.parent / f"gunicorn-{port}.ctl"),
    }
    for key, value in layout.items():
        if value:
            env[f"GUNICORN_{key.upper()}"] = str(value)
    command = [str(ROOT / ".venv/bin/gunicorn"), "-c", "gunicorn.conf.py", "heart_site.wsgi"]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=out, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240  # a busy shared machine boots workers slowly
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with {proc.returncode}; see {log}")
        try:
            if httpx.get(f"{base}/_bench/nonce", timeout=1).text == nonce:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit(f"gunicorn did not answer on port {port}; see {log}")


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def server_errors(log: Path) -> list[str]:
    """The exceptions a server logged (the last line of each traceback), counted."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    found = []
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            last = next((x for x in lines[i + 1 :] if x and not x.startswith(" ")), "?")
            found.append(last.strip()[:160])
    return [f"{n} x {e}" for e, n in Counter(found).most_common(8)]


# --- the checks (in this process, with Django) ---------------------------------------------


def verify(plan: dict, results: dict) -> dict[str, Any]:
    """Database counts against what the raters were told."""
    from django.db.models import Count, F

    from annotation.models import Assignment, Judgment, Pair, Rater
    from care.models import QualificationAnswer, RaterCare

    study = plan["study"]
    raters = Rater.objects.filter(study_id=study)
    stored_pids = Counter(raters.values_list("external_id", flat=True))
    human = Judgment.objects.filter(study_id=study, judge_kind="human")
    tokens = Counter(human.values_list("assignment__token", flat=True))
    acknowledged = set(results["answers"])
    notes = {i["note"]: n for n, i in enumerate(plan["qualification"], start=1)}
    qualification = Counter(
        (pid, notes[note])
        for pid, note in QualificationAnswer.objects.filter(rater__study_id=study).values_list(
            "rater__external_id", "item__note"
        )
    )
    per_pair = Counter(human.filter(pair__isnull=False).values_list("pair_id", flat=True))
    pairs = list(Pair.objects.filter(study_id=study).values_list("pk", "n_judgments", "quota"))
    checks = {
        "raters stored once per Prolific participant": max(stored_pids.values(), default=0) == 1,
        "every acknowledged consent is a rater": set(results["consented"]) == set(stored_pids),
        "qualification answers: acknowledged = stored, once each": (
            set(map(tuple, results["qualification"])) == set(qualification)
            and max(qualification.values(), default=1) == 1
        ),
        "screened out = raters told so": sorted(results["screened_out"])
        == sorted(
            RaterCare.objects.filter(
                rater__study_id=study, qualification=RaterCare.Qualification.FAILED
            ).values_list("rater__external_id", flat=True)
        ),
        "answers: every acknowledged one stored": not (acknowledged - set(tokens)),
        "answers: none stored that was not acknowledged": not (set(tokens) - acknowledged),
        "answers: none stored twice": max(tokens.values(), default=1) == 1,
        "every pair's count = its judgments": all(n == per_pair[pk] for pk, n, _ in pairs),
        "no place left that a rater sent away short could take": not short_raters_could_take(study),
        "no pair over quota": not Pair.objects.filter(
            study_id=study, n_judgments__gt=F("quota")
        ).exists(),
        "no rater judged a pair twice": not human.filter(pair__isnull=False)
        .values("rater_id", "pair_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .exists(),
        "no lease left running": not Assignment.objects.filter(
            rater__study_id=study, status=Assignment.Status.LEASED
        ).exists(),
    }
    counts = {
        "raters": len(stored_pids),
        "answers acknowledged": len(acknowledged),
        "answers stored": sum(tokens.values()),
        "places (pairs x quota)": plan["places"],
        "places filled": sum(n for _, n, _ in pairs),
        "qualification answers stored": sum(qualification.values()),
    }
    return {"checks": checks, "counts": counts}


def short_raters_could_take(study: int) -> list[tuple[int, int]]:
    """(pair, rater) for every place left empty that a rater sent away short could take: one
    who passed, ended with fewer real items than the study gives, never had that pair and
    had fewer items of its context than the claim allows. A place stays empty rightly only
    when every rater still wanting items had that pair or its context."""
    from django.db.models import F

    from annotation.models import Assignment, Pair, Rater
    from annotation.selectors import per_context_limit
    from care.models import RaterCare
    from completions.models import Study

    the_study = Study.objects.get(pk=study)
    limit = per_context_limit(study=the_study)
    under = list(
        Pair.objects.filter(study_id=study, n_judgments__lt=F("quota")).values_list(
            "pk", "context_id"
        )
    )
    if not under:
        return []
    held = defaultdict(set)  # rater -> pairs, and rater -> contexts counted
    per_context: Counter[tuple[int, int]] = Counter()
    for rater, pair, context in Assignment.objects.filter(
        rater__study_id=study, pair__isnull=False
    ).values_list("rater_id", "pair_id", "pair__context_id"):
        held[rater].add(pair)
        per_context[(rater, context)] += 1
    judged = Counter(
        Assignment.objects.filter(
            rater__study_id=study, pair__isnull=False, status=Assignment.Status.SUBMITTED
        ).values_list("rater_id", flat=True)
    )
    passed = Rater.objects.filter(
        study_id=study, care__qualification=RaterCare.Qualification.PASSED
    ).values_list("pk", flat=True)
    short = [r for r in passed if judged[r] < the_study.items_per_rater]
    return [
        (pair, rater)
        for pair, context in under
        for rater in short
        if pair not in held[rater] and per_context[(rater, context)] < limit
    ]


# --- profiling: one gunicorn worker (py-spy) and the database (pg_stat_activity) -----------


class ActivitySampler(threading.Thread):
    """Samples pg_stat_activity of one database every `every` s: what runs and what waits."""

    def __init__(self, database: str, every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.database, self.every = database, every
        self.samples: Counter[tuple[str, str]] = Counter()
        self.ticks = 0
        self.halt = threading.Event()

    def run(self) -> None:
        import psycopg

        name = urlsplit(self.database).path.lstrip("/")
        with psycopg.connect(self.database, autocommit=True) as conn:
            while not self.halt.is_set():
                rows = conn.execute(
                    "SELECT query, coalesce(wait_event_type || ':' || wait_event, 'CPU')"
                    " FROM pg_stat_activity WHERE datname = %s AND state = 'active'"
                    " AND pid <> pg_backend_pid()",
                    [name],
                ).fetchall()
                self.ticks += 1
                for query, wait in rows:
                    self.samples[(_statement(query), wait)] += 1
                time.sleep(self.every)

    def report(self, top: int = 12) -> list[str]:
        total = sum(self.samples.values()) or 1
        lines = [
            f"database: {self.ticks} samples of pg_stat_activity, on average "
            f"{total / max(self.ticks, 1):.2f} statements running at once"
        ]
        for (query, wait), n in self.samples.most_common(top):
            lines.append(f"  {100 * n / total:5.1f} %  {wait:<28} {query}")
        return lines


def _statement(query: str) -> str:
    """A statement's shape: its first words and the tables it names."""
    flat = " ".join(query.split())
    if flat.upper().startswith("WITH"):
        kind = "WITH … " + " ".join(re.findall(r"\b(UPDATE|INSERT INTO|SELECT)\b", flat)[:3])
    else:
        kind = " ".join(flat.split()[:2])
    tables = sorted(set(re.findall(r'"?(\w+_\w+)"?\s*(?:AS|\.|\b)', flat)) & _TABLES)
    return f"{kind[:40]} [{', '.join(tables)[:80]}]"


_TABLES = {
    "annotation_assignment", "annotation_judgment", "annotation_pair", "annotation_rater",
    "annotation_qualitycheckitem", "completions_study", "completions_completion",
    "completions_dialoguecontext", "care_caresettings", "care_qualificationitem",
    "care_qualificationanswer", "care_ratercare", "care_contentnote", "django_session",
    "annotation_pairpriority",
}  # fmt: skip


def py_spy_start(pid: int, out: Path) -> subprocess.Popen | None:
    spy = shutil.which("py-spy") or str(ROOT / ".venv/bin/py-spy")
    if not Path(spy).exists():
        print("py-spy is not installed (pip install py-spy): no CPU profile", flush=True)
        return None
    command = [spy, "record", "--pid", str(pid), "--format", "raw", "--output", str(out),
               "--rate", "100", "--nonblocking"]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def py_spy_report(folded: Path, top: int = 16) -> list[str]:
    """Where one worker's busy time went, from py-spy's folded stacks: by view (the deepest
    frame in a views module) and inclusive by function (ours, Django's ORM and templates,
    psycopg, the cache), line numbers folded."""
    if not folded.exists():
        return ["py-spy wrote no profile"]
    inclusive: Counter[str] = Counter()
    views: Counter[str] = Counter()
    total = waiting = 0
    for line in folded.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = [_frame(f) for f in stack.split(";")]
        if any(name in ("wait", "select", "accept", "poll") for name, _ in frames[-2:]) and not any(
            where.startswith("psycopg/") for _, where in frames
        ):
            continue  # a thread waiting for a request
        total += n
        if any(where.startswith("psycopg/") and name.endswith("wait") for name, where in frames):
            waiting += n  # waiting for PostgreSQL's answer (the database's time, or a lock)
        for key in {f"{name} ({where})" for name, where in frames if _interesting(where)}:
            inclusive[key] += n
        in_views = [f"{name} ({where})" for name, where in frames if where.endswith("views.py")]
        views[in_views[-1] if in_views else "outside a view (middleware, WSGI, gunicorn)"] += n
    if not total:
        return ["py-spy saw no busy samples"]
    lines = [
        f"one gunicorn worker: {total} samples of threads serving a request (100/s), "
        f"{100 * waiting / total:.1f} % of them waiting for PostgreSQL; by view:"
    ]
    lines += [f"  {100 * n / total:5.1f} %  {k}" for k, n in views.most_common(10)]
    lines.append("  ...and by function, inclusive:")
    lines += [f"  {100 * n / total:5.1f} %  {k}" for k, n in inclusive.most_common(top)]
    return lines


def _frame(frame: str) -> tuple[str, str]:
    name, _, where = frame.partition(" (")
    return name, _where(where.rsplit(":", 1)[0])


def _where(path: str) -> str:
    path = path.rstrip(")")
    for marker in ("site-packages/", str(ROOT) + "/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def _interesting(where: str) -> bool:
    if where.startswith(("django/core/handlers", "django/utils/deprecation", "gunicorn/")):
        return False  # every request passes through these
    return where.startswith(
        ("annotation/", "care/", "core/", "completions/", "psycopg/", "django/", "jinja2/",
         "django_ratelimit/", "django_redis/", "redis/", "django_htmx/")
    )  # fmt: skip


def worker_pids(master: int) -> list[int]:
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except OSError:
        return []
    return [int(c) for c in children]


# --- the report ----------------------------------------------------------------------------


def print_table(title: str, results: dict) -> None:
    print(f"\n{title}")
    print(f"{'page':<26}{'count':>7}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for page in PAGES:
        r = results["pages"][page]
        if not r["count"] and not r["errors"]:
            continue
        print(
            f"{page:<26}{r['count']:>7}{r['errors']:>8}{_ms(r['p50_ms']):>9}"
            f"{_ms(r['p95_ms']):>9}{_ms(r['max_ms']):>9}"
        )
        for sample in r["error_samples"]:
            print(f"    error: {sample}")
    total = sum(r["count"] for r in results["pages"].values())
    errors = sum(r["errors"] for r in results["pages"].values())
    rate = results["requests_per_s"]
    print(
        f"{'all pages':<26}{total:>7}{errors:>8}   requests/s: {rate['mean']} on average, "
        f"{rate['peak_10s']} in the busiest 10 s; wall {results['wall_s']} s; load generator "
        f"CPU {results['loadgen_cpu_s']} s"
    )
    print("raters:", ", ".join(f"{k} {v}" for k, v in sorted(results["outcomes"].items())))
    if results.get("reloaded_after_a_cut"):
        print(
            "replies cut off mid-way and asked again (a reload):", results["reloaded_after_a_cut"]
        )
    if results.get("errors_between_s"):
        first, last = results["errors_between_s"]
        print(f"errors between {first} s and {last} s after the load generator started")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def print_checks(verified: dict) -> bool:
    print("database checks:", ", ".join(f"{k} {v}" for k, v in verified["counts"].items()))
    for name, ok in verified["checks"].items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    return all(verified["checks"].values())


def load_line() -> str:
    return (
        "load average "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
        + f" on {os.cpu_count()} cores"
    )


def worst_rater_p95(results: dict) -> float:
    return max((r["p95_ms"] or 0.0) for p, r in results["pages"].items() if p in RATER_PAGES)


# --- main ----------------------------------------------------------------------------------


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raters", type=int, default=1000)
    parser.add_argument("--arrival", type=float, default=60.0, help="arrival window (s)")
    parser.add_argument(
        "--read", type=float, default=5.0, help="mean reading time per item (s); 0: stress test"
    )
    parser.add_argument("--fill", type=float, default=0.9, help="places / what raters want")
    parser.add_argument("--port", type=int, default=8240)
    parser.add_argument("--workers", type=int, default=0, help="gunicorn workers (0: its default)")
    parser.add_argument("--threads", type=int, default=0, help="threads per worker (0: default)")
    parser.add_argument("--connections", type=int, default=0, help="0: one per rater")
    parser.add_argument("--timeout", type=float, default=120.0, help="per request (s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    parser.add_argument("--reload-cut", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--loadgen", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main() -> int:
    args = arguments()
    if args.loadgen:
        loadgen_main(args)
        return 0
    args.connections = args.connections or args.raters
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        raise SystemExit("set DATABASE_URL to a PostgreSQL server (the benchmark needs one)")
    if not port_free(args.port):
        raise SystemExit(f"port {args.port} is in use by another process: pass another --port")
    database = database_url(base, BENCH_DB)
    env = server_env(database, os.environ.get("REDIS_URL", ""))
    django_setup(env)
    contexts = contexts_for(args.raters, args.fill)
    plan = build_study(raters=args.raters, contexts=contexts)
    from django.db import connections

    connections.close_all()
    log = Path(tempfile.mkdtemp(prefix="heart-burst-")) / "gunicorn.log"
    server = start_gunicorn(env, args.port, log, workers=args.workers, threads=args.threads)
    spy, sampler, folded = None, None, log.parent / "worker.folded"
    ok = False
    try:
        print(
            f"{args.raters} raters arriving within {args.arrival:.0f} s, reading {args.read} s "
            f"per item; {plan['pairs']} pairs x quota {QUOTA} = {plan['places']} places; "
            f"gunicorn {_layout(env, args)} on 127.0.0.1:{args.port}; {load_line()} at start",
            flush=True,
        )
        if args.profile:
            workers = worker_pids(server.pid)
            spy = py_spy_start(workers[0], folded) if workers else None
            sampler = ActivitySampler(database)
            sampler.start()
        cpu_before = process_tree_cpu_s(server.pid)
        results = run_loadgen(f"http://127.0.0.1:{args.port}", plan, args)
        results["gunicorn_cpu_s"] = round(process_tree_cpu_s(server.pid) - cpu_before, 1)
        results["load_after"] = load_line()
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
        if sampler is not None:
            sampler.halt.set()
            sampler.join()
        stop(server)
    verified = verify(plan, results)
    results["server_errors"] = server_errors(log)
    if args.json:
        print(json.dumps({**_public(results), **verified, "plan": _plan_summary(plan)}))
    title = f"launch burst, reading {args.read} s per item" if args.read else "stress (no reading)"
    print_table(title, results)
    print(f"gunicorn CPU {results['gunicorn_cpu_s']} s; {results['load_after']} at the end")
    for line in results["server_errors"]:
        print("  server logged:", line)
    ok = print_checks(verified)
    print(f"worst p95 of a rater page: {worst_rater_p95(results):.0f} ms")
    if sampler is not None:
        print("\n".join(sampler.report()))
    if args.profile:
        print("\n".join(py_spy_report(folded)))
    connections.close_all()
    if not args.keep:
        database_url(base, BENCH_DB, drop_only=True)
    shutil.rmtree(log.parent, ignore_errors=True)
    return 0 if ok else 1


def _layout(env: dict, args) -> str:
    workers = args.workers or int(env.get("GUNICORN_WORKERS", "2"))
    threads = args.threads or int(env.get("GUNICORN_THREADS", "4"))
    return f"{workers} workers x {threads} threads"


def _public(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in ("consented", "qualification", "answers")}


def _plan_summary(plan: dict) -> dict:
    return {k: plan[k] for k in ("places", "pairs", "invite", "study")}


def process_tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of gunicorn's master and its workers."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in [pid, *worker_pids(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
    return total


if __name__ == "__main__":
    sys.exit(main())
