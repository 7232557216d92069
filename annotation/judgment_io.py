"""Judgments in and out as JSON Lines: judgments made elsewhere join a study as if made here.

Import (`judgments_import`): the file is read from disk, validated ("line N: reason") and written
CHUNK lines at a time with bulk inserts, all in one transaction; any error, on any line, leaves
the database as it was. Memory grows with the study's contexts, completions and pairs, not with
the file's length.

- The format (annotation.formats) requires only context_id, system_a, system_b, judge and winner;
  the defaults for the rest are documented there. Files of other tools (Chatbot Arena, MT-Bench,
  plain CSV) are read by annotation.judgment_sources into the same records.
- Contexts, systems and completions are created as needed: a context made here has no turns
  (turns=[]; a later contexts import fills it in), a new system is a "model" (the file does not say
  its kind; "original-dataset" is a "dataset"), a completion comes from completion_a/_b text; with
  no text it is a placeholder marked text_unknown (never served to raters) that a later file with
  the text, or a completions import, fills in. A completion stored with another text is an error.
- A missing submitted_at is stored as null (unknown), never invented.
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
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Greatest

from completions.importers import (
    ImportFileError,
    no_cyclic_gc,
)
from completions.models import Completion, DialogueContext, Study, System, SystemKind

from .judgment_export import judgments_export  # noqa: F401 (one import point)
from .judgment_sources import JudgmentRecord, iter_judgments, read_source
from .models import JudgeKind, Judgment, Pair, Rater

# Each side or verdict to its mirror (keys and values: the formats' literals, None and "").
FLIP: dict[Any, Any] = {"a": "b", "b": "a", "tie": "tie", None: None, "": ""}
BATCH = 2000


@dataclass
class JudgmentImportReport:
    read: int = 0
    created: int = 0
    already_present: int = 0
    duplicate_lines: int = 0
    quality_checks_skipped: int = 0
    tie_strength_dropped: int = 0
    time_unknown: int = 0
    source_rows_skipped: int = 0
    contexts_created: int = 0
    systems_created: int = 0
    completions_created: int = 0
    completions_text_unknown: int = 0
    completions_filled_in: int = 0
    pairs_created: int = 0
    raters_created: int = 0
    quotas_raised: int = 0
    flipped: int = 0

    def lines(self) -> list[str]:
        always = {"read", "created", "already_present"}
        return [f"{k.replace('_', ' ')}: {v}" for k, v in self.__dict__.items() if k in always or v]


def flip(record: JudgmentRecord) -> None:
    """Turn a record around so that its side a is the other completion."""
    record.system_a, record.system_b = record.system_b, record.system_a
    record.completion_a, record.completion_b = record.completion_b, record.completion_a
    record.winner, record.shown_left = FLIP[record.winner], FLIP[record.shown_left]
    axes = record.axes or {}  # null reads as {} (ContractModel._normalize)
    record.axes = {k: {**m, "winner": FLIP[m["winner"]]} for k, m in axes.items()}


def axes_json(record: JudgmentRecord) -> dict[str, Any]:
    return record.axes or {}


def import_pseudonym(*, study: Study, external_id: str) -> str:
    """Keyed HMAC of a judge id: stable, not reversible (as annotation.services does for panels)."""
    key = settings.PSEUDONYM_KEY.encode()
    digest = hmac.new(key, f"{study.pk}:{external_id}".encode(), hashlib.sha256).hexdigest()
    return "r-" + digest[:16]


# Writing --------------------------------------------------------------------------------------


def judgments_import(
    *, study: Study, path: str | Path, fmt: str = "jsonl", mapping: dict[str, str] | None = None
) -> JudgmentImportReport:
    """Import a judgments file into `study`; all or nothing, idempotent.

    `fmt` is "jsonl" (the contract) or another tool's file: "arena", "mtbench", "csv" (with
    `mapping` from contract field to CSV column); see annotation.judgment_sources. A JSON Lines
    file is read from disk as it is imported, CHUNK lines at a time, so its size does not
    decide the memory the import needs.
    """
    with no_cyclic_gc():
        if fmt == "jsonl":
            return judgments_import_records(study=study, records=iter_judgments(path))
        records, skipped = read_source(path, fmt, mapping=mapping)
        report = judgments_import_records(study=study, records=records)
        report.source_rows_skipped = skipped
        return report


# Lines imported at a time: the ids the import looks up (contexts, systems, completions, pairs,
# judgments already stored) stay for the whole file; the records themselves only per chunk.
CHUNK = 10_000


@dataclass
class _Known:
    """What the study already holds, loaded once per import and kept up to date chunk by chunk."""

    contexts: dict[str, int]
    systems: dict[str, int]
    completions: dict[tuple[int, int], tuple[int, str | None]]
    pairs: dict[tuple[int, int], Pair]
    pair_of: dict[tuple[str, str, str], tuple[Pair, bool]]
    stored: dict[tuple[int, str, str], tuple]
    new: dict[tuple[int, str, str], tuple]
    human: Counter[int]


@transaction.atomic
def judgments_import_records(
    *, study: Study, records: Iterable[JudgmentRecord]
) -> JudgmentImportReport:
    """Import validated records (a list or a stream); any error keeps nothing (one transaction)."""
    report = JudgmentImportReport()
    known = _known(study)
    for chunk in itertools.batched(records, CHUNK):
        _import_chunk(study, list(chunk), known, report)
    report.created = len(known.new)
    report.quotas_raised = _count_human(known.human)
    return report


def _known(study: Study) -> _Known:
    rows = Completion.objects.filter(context__study=study).values_list(
        "context_id", "system_id", "id", "text", "text_unknown"
    )
    return _Known(
        contexts=dict(DialogueContext.objects.filter(study=study).values_list("external_id", "id")),
        systems=dict(System.objects.filter(study=study).values_list("name", "id")),
        completions={
            (c, s): (pk, None if u else t) for c, s, pk, t, u in rows.iterator(chunk_size=BATCH)
        },
        pairs={(p.completion_a_id, p.completion_b_id): p for p in Pair.objects.filter(study=study)},
        pair_of={},
        stored=_stored_verdicts(study),
        new={},
        human=Counter(),
    )


def _import_chunk(study: Study, records: list, known: _Known, report) -> None:
    report.read += len(records)
    raters = _raters(study, records, report)
    real = [r for r in records if not r.quality_check]
    report.quality_checks_skipped += len(records) - len(real)
    report.tie_strength_dropped += sum("dropped_tie_strength" in r.metadata for r in real)
    report.time_unknown += sum(r.submitted_at is None for r in real)
    _contexts(study, real, known.contexts, report)
    _systems(study, real, known.systems, report)
    _completions(real, known, report)
    pairs = _pairs(study, real, known, report)
    _judgments(study, real, pairs, raters, known, report)


def _contexts(study: Study, records, known: dict[str, int], report) -> None:
    wanted = {r.context_id for r in records}
    new = [
        DialogueContext(study=study, external_id=c, turns=[], source="import")
        for c in sorted(wanted - known.keys())
    ]
    DialogueContext.objects.bulk_create(new, batch_size=BATCH)
    report.contexts_created += len(new)
    known.update({c.external_id: c.pk for c in new})


def _systems(study: Study, records, known: dict[str, int], report) -> None:
    names = {r.system_a for r in records} | {r.system_b for r in records}
    new = [
        System(
            study=study, name=n, kind=_kind(n), family=_kind(n) if n == "original-dataset" else ""
        )
        for n in sorted(names - known.keys())
    ]
    System.objects.bulk_create(new)
    report.systems_created += len(new)
    known.update({s.name: s.pk for s in new})


def _kind(name: str) -> str:
    return SystemKind.DATASET if name == "original-dataset" else SystemKind.MODEL


def _completions(records, state: _Known, report) -> None:
    """Keep (context id, system id) -> (completion id, text) up to date from the file's texts.

    A completion the file gives no text for becomes a placeholder marked text-unknown (never
    served to raters); a placeholder gets its text from the first line that has it, and a
    second, different text for it (anywhere in the file) is an error.
    """
    known, contexts, systems = state.completions, state.contexts, state.systems
    new: dict[tuple[int, int], Completion] = {}
    filled: dict[int, Completion] = {}
    # Each (context, system, text) once, at its first line: files repeat them for every judge,
    # and a repeat changes nothing.
    firsts: dict[tuple[str, str, str | None], JudgmentRecord] = {}
    for r in records:
        firsts.setdefault((r.context_id, r.system_a, r.completion_a), r)
        firsts.setdefault((r.context_id, r.system_b, r.completion_b), r)
    for (context_id, system, text), r in firsts.items():
        key = (contexts[context_id], systems[system])
        if key not in known and key not in new:
            new[key] = _completion(key, text)
            continue
        pk, have = known[key] if key in known else (None, new[key].text or None)
        if text is None or text == have:
            continue
        if have is not None:
            raise ImportFileError(
                f"line {r.line}: the completion of {system!r} on context "
                f"{context_id!r} differs from the one stored"
            )
        if pk is None:
            new[key].text, new[key].text_unknown = text, False
        else:
            filled[pk] = Completion(pk=pk, text=text, text_unknown=False)
            known[key] = (pk, text)
    Completion.objects.bulk_create(list(new.values()), batch_size=BATCH)
    Completion.objects.bulk_update(list(filled.values()), ["text", "text_unknown"])
    report.completions_created += len(new)
    report.completions_text_unknown += sum(c.text_unknown for c in new.values())
    report.completions_filled_in += len(filled)
    known.update({k: (c.pk, None if c.text_unknown else c.text) for k, c in new.items()})


def _completion(key: tuple[int, int], text: str | None) -> Completion:
    return Completion(
        context_id=key[0],
        system_id=key[1],
        text=text or "",
        text_unknown=text is None,
        provenance={"source": "judgments import"},
    )


def _pairs(study, records, state: _Known, report) -> list[Pair]:
    """Orient every record canonically; the pair of each record, in record order."""
    contexts, systems, completions = state.contexts, state.systems, state.completions
    pairs, seen = state.pairs, state.pair_of
    # (context, system_a, system_b) as the file says -> (pair, whether to flip): files repeat a
    # pair for each judge, so the ids are looked up once per pair, not once per line.
    out = []
    for r in records:
        key = (r.context_id, r.system_a, r.system_b)
        if key not in seen:
            context = contexts[r.context_id]
            a, b = (completions[(context, systems[s])][0] for s in (r.system_a, r.system_b))
            ab = (min(a, b), max(a, b))
            if ab not in pairs:
                pairs[ab] = Pair(
                    study=study,
                    context_id=context,
                    completion_a_id=ab[0],
                    completion_b_id=ab[1],
                    quota=study.judgments_per_pair,
                )
            seen[key] = (pairs[ab], a > b)
        pair, turn = seen[key]
        if turn:
            flip(r)
            report.flipped += 1
        out.append(pair)
    new = [p for p in pairs.values() if p.pk is None]
    Pair.objects.bulk_create(new, batch_size=BATCH)
    report.pairs_created += len(new)
    return out


def _raters(study: Study, records, report) -> dict[str, Rater]:
    """file judge id -> Rater for human judges; "excluded": true sets the override, "cohort"
    a new rater's cohort (an existing rater keeps theirs)."""
    ids = {r.judge for r in records if r.judge_kind == JudgeKind.HUMAN}
    cohorts = {r.judge: r.cohort for r in records if r.judge_kind == JudgeKind.HUMAN and r.cohort}
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
            cohort=cohorts.get(i, "crowd"),
        )
        for i in sorted(ids - found.keys())
    ]
    Rater.objects.bulk_create(new, batch_size=BATCH)
    report.raters_created += len(new)
    raters = found | {r.external_id: r for r in new}
    excluded = {r.judge for r in records if r.judge_kind == JudgeKind.HUMAN and r.excluded}
    to_exclude = [raters[i] for i in excluded if raters[i].exclusion_override is not True]
    for rater in to_exclude:
        rater.exclusion_override = True
    Rater.objects.bulk_update(to_exclude, ["exclusion_override"], batch_size=BATCH)
    return raters


def _verdict(winner, strength, strength_max, axes, shown_left) -> tuple:
    return (winner, strength, strength_max, axes or {}, shown_left or "")


def _stored_verdicts(study: Study) -> dict[tuple[int, str, str], tuple]:
    return {
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


def _judgments(study, records, pairs, raters, state: _Known, report) -> None:
    stored, new, human = state.stored, state.new, state.human

    def rows() -> Iterator[tuple]:
        # Made while COPY streams them: the client checks a line while the server stores the
        # ones before it (an error stops the COPY and the transaction keeps nothing).
        for r, pair in zip(records, pairs, strict=True):
            rater = raters.get(r.judge) if r.judge_kind == JudgeKind.HUMAN else None
            judge = rater.pseudonym if rater else r.judge
            key = _key(pair.pk, judge, r.judge_kind, r.shown_left)
            if key in stored or key in new:
                before = stored[key] if key in stored else new[key]
                if before != _record_verdict(r):
                    raise ImportFileError(
                        f"line {r.line}: judge {r.judge!r} already judged this "
                        "pair with a different verdict"
                    )
                report.already_present += key in stored
                report.duplicate_lines += key not in stored
                continue
            new[key] = _record_verdict(r)  # the verdict only: the record goes with its chunk
            if r.judge_kind == JudgeKind.HUMAN:
                human[pair.pk] += 1
            yield _judgment_row(study, r, pair, rater, judge)

    judgments_insert(rows())


def _key(pair_id: int, judge: str, kind: str, shown_left: str | None) -> tuple[int, str, str]:
    """A human judges a pair once; an LLM judge once per order shown (position swap)."""
    return (pair_id, judge, (shown_left or "") if kind == JudgeKind.LLM else "")


def _record_verdict(r: JudgmentRecord) -> tuple:
    return _verdict(r.winner, r.strength, r.strength_max, axes_json(r), r.shown_left)


# The columns an imported judgment fills; the others take their model defaults.
INSERT_COLUMNS = [
    "study_id",
    "pair_id",
    "judge_kind",
    "rater_id",
    "judge",
    "judge_family",
    "winner",
    "strength",
    "strength_max",
    "axes",
    "rationale",
    "shown_left",
    "duration_ms",
    "submitted_at",
    "source",
    "metadata",
]


def _judgment_row(study, r: JudgmentRecord, pair: Pair, rater: Rater | None, judge: str) -> tuple:
    return (
        study.pk,
        pair.pk,
        r.judge_kind,
        rater.pk if rater else None,
        judge,
        r.judge_family,
        r.winner,
        r.strength,
        r.strength_max,
        axes_json(r),
        r.rationale,
        r.shown_left or "",
        r.duration_ms,
        r.submitted_at,
        "import",
        r.metadata,
    )


def judgments_insert(rows: Iterable[tuple]) -> None:
    """Insert judgment rows (INSERT_COLUMNS order): PostgreSQL binary COPY, else bulk_create.

    COPY streams the rows in one statement (about ten times the ORM's bulk INSERT here); binary
    COPY sends numbers and times without formatting them as text, and the JSON columns are
    serialized by pydantic-core's encoder (set once for psycopg in AnnotationConfig.ready). The
    constraints are checked all the same, inside the import's transaction.
    """
    if connection.vendor != "postgresql":
        objects = [Judgment(**dict(zip(INSERT_COLUMNS, row, strict=True))) for row in rows]
        Judgment.objects.bulk_create(objects, batch_size=BATCH)
        return
    defaults = _column_defaults()
    columns = [*INSERT_COLUMNS, *defaults]
    extra = tuple(defaults.values())
    table = Judgment._meta.db_table
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = %s::regclass", [table]
        )
        types = dict(cursor.fetchall())
        with cursor.cursor.copy(sql) as copy:
            copy.set_types([types[c] for c in columns])
            for row in rows:
                copy.write_row(row + extra)


def _column_defaults() -> dict[str, object]:
    """Every other non-key column of Judgment with its default (COPY names each column)."""
    return {
        str(field.column): field.get_default()
        for field in Judgment._meta.concrete_fields
        if not field.primary_key and field.attname not in INSERT_COLUMNS
    }


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
