"""Leaderboard service end to end: load, fit every section, store snapshots, read them back.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_DB_SUFFIX=_me \
        .venv/bin/python benchmarks/bench_leaderboard_refit.py [--judgments 42000 1000000]

On PostgreSQL it creates its own database `heart_bench_refit<BENCH_DB_SUFFIX>` (dropped at the
end); without DATABASE_URL a temporary SQLite file. The study has the paper's shape: 18 systems
(one of them the human writers), 300 contexts (20 adversarial) cut two by two from 150 source
dialogues, strategy labels per completion, and `--judgments` verdicts split between human
raters (5-point scale, per-axis marks) and LLM judges (1-5 strength, both orders).

Prints wall-clock seconds of each step (best of --repeat), the full refit (the three default
boards, every section, agreement, stored), and the read path the pages and the API use (the
stored snapshot, p50/p95 over --reads requests through the whole Django stack, in process),
with the peak resident memory.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.bench_export import bench_database_url  # noqa: E402

BENCH_DB = "heart_bench_refit" + os.environ.get("BENCH_DB_SUFFIX", "")
SYSTEMS, CONTEXTS, ADVERSARIAL = 18, 300, 20
STRATEGIES = [
    "Affirmation",
    "Clarification",
    "Emotional Validation",
    "Offer Hope",
    "Reflective Statements",
    "Suggest Options",
    "Share Information",
]


EMOTIONS = ["anxiety", "depression", "sadness", "anger", "fear", "shame", "disgust"]
PROBLEMS = ["job crisis", "breakup", "academic pressure", "conflict with friends", "grief"]


def fill(n_judgments: int, seed: int = 0, style: list[str] | None = None):
    from annotation.models import Judgment, Pair, Rater
    from completions.models import Completion, DialogueContext, Study, System

    rng = random.Random(seed)
    study = Study.objects.create(
        slug="bench", name="bench", judgments_per_pair=10_000, style_features=style or []
    )
    systems = System.objects.bulk_create(
        System(
            study=study,
            name=f"sys-{i:02d}",
            kind="human" if i == 0 else "model",
            family="" if i == 0 else ["gpt", "claude", "gemini", "llama"][i % 4],
            ttft_ms=None if i == 0 else 200.0 * (1 + i),
            external_score=float(i) if i else None,
        )
        for i in range(SYSTEMS)
    )
    strength = {s.pk: rng.gauss(0, 0.8) for s in systems}
    contexts = DialogueContext.objects.bulk_create(
        DialogueContext(
            study=study,
            external_id=f"c{i}",
            turns=[],
            adversarial=i < ADVERSARIAL,
            source="ESConv",
            source_id=str(i // 2),  # two contexts cut from each source dialogue
            emotion_type=EMOTIONS[i % len(EMOTIONS)],
            problem_type=PROBLEMS[i % len(PROBLEMS)],
        )
        for i in range(CONTEXTS)
    )
    completions = Completion.objects.bulk_create(
        (
            Completion(
                context=c,
                system=s,
                # Replies of different lengths, some asking a question (style features).
                text=" ".join(["reply"] * rng.randint(5, 60)) + ("?" if rng.random() < 0.3 else ""),
                metadata={"strategies": rng.sample(STRATEGIES, 3)},
            )
            for c in contexts
            for s in systems
        ),
        batch_size=10_000,
    )
    by_context: dict[int, list[Completion]] = {}
    for comp in completions:
        by_context.setdefault(comp.context_id, []).append(comp)
    pairs = Pair.objects.bulk_create(
        (
            Pair(study=study, context_id=ctx, completion_a=a, completion_b=b, quota=10_000)
            for ctx, items in by_context.items()
            for i, a in enumerate(items)
            for b in items[i + 1 :]
        ),
        batch_size=10_000,
    )
    raters = Rater.objects.bulk_create(
        Rater(study=study, pseudonym=f"r{i:05d}", flagged=i % 50 == 0) for i in range(400)
    )
    llms = ["judge-gpt", "judge-claude", "judge-gemini"]
    when = datetime(2026, 1, 1, tzinfo=UTC)

    pairs = pairs[: max(1, n_judgments // 4)]  # at least four verdicts a pair: 2 human, 2 LLM
    system_of = {c.pk: c.system_id for c in completions}

    def judgment(k: int) -> Judgment:
        pair = pairs[k % len(pairs)]
        slot = k // len(pairs)
        human = slot % 2 == 0
        a, b = system_of[pair.completion_a_id], system_of[pair.completion_b_id]
        p = 1 / (1 + math.exp(strength[b] - strength[a]))
        u = rng.random()
        winner = "tie" if u < 0.1 else ("a" if u < 0.1 + 0.9 * p else "b")
        smax = 2 if human else 5
        return Judgment(
            study=study,
            pair=pair,
            judge_kind="human" if human else "llm",
            rater=raters[(k * 7) % len(raters)] if human else None,
            judge=f"{raters[(k * 7) % len(raters)].pseudonym}-{slot}"
            if human
            else llms[(slot // 2) % 3] + f"-{slot // 6}",
            judge_family="" if human else llms[(slot // 2) % 3][6:],
            winner=winner,
            strength=None if winner == "tie" else rng.randint(1, smax),
            strength_max=smax,
            # An LLM judge sees a pair in both orders (slots 1 and 3 of each four).
            shown_left=rng.choice("ab") if human else "ab"[(slot // 2) % 2],
            submitted_at=when,
            axes={"H": {"winner": winner}, "E": {"winner": rng.choice(["a", "b", "tie"])}},
        )

    for start in range(0, n_judgments, 50_000):  # bounded memory at a million
        chunk = [judgment(k) for k in range(start, min(start + 50_000, n_judgments))]
        Judgment.objects.bulk_create(chunk, batch_size=10_000)
    return study


def best_of(repeat: int, fn):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def peak_rss_mb() -> float:
    """Peak resident memory of this process (VmHWM: ru_maxrss would carry a parent's peak)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reads(study, repeat: int) -> list[tuple[str, float, float]]:
    """p50 / p95 milliseconds of the page and the API reading the stored snapshot."""
    from django.test.utils import override_settings

    # No collected static files here: plain static storage, as the tests use.
    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    with override_settings(STORAGES=storages):
        return _timed_reads(study, repeat)


def _timed_reads(study, repeat: int) -> list[tuple[str, float, float]]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.filter(username="bench").first()
    user = user or get_user_model().objects.create_superuser("bench", password="x")
    client = Client()
    client.force_login(user)
    out = []
    for name, url in (
        ("page", f"/studio/{study.slug}/leaderboard/"),
        ("page, htmx filter change", f"/studio/{study.slug}/leaderboard/?judges=human"),
        ("API", f"/api/studies/{study.slug}/leaderboard/"),
    ):
        headers: dict[str, Any] = {"HTTP_HX_REQUEST": "true"} if "htmx" in name else {}
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            response = client.get(url, **headers)
            times.append(1000 * (time.perf_counter() - start))
            assert response.status_code == 200, response.status_code
        times.sort()
        out.append(
            (name, times[len(times) // 2], times[min(len(times) - 1, int(0.95 * len(times)))])
        )
    return out


def run(n_judgments: int, repeat: int, n_reads: int, style: list[str] | None = None) -> None:
    from django.db import connection

    from ranking import services
    from ranking.models import LeaderboardSnapshot
    from ranking.services import cohorts

    t0 = time.perf_counter()
    study = fill(n_judgments, style=style)
    filled = time.perf_counter() - t0
    print(
        f"\n== {n_judgments:,} judgments, style features {style or 'none'}: "
        f"filled in {filled:.1f} s ({connection.vendor})"
    )
    data = services.study_data_load(study)
    rows = [
        ("study_data_load (7 queries)", lambda: services.study_data_load(study)),
        (
            "board: all judges, 1000 bootstraps",
            lambda: services.leaderboard_compute(study, data=data),
        ),
        (
            "agreement_compute (1000 bootstraps)",
            lambda: services.agreement_compute(study, data=data),
        ),
        (
            "boards by emotion_type (all judges)",
            lambda: services.by_compute(
                data,
                study=study,
                key="emotion_type",
                judges="all",
                subset="all",
                params=services.params_resolve("default"),
            ),
        ),
        (
            "boards by cohort (human judges)",
            lambda: cohorts.cohort_analysis_compute(study, data=data),
        ),
        (
            "every section of the human board (by field, cohorts)",
            lambda: services.sections_compute(
                data,
                study=study,
                judges="human",
                subset="all",
                preset="default",
                params=services.params_resolve("default"),
            ),
        ),
    ]
    if os.environ.get("PROFILE"):
        import cProfile

        cProfile.runctx("fn()", {"fn": rows[int(os.environ["PROFILE"])][1]}, {}, sort="cumulative")
        return
    print(f"{'step':<52} {'best s':>8}")
    for name, fn in rows:
        seconds, _ = best_of(repeat, fn)
        print(f"{name:<52} {seconds:8.3f}")
    LeaderboardSnapshot.objects.filter(study=study).delete()
    seconds, snaps = best_of(
        1, lambda: services.snapshot_refit_study(study_id=study.pk, trigger="command")
    )
    print(f"{'FULL REFIT: load + 3 boards (every section) + agreement + store':<52} {seconds:8.3f}")
    print(
        "  snapshot duration_ms:",
        [s.duration_ms for s in snaps],
        "n_comparisons:",
        [s.n_comparisons for s in snaps],
    )
    seconds, _ = best_of(
        1, lambda: services.snapshot_refit_study(study_id=study.pk, trigger="command")
    )
    print(f"{'second refit, unchanged data (nothing stored)':<52} {seconds:8.3f}")
    for name, p50, p95 in reads(study, n_reads):
        print(f"read the leaderboard ({name}): p50 {p50:.1f} ms, p95 {p95:.1f} ms over {n_reads}")
    print(f"peak RSS so far: {peak_rss_mb():.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judgments", type=int, nargs="+", default=[42_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reads", type=int, default=40)
    parser.add_argument(
        "--style", default="", help="style features the study controls for, e.g. length,questions"
    )
    args = parser.parse_args()
    style = [f for f in args.style.split(",") if f]
    base_url = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = bench_database_url(base_url, name=BENCH_DB)
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heart_site.settings")
    os.environ.setdefault("SECRET_KEY", "benchmark-only-key-not-secret-0123456789abcdef")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    print(f"{os.cpu_count()} CPUs; load average at the start: {os.getloadavg()[0]:.1f}")
    try:
        for n in args.judgments:
            connection.close()
            bench_database_url(base_url, name=BENCH_DB)  # a fresh database for each size
            call_command("migrate", verbosity=0)
            run(n, args.repeat, args.reads, style)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        connection.close()
        bench_database_url(base_url, name=BENCH_DB, drop_only=True)


if __name__ == "__main__":
    main()
