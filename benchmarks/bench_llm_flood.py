"""A provider that floods: the memory of the process executing the run, and the database growth.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/bench_llm_flood.py [--units 100] [--port 8141]

The fake server (its own process) answers every call of a scenario with 20 MB of reply
(`flood=20`), a reply that never ends (`flood=endless`) or an endless stream without text
(`flood=noise`); a baseline scenario gets ordinary replies. Each scenario's run is executed by
a fresh child process doing what a Celery worker's task does (`run_execute`), which prints its
peak resident memory (VmHWM) when it is done: so the figure is that process's whole peak,
Django and the SDKs included, and scenarios do not inherit each other's peak. Judge runs send
whole (not streamed) requests at concurrency 32; generation streams, 4 at a time per process
(LLM_STREAMS_PER_PROCESS). Database growth: `pg_database_size` before and after each scenario,
and the bytes of raw replies the units kept.

The database is its own (`heart_bench_flood` + BENCH_DB_SUFFIX), dropped at the end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.bench_export import bench_database_url  # noqa: E402
from benchmarks.bench_llm_judge import fill_pairs, wait_http  # noqa: E402

BENCH_DB = "heart_bench_flood" + os.environ.get("BENCH_DB_SUFFIX", "")
SCENARIOS = [
    # (label, run kind, model options, provider)
    ("judge, ordinary replies (baseline)", "judge", "", "openai"),
    ("judge, 20 MB per call, whole JSON bodies", "judge", "@flood=20", "openai"),
    ("judge, 20 MB per call (Anthropic protocol)", "judge", "@flood=20", "anthropic"),
    ("judge, endless JSON body", "judge", "@flood=endless", "openai"),
    ("generate, ordinary replies (baseline)", "generate", "", "openai"),
    ("generate, 20 MB per call, streamed", "generate", "@flood=20", "openai"),
    ("generate, endless stream", "generate", "@flood=endless", "openai"),
    ("generate, endless stream without text", "generate", "@flood=noise", "openai"),
]


def child(run_id: int) -> None:
    """Execute one run as a worker's task would, then print this process's peak RSS."""
    import django

    django.setup()
    from llm.executor import run_execute

    run_execute(run_id)
    status = Path("/proc/self/status").read_text()
    peak_kb = next(int(line.split()[1]) for line in status.splitlines() if "VmHWM" in line)
    print(f"peak_kb={peak_kb}")


def database_bytes() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        return cursor.fetchone()[0]


def scenario(server: str, label: str, kind: str, options: str, provider: str, units: int):
    from django.db.models import Sum
    from django.db.models.functions import Length

    from completions.models import DialogueContext, Study
    from llm import services
    from llm.models import Endpoint, Unit, UnitStatus

    name = f"flood-{len(Endpoint.objects.all())}"
    if kind == "judge":
        study = fill_pairs(units // 2)
        study.slug = study.name = name
        study.save()
    else:
        study = Study.objects.create(slug=name, name=name)
        DialogueContext.objects.bulk_create(
            DialogueContext(
                study=study,
                external_id=f"{name}-{i}",
                turns=[{"speaker": "seeker", "text": f"I feel low today ({name} {i})."}],
            )
            for i in range(units)
        )
    endpoint = Endpoint.objects.create(
        name=name,
        provider=provider,
        model=f"{name}{options}",
        family="bench",
        base_url=server + ("/v1" if provider == "openai" else ""),
        max_concurrency=32,
        max_retries=0,
        timeout_s=60,
    )
    run = services.run_plan(study=study, kind=kind, endpoints=[endpoint])
    services.run_start(run=run, dispatch=False)
    before = database_bytes()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(run.pk)],
        cwd=ROOT,
        env=os.environ,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"{label}: the executing process failed:\n{done.stderr[-3000:]}")
    out = done.stdout
    wall = time.perf_counter() - started
    peak_mb = int(out.rsplit("peak_kb=", 1)[1]) / 1024
    grown = database_bytes() - before
    rows = Unit.objects.filter(run=run)
    n = rows.count()
    kept = rows.aggregate(b=Sum(Length("raw_reply")))["b"] or 0
    by_status = {s: rows.filter(status=s).count() for s in UnitStatus.values}
    statuses = ", ".join(f"{v} {k}" for k, v in by_status.items() if v)
    print(f"{label}:")
    print(f"  units: {n} ({statuses}) in {wall:.1f} s")
    print(f"  peak RSS of the executing process: {peak_mb:.0f} MB")
    print(
        f"  database growth: {grown / 1024:.0f} KiB ({grown / n / 1024:.1f} KiB per unit); "
        f"raw replies kept: {kept / 1024:.0f} KiB in all"
    )
    print(f"  run page: {run_page_bytes(run) / 1024:.0f} KiB (its first page of failures)")
    return peak_mb


def run_page_bytes(run) -> int:
    from django.contrib.auth import get_user_model
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(
        username="bench-flood", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    response = client.get(f"/studio/{run.study.slug}/llm/runs/{run.pk}/", secure=True)
    assert response.status_code == 200, response.status_code
    return len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=100, help="calls per scenario")
    parser.add_argument("--port", type=int, default=8141, help="the fake server's port")
    parser.add_argument(
        "--uncapped",
        action="store_true",
        help="also run 10 calls of the 20 MB judge scenario with the caps lifted (as before)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # Production settings, minus the collected-static manifest (the run page is fetched).
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")
    if args.child:
        child(args.child)
        return
    base = os.environ.get("DATABASE_URL")
    if not base or not base.startswith(("postgres://", "postgresql://")):
        raise SystemExit("set DATABASE_URL to a PostgreSQL server (the growth is measured there)")
    os.environ["DATABASE_URL"] = bench_database_url(base, name=BENCH_DB)
    # The fake server is on this machine: allowed here as the demo allows it.
    os.environ.setdefault("SECRET_KEY", "bench-flood-" + os.urandom(16).hex())
    os.environ.update(
        LLM_ALLOWED_HOSTS="127.0.0.1",
        LLM_ALLOW_PRIVATE_NETWORKS="1",
        CELERY_TASK_ALWAYS_EAGER="1",
    )
    os.environ.pop("REDIS_URL", None)
    server = f"http://127.0.0.1:{args.port}"
    fake = subprocess.Popen(
        [sys.executable, "-m", "fakes.llm", "--port", str(args.port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    try:
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        wait_http(server + "/healthz")
        caps = settings.LLM_REPLY_MAX_CHARS
        print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores, shared)")
        print(
            f"caps: judge {caps['judge']:,} characters, generate {caps['default']:,}; "
            f"raw reply kept: {settings.LLM_RAW_REPLY_KEEP_CHARS:,} characters"
        )
        for label, kind, options, provider in SCENARIOS:
            scenario(server, label, kind, options, provider, args.units)
        if args.uncapped:
            # The child reads its settings from the environment: lift the caps for it only.
            os.environ["LLM_REPLY_MAX_CHARS"] = "default=1000000000,judge=1000000000"
            # Ten calls, all in flight at once: enough to see it (more would take gigabytes).
            label = "judge, 20 MB per call, CAPS LIFTED (for comparison), 10 calls"
            scenario(server, label, "judge", "@flood=20", "openai", 10)
        print(f"load average at end: {os.getloadavg()[0]:.2f}")
    finally:
        fake.terminate()
        fake.wait(30)
        from django.db import connections

        connections.close_all()
        bench_database_url(base, name=BENCH_DB, drop_only=True)


if __name__ == "__main__":
    main()
