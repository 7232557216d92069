"""The demo study: a small ESConv sample, template "models", simulated judges.

Everything made here is labelled demo data (systems `demo-…`, family `demo`); see demo/README.md.
It goes through the same import commands a study admin uses, so the demo also exercises them.
"""

from __future__ import annotations

import json
import math
import random
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import OutputWrapper
from django.db.models import Q
from django.utils import timezone

from annotation.models import Pair
from completions.access import STUDY_ADMINS, WRITERS
from completions.models import DialogueContext, Study, StudyStatus
from llm.models import Endpoint
from llm.services import EndpointError
from writing.models import WritingContext
from writing.services import writing_contexts_open, writing_settings

SAMPLE = Path(settings.BASE_DIR) / "demo" / "esconv-sample.json"
DEMO_SLUG = "demo"
DEMO_ADMIN_USERNAME = "admin"

# (name, family, latent quality on the Bradley-Terry scale, template)
DEMO_SYSTEMS = [
    (
        "demo-attuned",
        "demo",
        1.0,
        "It sounds like {gist} has been weighing on you, and that's a lot to carry. "
        "What part of it feels heaviest right now?",
    ),
    (
        "demo-warm-generic",
        "demo",
        0.4,
        "I'm really sorry you're going through this. That sounds really tough, and your "
        "feelings make sense.",
    ),
    (
        "demo-advice-first",
        "demo",
        -0.2,
        "Have you tried making a list of small steps? Breaking {gist} into pieces might help.",
    ),
    ("demo-terse", "demo", -0.9, "OK. That happens to a lot of people. Try to stay positive."),
]
DEMO_JUDGES = [("demo-judge-g", "demo-gpt"), ("demo-judge-c", "demo-claude")]
# Simulated crowd raters on the first pairs, so agreement figures have humans to compare with;
# they use 3 of each pair's 5 slots, leaving room for whoever tries the rater link.
DEMO_RATERS = ["demo-rater-1", "demo-rater-2", "demo-rater-3"]
DEMO_HUMAN_PAIRS = 120


def _gist(context: DialogueContext) -> str:
    last = context.turns[-1]["text"].strip().rstrip(".!?")
    words = last.split()
    return "what you said about " + " ".join(words[-6:]) if len(words) > 3 else "this"


def _write_jsonl(rows: Iterator[dict[str, Any]]) -> Path:
    with tempfile.NamedTemporaryFile(
        "w", suffix=".jsonl", delete=False, encoding="utf-8"
    ) as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return Path(handle.name)


def _completion_rows(study: Study) -> Iterator[dict[str, Any]]:
    for context in study.contexts.order_by("id"):
        for rank, (name, family, _quality, template) in enumerate(DEMO_SYSTEMS):
            yield {
                "context_id": context.external_id,
                "system": name,
                "family": family,
                "kind": "model",
                "text": template.format(gist=_gist(context)),
                "ttft_ms": 1200 - 250 * rank,  # demo: the stronger templates "think" longer
                "demo": True,
            }


def _simulated_verdict(rng: random.Random, q_a: float, q_b: float) -> tuple[str, int]:
    p_a = 1 / (1 + math.exp(q_b - q_a))
    winner = "a" if rng.random() < p_a else "b"
    margin = abs(q_a - q_b)
    return winner, max(1, min(5, round(1 + 2.5 * margin + rng.random())))


def _judgment_rows(study: Study, seed: int = 7) -> Iterator[dict[str, Any]]:
    """Simulated verdicts (LLM judges on every pair, three crowd raters on the first pairs)."""
    rng = random.Random(seed)
    quality = {name: q for name, _f, q, _t in DEMO_SYSTEMS}
    pairs = Pair.objects.filter(study=study).select_related(
        "context", "completion_a__system", "completion_b__system"
    )
    now = timezone.now().isoformat()
    for pair_index, pair in enumerate(pairs.order_by("id")):
        sys_a, sys_b = pair.completion_a.system.name, pair.completion_b.system.name
        q_a, q_b = quality.get(sys_a, -1.2), quality.get(sys_b, -1.2)  # dataset turns: weakest
        base = {
            "context_id": pair.context.external_id,
            "system_a": sys_a,
            "system_b": sys_b,
            "completion_a": None,
            "completion_b": None,
            "submitted_at": now,
            "quality_check": False,
            "excluded": False,
        }
        for judge, family in DEMO_JUDGES:
            winner, strength = _simulated_verdict(rng, q_a, q_b)
            axes = {
                axis: {"winner": _simulated_verdict(rng, q_a, q_b)[0], "strength": strength}
                for axis in "HEART"
            }
            yield {
                **base,
                "shown_left": rng.choice("ab"),
                "judge": judge,
                "judge_kind": "llm",
                "judge_family": family,
                "winner": winner,
                "strength": strength,
                "strength_max": 5,
                "axes": axes,
                "rationale": "Simulated demo verdict.",
                "duration_ms": None,
            }
        if pair_index >= DEMO_HUMAN_PAIRS:
            continue
        for rater in DEMO_RATERS:
            winner, strength = _simulated_verdict(rng, q_a, q_b)
            tie = abs(q_a - q_b) < 0.3 and rng.random() < 0.3
            yield {
                **base,
                "shown_left": rng.choice("ab"),
                "judge": rater,
                "judge_kind": "human",
                "judge_family": None,
                "winner": "tie" if tie else winner,
                "strength": None if tie else min(strength, 2),
                "strength_max": 2,
                "axes": {},
                "rationale": "Simulated demo rater.",
                "duration_ms": rng.randint(8000, 40000),
            }


def _ensure_groups() -> None:
    Group.objects.get_or_create(name=STUDY_ADMINS)
    Group.objects.get_or_create(name=WRITERS)


def is_embedded_demo_database() -> bool:
    """True only for the embedded default's own SQLite file (what `make demo` runs on)."""
    db = settings.DATABASES["default"]
    embedded = Path(settings.BASE_DIR) / "db.sqlite3"
    return db["ENGINE"] == "django.db.backends.sqlite3" and Path(str(db["NAME"])) == embedded


def demo_admin_ensure(*, force: bool = False) -> str | None:
    """The demo superuser with a new random password (returned), or None when refused.

    A fixed, published password on a real database would be an open door, so the superuser is
    made only on the embedded demo database, or anywhere with `force`; each run sets a fresh
    password, so the printed login always works.
    """
    if not (force or is_embedded_demo_database()):
        return None
    User = get_user_model()
    admin, _ = User.objects.get_or_create(
        username=DEMO_ADMIN_USERNAME, defaults={"is_staff": True, "is_superuser": True}
    )
    password = secrets.token_urlsafe(12)
    admin.set_password(password)
    admin.is_staff = admin.is_superuser = admin.is_active = True
    admin.save()
    return password


def load_demo(*, stdout: OutputWrapper | None = None) -> Study:
    """Create (or top up) the demo study. Safe to run twice: every step is idempotent."""
    study, _ = Study.objects.get_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": "Demo study (ESConv sample, demo completions)",
            "description": "Demo data: see demo/README.md. Not for reporting results.",
            "items_per_rater": 8,
            "quality_check_rate": 0.2,
            "axis_marks": True,
            # The leaderboard shows a board controlled for reply length and questions asked.
            "style_features": ["length", "questions"],
        },
    )
    quiet = {"stdout": stdout} if stdout else {}
    call_command("import_esconv", str(SAMPLE), study=DEMO_SLUG, **quiet)
    call_command(
        "import_completions", str(_write_jsonl(_completion_rows(study))), study=DEMO_SLUG, **quiet
    )
    call_command("design_pairs", study=DEMO_SLUG, **quiet)
    call_command(
        "import_judgments", str(_write_jsonl(_judgment_rows(study))), study=DEMO_SLUG, **quiet
    )
    _demo_checks(study)
    _demo_care(study)
    if study.status == StudyStatus.DRAFT:  # it has its pairs now; a later pause or close stays
        from studio.services import study_set_status

        study_set_status(study=study, status=StudyStatus.OPEN)
    _ensure_groups()
    demo_writing_enable(study)
    try:
        demo_llm_endpoints()
    except EndpointError as exc:  # the operator has not allowed the local fake server
        if stdout:
            stdout.write(f"Demo LLM endpoints not registered: {exc}")
    _demo_boards(study)
    return study


def _demo_checks(study: Study) -> None:
    """Checks cut from the demo's own conversations (annotation.services.checks). Checks an
    older demo seeded from the rubric, where the longer reply was always the better one, are
    retired (their answers stay)."""
    from annotation.models import QualityCheckItem
    from annotation.services.checks import quality_checks_ensure, quality_item_retire

    legacy = QualityCheckItem.objects.filter(study=study, retired_at__isnull=True).filter(
        Q(note__startswith="rubric:") | Q(note__startswith="attention:")
    )
    for item in legacy:
        quality_item_retire(item=item)
    quality_checks_ensure(study=study)


def _demo_boards(study: Study) -> None:
    """Fit the demo's boards now (every section, categories and cohorts included), so the
    first read of the leaderboard is a stored snapshot; unchanged judgments store nothing."""
    from ranking.models import RefitTrigger
    from ranking.services import snapshot_refit_study

    snapshot_refit_study(study_id=study.pk, trigger=RefitTrigger.COMMAND)


def _demo_care(study: Study) -> None:
    """Qualification on, with items from the rubric that no simple bot passes (a setting the
    admin changes stays)."""
    from care.models import CareSettings
    from care.selectors import care_forget
    from care.services import qualification_items_seed_from_rubric

    CareSettings.objects.get_or_create(study=study, defaults={"qualification_enabled": True})
    qualification_items_seed_from_rubric(study=study)
    care_forget(study=study)


DEMO_WRITING_CONTEXTS = 6


def demo_writing_enable(study: Study) -> str:
    """Writing on in the demo, a few contexts open; returns the writer link's path."""
    ws = writing_settings(study)
    if not ws.enabled:
        ws.enabled = True
        ws.save(update_fields=["enabled"])
    missing = DEMO_WRITING_CONTEXTS - WritingContext.objects.filter(study=study).count()
    if missing > 0:
        writing_contexts_open(study=study, limit=missing)
    return f"/w/{ws.invite_token}/"


# The bundled fake LLM server (fakes/llm), started by scripts/demo.sh.
DEMO_LLM_URL_DEFAULT = "http://127.0.0.1:8765"
DEMO_LLM_ENDPOINTS = [
    # (name, provider, family): families differ from the demo systems' ("demo"), so no skips.
    ("demo-fake-judge-gpt", "openai", "fake-gpt"),
    ("demo-fake-judge-claude", "anthropic", "fake-claude"),
    ("demo-fake-model", "openai", "fake-llama"),
]


def demo_llm_endpoints(base_url: str | None = None) -> list[Endpoint]:
    """Register the clearly labelled demo endpoints pointing at the local fake server: a judge
    run or a generation works without any API key (the replies are simulated). The fake server
    is a local address: the operator allows it (scripts/demo.sh sets LLM_ALLOWED_HOSTS and
    LLM_ALLOW_PRIVATE_NETWORKS), else EndpointError says why."""
    import os

    from llm.services import endpoint_upsert

    base = (base_url or os.environ.get("HEART_DEMO_LLM_URL") or DEMO_LLM_URL_DEFAULT).rstrip("/")
    endpoints = []
    for name, provider, family in DEMO_LLM_ENDPOINTS:
        endpoint, _ = endpoint_upsert(
            name=name,
            label="Demo: bundled fake server, no API key, simulated replies",
            provider=provider,
            model=name,
            family=family,
            base_url=base + ("/v1" if provider == "openai" else ""),
            api_key_env="",
            max_concurrency=8,
            timeout_s=30.0,
            max_retries=2,
            is_demo=True,
        )
        endpoints.append(endpoint)
    return endpoints
