"""The release bundle of a study (paper 9.13): a zip anyone can check and recompute.

Contents: contexts, completions and judgments (JSON Lines, the contract formats; raters as
pseudonyms; writer texts and rationales that the personal-data screen holds are null there),
the LLM judges' prompt hashes and raw replies, the prompts with their versions and the LLM runs
(endpoints, models, parameters, tokens, cost), the rubric (paper Table 2) and the strategy
taxonomy, the study settings, the leaderboard and agreement as the platform computed them, the
board's record (`board_history.json`: snapshots with their sampling policy and each system's
share of judgments, and the dated events: systems added, taken off with a reason, put back,
the sampling policy changed), a datasheet, `recompute_leaderboard.py` with the project's
`ranking/bradley_terry.py` (and the bootstrap and verdict-rule modules it uses) beside it
(so the bundle alone recomputes the Elo and the live board's bootstrap intervals, from
`clusters.json`'s source conversations), and `SHA256SUMS` over every other file
(`sha256sum -c SHA256SUMS` works).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.utils import timezone

from annotation.judgment_export import contract_row, export_values, judgments_stream
from annotation.models import AXES, AXIS_NAMES, JudgeKind, Judgment
from annotation.quality import RUBRIC
from completions.exports import completion_row, completion_values, context_rows
from completions.models import Study
from completions.strategies import STRATEGY_NAMES
from ranking import services
from ranking.record import board_history
from ranking.selectors import off_board

from . import datasheet
from .screening import ScreenSummary, release_screen

SUMS = "SHA256SUMS"
SCRIPT = "recompute_leaderboard.py"
RANKING_FILES = (
    "ranking/__init__.py",
    "ranking/bradley_terry.py",
    "ranking/bootstrap.py",
    "ranking/verdicts.py",
)
# The bundle records the live boards: the default preset with the study's settings (the clustered
# bootstrap, seed 0), which the script repeats from the same rows and conversations.
RELEASE_KEYS = (
    "study",
    "judges",
    "n_comparisons",
    "n_judgments",
    "params",
    "interval",
    "counts",
    "ties",
    "too_few",
    "warnings",
    "systems",
)
STUDY_PRIVATE = {"id", "invite_token", "completion_code", "prolific_redirect_url"}


class ReleaseError(Exception):
    pass


def _jsonl(rows: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    for row in rows:
        yield (json.dumps(row, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def _json(value: Any) -> Iterator[bytes]:
    yield (json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8")


def study_settings(study: Study) -> dict[str, Any]:
    values = {
        f.name: getattr(study, f.name)
        for f in Study._meta.concrete_fields
        if f.name not in STUDY_PRIVATE
    }
    return values


def leaderboards(study: Study) -> dict[str, Any]:
    """The live boards (`leaderboard --format json`, default preset) for each judge filter,
    with the intervals the pages show."""
    data = services.study_data_load(study)
    out = {}
    for judges in ("all", "human", "llm"):
        if data.select(judges=judges).empty:
            continue
        result = services.leaderboard_compute(study, judges=judges, data=data)
        out[judges] = {k: result.get(k) for k in RELEASE_KEYS}
        out[judges]["off_board"] = off_board(study)
    return out


def clusters(study: Study) -> dict[str, Any]:
    """Each context's source conversation: what the bootstrap resamples (the script reads it)."""
    from completions.models import DialogueContext
    from ranking import selectors

    by_pk = selectors.context_clusters(study)
    ids = DialogueContext.objects.filter(study=study).values_list("id", "external_id")
    return {
        "what": "context id -> the source conversation it was cut from; the leaderboard's "
        "bootstrap resamples these conversations",
        "clusters": {external: by_pk[pk] for pk, external in ids},
    }


def llm_judge_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Every LLM verdict's prompt hash and raw reply (the prompts themselves are kept by hash)."""
    rows = (
        Judgment.objects.filter(study=study, judge_kind=JudgeKind.LLM)
        .order_by("id")
        .values(
            "pair__context__external_id",
            "pair__completion_a__system__name",
            "pair__completion_b__system__name",
            "judge",
            "judge_family",
            "prompt_hash",
            "raw_output",
        )
    )
    for row in rows.iterator(chunk_size=2000):
        yield {
            "context_id": row["pair__context__external_id"],
            "system_a": row["pair__completion_a__system__name"],
            "system_b": row["pair__completion_b__system__name"],
            "judge": row["judge"],
            "judge_family": row["judge_family"] or None,
            "prompt_hash": row["prompt_hash"] or None,
            "raw_output": row["raw_output"] or None,
        }


def llm_prompts(study: Study) -> dict[str, Any]:
    """The prompts and their versions: the judge template, the study's supporter prompts, and
    every LLM run with its endpoints (provider, model, family; never a key)."""
    from annotation import judge_prompt
    from completions.models import SupporterPrompt
    from llm.models import Run

    def template(version: str) -> dict[str, str]:
        t = judge_prompt.TEMPLATES[version]
        return {"version": t.version, "system": t.system, "user": t.user, "sha256": t.sha256}

    # Each template the study's verdicts were made with (they store its version), readable.
    # Imported and demo verdicts name none: None (or anything not a known version) is skipped.
    stored = (
        Judgment.objects.filter(study=study, judge_kind=JudgeKind.LLM)
        .values_list("metadata__template", flat=True)
        .distinct()
    )
    used = {v for v in stored if isinstance(v, str) and v in judge_prompt.TEMPLATES}
    runs = Run.objects.filter(study=study).prefetch_related("endpoints").order_by("id")
    return {
        "judge_template": template(judge_prompt.CURRENT.version),
        "judge_templates_used": [template(v) for v in sorted(used)],
        "supporter_prompts": list(
            SupporterPrompt.objects.filter(study=study)
            .order_by("version")
            .values("version", "text", "created_at")
        ),
        "runs": [
            {
                "run": run.pk,
                "kind": run.kind,
                "status": run.status,
                "params": run.params,
                "plan": run.plan,
                "endpoints": [
                    {"name": e.name, "provider": e.provider, "model": e.model, "family": e.family}
                    for e in run.endpoints.all()
                ],
                "tokens_in": run.tokens_in,
                "tokens_out": run.tokens_out,
                "cost_usd": run.cost,
                "created_at": run.created_at,
                "finished_at": run.finished_at,
            }
            for run in runs
        ],
    }


def rubric() -> dict[str, Any]:
    return {
        "version": "HEART paper Table 2",
        "axes": {axis: {"name": AXIS_NAMES[axis], **RUBRIC.get(axis, {})} for axis in AXES},
        "strategy_taxonomy": list(STRATEGY_NAMES),
    }


def screened_completion_rows(study: Study, screen: ScreenSummary) -> Iterator[dict[str, Any]]:
    """Completions; a writer text the screen holds has a null text and `"withheld": true`."""
    for row in completion_values(study).order_by("id").iterator(chunk_size=2000):
        out = completion_row(row)
        if row["id"] in screen.withheld_completions:
            out["text"], out["withheld"] = None, True
        yield out


def screened_judgment_blocks(study: Study, screen: ScreenSummary) -> Iterator[bytes]:
    """judgments.jsonl; held writer texts and rationales are null (everything else as exported)."""
    if not (screen.withheld_texts or screen.withheld_judgments):
        yield from judgments_stream(study=study, fmt="jsonl")
        return
    queryset = Judgment.objects.filter(study=study).order_by("id")
    rows = []
    for row in export_values(queryset).iterator(chunk_size=5000):
        judgment_id = row["id"]
        out = contract_row(row)
        if judgment_id in screen.withheld_judgments:
            out["rationale"] = None
        for side in ("completion_a", "completion_b"):
            if out[side] in screen.withheld_texts:
                out[side] = None
        moment = out["submitted_at"]
        rows.append({**out, "submitted_at": moment.isoformat() if moment else None})
        if len(rows) == 5000:
            yield from _jsonl(rows)
            rows = []
    yield from _jsonl(rows)


def _files(
    study: Study, *, generated_at: str, screen: ScreenSummary
) -> list[tuple[str, Iterable[bytes]]]:
    base = Path(settings.BASE_DIR)
    sheet = datasheet.render(study, generated_at=generated_at, screen=screen)
    return [
        ("DATASHEET.md", [sheet.encode("utf-8")]),
        ("study.json", _json(study_settings(study))),
        ("contexts.jsonl", _jsonl(context_rows(study))),
        ("completions.jsonl", _jsonl(screened_completion_rows(study, screen))),
        ("judgments.jsonl", screened_judgment_blocks(study, screen)),
        ("llm_judgments.jsonl", _jsonl(llm_judge_rows(study))),
        ("llm_prompts.json", _json(llm_prompts(study))),
        ("rubric.json", _json(rubric())),
        ("leaderboard.json", _json(leaderboards(study))),
        ("clusters.json", _json(clusters(study))),
        ("agreement.json", _json(services.agreement_compute(study))),
        ("board_history.json", _json(board_history(study))),
        (SCRIPT, [(Path(__file__).parent / "recompute_leaderboard.py").read_bytes()]),
        ("ranking/__init__.py", [b'"""The HEART studio ranking maths, as released."""\n']),
        *[(name, [(base / name).read_bytes()]) for name in RANKING_FILES[1:]],
    ]


def release_build(*, study: Study, out: str | Path | IO[bytes]) -> dict[str, str]:
    """Write the bundle (streamed file by file); returns {file name: sha256}."""
    generated_at = timezone.now().isoformat(timespec="seconds")
    screen = release_screen(study=study)  # personal data in writer texts and rationales: held
    sums: dict[str, str] = {}
    folder = f"{study.slug}-release"
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, blocks in _files(study, generated_at=generated_at, screen=screen):
            digest = hashlib.sha256()
            with bundle.open(f"{folder}/{name}", "w", force_zip64=True) as fh:
                for block in blocks:
                    digest.update(block)
                    fh.write(block)
            sums[name] = digest.hexdigest()
        listing = "".join(f"{h}  {n}\n" for n, h in sums.items())
        bundle.writestr(f"{folder}/{SUMS}", listing)
    return sums


# Verifying ------------------------------------------------------------------------------------


def _hash_member(bundle: zipfile.ZipFile, name: str) -> str:
    digest = hashlib.sha256()
    with bundle.open(name) as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def release_check_hashes(bundle: zipfile.ZipFile) -> tuple[str, list[str]]:
    """(the bundle's folder, problems): every listed file present with its hash, none unlisted."""
    listings = [n for n in bundle.namelist() if n.endswith("/" + SUMS) or n == SUMS]
    if len(listings) != 1:
        return "", [f"expected one {SUMS} file, found {len(listings)}"]
    folder = listings[0][: -len(SUMS)]
    expected = {}
    for line in bundle.read(listings[0]).decode("utf-8").splitlines():
        digest, _, name = line.partition("  ")
        expected[name] = digest
    problems = []
    present = {n[len(folder) :] for n in bundle.namelist() if not n.endswith("/")} - {SUMS}
    for name in sorted(present - expected.keys()):
        problems.append(f"{name}: not listed in {SUMS}")
    for name, digest in expected.items():
        if name not in present:
            problems.append(f"{name}: listed but missing")
        elif _hash_member(bundle, folder + name) != digest:
            problems.append(f"{name}: SHA-256 does not match")
    return folder, problems


def release_verify(path: str | Path) -> tuple[bool, list[str]]:
    """Check every hash, then run the bundle's script in a fresh process (`--check`)."""
    try:
        bundle = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        return False, [f"not a readable zip file: {exc}"]
    with bundle:
        folder, problems = release_check_hashes(bundle)
        if problems:
            return False, problems
        with tempfile.TemporaryDirectory() as tmp:
            bundle.extractall(tmp)
            done = subprocess.run(
                [sys.executable, "-I", SCRIPT, "--check"],
                cwd=Path(tmp) / folder,
                capture_output=True,
                text=True,
                timeout=600,
            )
    lines = ["every SHA-256 matches", *done.stdout.splitlines(), *done.stderr.splitlines()]
    return done.returncode == 0, lines
