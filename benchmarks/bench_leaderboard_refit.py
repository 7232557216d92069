"""Leaderboard service end to end: load from the database, fit, analyse, store snapshots.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .venv/bin/python benchmarks/bench_leaderboard_refit.py [--judgments 42000]

On PostgreSQL it creates its own database `heart_bench_refit` (dropped at the end); without
DATABASE_URL a temporary SQLite file. The study has the paper's shape: 18 systems (one of them
the human writers), 300 contexts (20 adversarial), 5 strategy labels per completion, and
`--judgments` verdicts split between human raters (5-point scale, per-axis marks) and three
LLM judges (1-5 strength). Prints wall-clock seconds of each step (best of --repeat).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.bench_export import bench_database_url  # noqa: E402

BENCH_DB = "heart_bench_refit"
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


def fill(n_judgments: int, seed: int = 0):
    from annotation.models import Judgment, Pair, Rater
    from completions.models import Completion, DialogueContext, Study, System

    rng = random.Random(seed)
    study = Study.objects.create(slug="bench", name="bench", judgments_per_pair=10_000)
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
        DialogueContext(study=study, external_id=f"c{i}", turns=[], adversarial=i < ADVERSARIAL)
        for i in range(CONTEXTS)
    )
    completions = Completion.objects.bulk_create(
        (
            Completion(
                context=c,
                system=s,
                text="reply",
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

    pairs = pairs[: max(1, n_judgments // 4)]  # four verdicts a pair: 2 human, 2 LLM

    def judgment(k: int) -> Judgment:
        pair = pairs[k % len(pairs)]
        slot = k // len(pairs)
        human = slot % 2 == 0
        p = 1 / (
            1
            + math.exp(
                strength[pair.completion_b.system_id] - strength[pair.completion_a.system_id]
            )
        )
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
            else llms[slot % 3] + f"-{slot // 3}",
            judge_family="" if human else llms[slot % 3][6:],
            winner=winner,
            strength=None if winner == "tie" else rng.randint(1, smax),
            strength_max=smax,
            shown_left=rng.choice("ab"),
            submitted_at=when,
            axes={"H": {"winner": winner}, "E": {"winner": rng.choice(["a", "b", "tie"])}},
        )

    Judgment.objects.bulk_create((judgment(k) for k in range(n_judgments)), batch_size=10_000)
    return study


def best_of(repeat: int, fn):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judgments", type=int, default=42_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base_url = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = bench_database_url(base_url, name=BENCH_DB)
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heart_site.settings")
    os.environ.setdefault("SECRET_KEY", "benchmark-only-key-not-secret-0123456789abcdef")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from ranking import selectors, services

    try:
        call_command("migrate", verbosity=0)
        t0 = time.perf_counter()
        study = fill(args.judgments)
        print(
            f"filled {args.judgments} judgments in {time.perf_counter() - t0:.1f} s "
            f"({connection.vendor})"
        )
        rows = [
            ("judgments_frame (1 query)", lambda: selectors.judgments_frame(study)),
            ("study_data_load (5 queries)", lambda: services.study_data_load(study)),
        ]
        data = services.study_data_load(study)
        rows += [
            (
                "leaderboard, fisher CI",
                lambda: services.leaderboard_compute(study, data=data, ci="fisher"),
            ),
            (
                "leaderboard, 1000 context bootstraps",
                lambda: services.leaderboard_compute(study, data=data),
            ),
            (
                "agreement_compute (1000 bootstraps)",
                lambda: services.agreement_compute(study, data=data),
            ),
        ]
        if os.environ.get("PROFILE"):
            import cProfile

            cProfile.runctx(
                "fn()", {"fn": rows[int(os.environ["PROFILE"])][1]}, {}, sort="cumulative"
            )
            return
        print(f"{'step':<42} {'best s':>8}")
        for name, fn in rows:
            seconds, _ = best_of(args.repeat, fn)
            print(f"{name:<42} {seconds:8.3f}")
        seconds, snaps = best_of(
            1, lambda: services.snapshot_refit_study(study_id=study.pk, trigger="command")
        )
        print(f"{'full refit: load + 3 fits + agreement + store':<42} {seconds:8.3f}")
        print(
            "snapshot duration_ms:",
            [s.duration_ms for s in snaps],
            "n_comparisons:",
            [s.n_comparisons for s in snaps],
        )
        seconds, _ = best_of(
            1, lambda: services.snapshot_refit_study(study_id=study.pk, trigger="command")
        )
        print(f"{'second refit, unchanged data (no store)':<42} {seconds:8.3f}")
    finally:
        connection.close()
        bench_database_url(base_url, name=BENCH_DB, drop_only=True)


if __name__ == "__main__":
    main()
