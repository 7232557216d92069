"""Judgments in and out as JSON Lines: judgments made elsewhere join a study as if made here.

Import (`judgments_import`): the whole file is parsed and validated first ("line N: reason"), then
written in one transaction with bulk inserts; any error leaves the database as it was.

- Contexts, systems and completions are created as needed: a context made here has no turns
  (turns=[]; a later contexts import fills it in), a new system is a "model" (the file does not say
  its kind; "original-dataset" is a "dataset"), a completion comes from completion_a/_b text. A
  completion that exists with another text, or a missing completion without text, is an error.
- The pair is found or created in canonical orientation (completion_a has the smaller id); when
  the file's system_a is the pair's completion_b, winner, shown_left and every axis winner flip.
- Human judges become Raters (source "import") whose pseudonym is a keyed HMAC of the file's judge
  id (settings.PSEUDONYM_KEY, the same recipe as panel raters, so one person stays one rater); the
  file's id is kept only in the private Rater.external_id (a judge id that already is one of
  the study's pseudonyms, i.e. its own export coming back, is that rater). Judgment.judge = the
  pseudonym. LLM judges keep their name. "excluded": true sets the rater's exclusion_override.
- strength_max: the file's value when given, else 2 (human) or 5 (llm) when there is a strength,
  else null. A tie carrying a strength keeps the verdict and drops the strength (the rater's scale
  has no strength for "about the same"); the dropped value is kept in Judgment.metadata
  ["dropped_tie_strength"] and counted in the report.
- Pair.n_judgments counts human judgments; an import that would pass a pair's quota raises the
  quota to fit (judgments made elsewhere are facts).
- Idempotent: (pair, judge) is unique for a human, (pair, judge, shown order) for an LLM
  judge; an identical verdict already stored is skipped, a
  different one is an error naming the line. Rows with "quality_check": true are skipped and
  counted: their gold items live on the other platform (their "excluded" still applies).

Export: annotation.judgment_export (judgments_export, re-exported here).
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest

from completions.importers import ImportFileError, read_jsonl
from completions.models import Completion, DialogueContext, Study, System, SystemKind

from .judgment_export import FIELDS, judgments_export  # noqa: F401 (one import point)
from .models import AXES, JudgeKind, Judgment, Pair, Rater

KNOWN_KEYS = set(FIELDS)  # the contract's fields; anything else goes to metadata
DEFAULT_SCALE = {JudgeKind.HUMAN: 2, JudgeKind.LLM: 5}
FLIP = {"a": "b", "b": "a", "tie": "tie", None: None, "": ""}
BATCH = 2000


@dataclass
class JudgmentRecord:
    line: int
    context_id: str
    system_a: str
    system_b: str
    completion_a: str | None
    completion_b: str | None
    shown_left: str
    judge: str
    judge_kind: str
    judge_family: str
    winner: str
    strength: int | None
    strength_max: int | None
    axes: dict[str, Any]
    rationale: str
    duration_ms: int | None
    submitted_at: datetime
    quality_check: bool
    excluded: bool
    metadata: dict[str, Any]


@dataclass
class JudgmentImportReport:
    read: int = 0
    created: int = 0
    already_present: int = 0
    duplicate_lines: int = 0
    quality_checks_skipped: int = 0
    tie_strength_dropped: int = 0
    contexts_created: int = 0
    systems_created: int = 0
    completions_created: int = 0
    pairs_created: int = 0
    raters_created: int = 0
    quotas_raised: int = 0
    flipped: int = 0

    def lines(self) -> list[str]:
        always = {"read", "created", "already_present"}
        return [f"{k.replace('_', ' ')}: {v}" for k, v in self.__dict__.items() if k in always or v]


# Parsing --------------------------------------------------------------------------------------


def _choice(obj: dict, key: str, allowed: tuple, *, default: Any = ...) -> Any:
    value = obj.get(key, default) if default is not ... else obj.get(key)
    if value not in allowed:
        raise ValueError(
            f"'{key}' must be one of {[a for a in allowed if a is not None]}"
            f"{' or null' if None in allowed else ''}, not {value!r}"
        )
    return value


def _text(obj: dict, key: str, *, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"'{key}' must be a non-empty string")
    return value


def _int(obj: dict, key: str, low: int, high: int | None = None) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        raise ValueError(f"'{key}' must be an integer in [{low}, {high or 'inf'}] or null")
    return value


def _bool(obj: dict, key: str) -> bool:
    value = obj.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ValueError(f"'{key}' must be true, false or null")
    return value


def _timestamp(obj: dict) -> datetime:
    value = obj.get("submitted_at")
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"'submitted_at' must be an ISO 8601 time, not {value!r}") from None
    # A time without an offset is read as UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _axes(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("'axes' must be an object")
    for axis, mark in value.items():
        if axis not in AXES:
            raise ValueError(f"unknown axis {axis!r} (axes are {', '.join(AXES)})")
        if not isinstance(mark, dict) or mark.get("winner") not in ("a", "b", "tie"):
            raise ValueError(f"axis {axis}: expected {{'winner': 'a'|'b'|'tie', ...}}")
        _int(mark, "strength", 0)
    return value


def parse_judgment(obj: dict[str, Any], line: int) -> JudgmentRecord:
    kind = _choice(obj, "judge_kind", tuple(JudgeKind.values))
    winner = _choice(obj, "winner", ("a", "b", "tie"))
    strength, scale = _int(obj, "strength", 1, 5), _int(obj, "strength_max", 1)
    metadata = {k: v for k, v in obj.items() if k not in KNOWN_KEYS}
    if winner == "tie" and strength is not None:
        metadata["dropped_tie_strength"], strength = strength, None
    if scale is None and strength is not None:
        scale = DEFAULT_SCALE[kind]
    if strength is not None and strength > scale:
        raise ValueError(f"strength {strength} is above strength_max {scale}")
    record = JudgmentRecord(
        line=line,
        context_id=_text(obj, "context_id", required=True).strip(),
        system_a=_text(obj, "system_a", required=True).strip(),
        system_b=_text(obj, "system_b", required=True).strip(),
        completion_a=_text(obj, "completion_a"),
        completion_b=_text(obj, "completion_b"),
        shown_left=_choice(obj, "shown_left", ("a", "b", None)) or "",
        judge=_text(obj, "judge", required=True).strip(),
        judge_kind=kind,
        judge_family=_text(obj, "judge_family") or "",
        winner=winner,
        strength=strength,
        strength_max=scale,
        axes=_axes(obj.get("axes")),
        rationale=_text(obj, "rationale") or "",
        duration_ms=_int(obj, "duration_ms", 0),
        submitted_at=_timestamp(obj),
        quality_check=_bool(obj, "quality_check"),
        excluded=_bool(obj, "excluded"),
        metadata=metadata,
    )
    if record.system_a == record.system_b:
        raise ValueError("system_a and system_b must differ")
    return record


def read_judgments(path: str | Path) -> list[JudgmentRecord]:
    return read_jsonl(path, parse_judgment)


def flip(record: JudgmentRecord) -> None:
    """Turn a record around so that its side a is the other completion."""
    record.system_a, record.system_b = record.system_b, record.system_a
    record.completion_a, record.completion_b = record.completion_b, record.completion_a
    record.winner, record.shown_left = FLIP[record.winner], FLIP[record.shown_left]
    record.axes = {k: {**m, "winner": FLIP[m["winner"]]} for k, m in record.axes.items()}


def import_pseudonym(*, study: Study, external_id: str) -> str:
    """Keyed HMAC of a judge id: stable, not reversible (as annotation.services does for panels)."""
    key = settings.PSEUDONYM_KEY.encode()
    digest = hmac.new(key, f"{study.pk}:{external_id}".encode(), hashlib.sha256).hexdigest()
    return "r-" + digest[:16]


# Writing --------------------------------------------------------------------------------------


def judgments_import(*, study: Study, path: str | Path) -> JudgmentImportReport:
    """Import a judgments JSONL file into `study`; all or nothing, idempotent."""
    return judgments_import_records(study=study, records=read_judgments(path))


@transaction.atomic
def judgments_import_records(
    *, study: Study, records: list[JudgmentRecord]
) -> JudgmentImportReport:
    report = JudgmentImportReport(read=len(records))
    raters = _raters(study, records, report)
    real = [r for r in records if not r.quality_check]
    report.quality_checks_skipped = len(records) - len(real)
    report.tie_strength_dropped = sum("dropped_tie_strength" in r.metadata for r in real)
    contexts = _contexts(study, real, report)
    systems = _systems(study, real, report)
    completions = _completions(study, real, contexts, systems, report)
    pairs = _pairs(study, real, (contexts, systems, completions), report)
    _judgments(study, real, pairs, raters, report)
    return report


def _contexts(study: Study, records, report) -> dict[str, int]:
    wanted = {r.context_id for r in records}
    found = dict(DialogueContext.objects.filter(study=study).values_list("external_id", "id"))
    new = [
        DialogueContext(study=study, external_id=c, turns=[], source="import")
        for c in sorted(wanted - found.keys())
    ]
    DialogueContext.objects.bulk_create(new, batch_size=BATCH)
    report.contexts_created = len(new)
    return found | {c.external_id: c.pk for c in new}


def _systems(study: Study, records, report) -> dict[str, int]:
    found = dict(System.objects.filter(study=study).values_list("name", "id"))
    names = {r.system_a for r in records} | {r.system_b for r in records}
    new = [
        System(
            study=study, name=n, kind=_kind(n), family=_kind(n) if n == "original-dataset" else ""
        )
        for n in sorted(names - found.keys())
    ]
    System.objects.bulk_create(new)
    report.systems_created = len(new)
    return found | {s.name: s.pk for s in new}


def _kind(name: str) -> str:
    return SystemKind.DATASET if name == "original-dataset" else SystemKind.MODEL


def _completions(study, records, contexts, systems, report) -> dict[tuple[int, int], int]:
    """(context id, system id) -> completion id, creating completions from the file's texts."""
    rows = Completion.objects.filter(context__study=study).values_list(
        "context_id", "system_id", "id", "text"
    )
    known = {(c, s): (pk, text) for c, s, pk, text in rows.iterator(chunk_size=BATCH)}
    new: dict[tuple[int, int], Completion] = {}
    for r in records:
        for system, text in ((r.system_a, r.completion_a), (r.system_b, r.completion_b)):
            key = (contexts[r.context_id], systems[system])
            have = known.get(key) or ((None, new[key].text) if key in new else None)
            if have is None and text is None:
                raise ImportFileError(
                    f"line {r.line}: no completion of {system!r} on context "
                    f"{r.context_id!r} and the file gives no text"
                )
            if have is None:
                new[key] = Completion(
                    context_id=key[0],
                    system_id=key[1],
                    text=text,
                    provenance={"source": "judgments import"},
                )
            elif text is not None and text != have[1]:
                raise ImportFileError(
                    f"line {r.line}: the completion of {system!r} on context "
                    f"{r.context_id!r} differs from the one stored"
                )
    Completion.objects.bulk_create(list(new.values()), batch_size=BATCH)
    report.completions_created = len(new)
    return {k: v[0] for k, v in known.items()} | {k: c.pk for k, c in new.items()}


def _pairs(study, records, ids, report) -> list[Pair]:
    """Orient every record canonically; the pair of each record, in record order."""
    contexts, systems, completions = ids
    pairs = {(p.completion_a_id, p.completion_b_id): p for p in Pair.objects.filter(study=study)}
    out = []
    for r in records:
        context = contexts[r.context_id]
        a, b = (completions[(context, systems[s])] for s in (r.system_a, r.system_b))
        if a > b:
            flip(r)
            report.flipped += 1
            a, b = b, a
        if (a, b) not in pairs:
            pairs[(a, b)] = Pair(
                study=study,
                context_id=context,
                completion_a_id=a,
                completion_b_id=b,
                quota=study.judgments_per_pair,
            )
        out.append(pairs[(a, b)])
    new = [p for p in pairs.values() if p.pk is None]
    Pair.objects.bulk_create(new, batch_size=BATCH)
    report.pairs_created = len(new)
    return out


def _raters(study: Study, records, report) -> dict[str, Rater]:
    """file judge id -> Rater for human judges; "excluded": true sets the override."""
    ids = {r.judge for r in records if r.judge_kind == JudgeKind.HUMAN}
    # A judge id that is already this study's pseudonym (our own export coming back) is that
    # rater; otherwise the id is the rater's private external id.
    mine = Rater.objects.filter(study=study)
    found = {r.pseudonym: r for r in mine.filter(pseudonym__in=ids)}
    found |= {r.external_id: r for r in mine.filter(external_id__in=ids - found.keys())}
    new = [
        Rater(
            study=study,
            external_id=i,
            source="import",
            pseudonym=import_pseudonym(study=study, external_id=i),
        )
        for i in sorted(ids - found.keys())
    ]
    Rater.objects.bulk_create(new, batch_size=BATCH)
    report.raters_created = len(new)
    raters = found | {r.external_id: r for r in new}
    excluded = {r.judge for r in records if r.judge_kind == JudgeKind.HUMAN and r.excluded}
    to_exclude = [raters[i] for i in excluded if raters[i].exclusion_override is not True]
    for rater in to_exclude:
        rater.exclusion_override = True
    Rater.objects.bulk_update(to_exclude, ["exclusion_override"], batch_size=BATCH)
    return raters


def _verdict(winner, strength, strength_max, axes, shown_left) -> tuple:
    return (winner, strength, strength_max, axes or {}, shown_left or "")


def _judgments(study, records, pairs, raters, report) -> None:
    stored = {
        _key(p, j, kind, v[-1]): _verdict(*v)
        for p, j, kind, *v in Judgment.objects.filter(study=study, pair__isnull=False)
        .values_list(
            "pair_id",
            "judge",
            "judge_kind",
            "winner",
            "strength",
            "strength_max",
            "axes",
            "shown_left",
        )
        .iterator(chunk_size=BATCH)
    }
    new: dict[tuple[int, str, str], tuple[JudgmentRecord, Judgment]] = {}
    for r, pair in zip(records, pairs, strict=True):
        rater = raters.get(r.judge) if r.judge_kind == JudgeKind.HUMAN else None
        judge = rater.pseudonym if rater else r.judge
        verdict = _verdict(r.winner, r.strength, r.strength_max, r.axes, r.shown_left)
        key = _key(pair.pk, judge, r.judge_kind, r.shown_left)
        before = stored.get(key) or (_record_verdict(new[key][0]) if key in new else None)
        if before is not None:
            if before != verdict:
                raise ImportFileError(
                    f"line {r.line}: judge {r.judge!r} already judged this "
                    "pair with a different verdict"
                )
            report.already_present += key in stored
            report.duplicate_lines += key not in stored
            continue
        new[key] = (r, _judgment(study, r, pair, rater, judge))
    Judgment.objects.bulk_create([j for _, j in new.values()], batch_size=BATCH)
    report.created = len(new)
    human = Counter(j.pair_id for r, j in new.values() if r.judge_kind == JudgeKind.HUMAN)
    report.quotas_raised = _count_human(human)


def _key(pair_id: int, judge: str, kind: str, shown_left: str | None) -> tuple[int, str, str]:
    """A human judges a pair once; an LLM judge once per order shown (position swap)."""
    return (pair_id, judge, (shown_left or "") if kind == JudgeKind.LLM else "")


def _record_verdict(r: JudgmentRecord) -> tuple:
    return _verdict(r.winner, r.strength, r.strength_max, r.axes, r.shown_left)


def _judgment(study, r: JudgmentRecord, pair: Pair, rater: Rater | None, judge: str) -> Judgment:
    # Ids, not instances: the related-object descriptors cost more than the insert itself.
    return Judgment(
        study_id=study.pk,
        pair_id=pair.pk,
        judge_kind=r.judge_kind,
        rater_id=rater.pk if rater else None,
        judge=judge,
        judge_family=r.judge_family,
        winner=r.winner,
        strength=r.strength,
        strength_max=r.strength_max,
        axes=r.axes,
        rationale=r.rationale,
        shown_left=r.shown_left,
        duration_ms=r.duration_ms,
        submitted_at=r.submitted_at,
        source="import",
        metadata=r.metadata,
    )


def _count_human(added: Counter[int]) -> int:
    """Add new human judgments to Pair.n_judgments, raising a quota the import would pass.

    One UPDATE per distinct increment, with F() expressions so that judgments the platform
    stores meanwhile are not lost. Returns how many quotas were raised.
    """
    by_increment: dict[int, list[int]] = {}
    for pk, n in added.items():
        by_increment.setdefault(n, []).append(pk)
    raised = 0
    for n, pks in by_increment.items():
        for start in range(0, len(pks), BATCH):
            chunk = Pair.objects.filter(pk__in=pks[start : start + BATCH])
            raised += chunk.filter(quota__lt=F("n_judgments") + n).count()
            chunk.update(
                n_judgments=F("n_judgments") + n, quota=Greatest(F("quota"), F("n_judgments") + n)
            )
    return raised
