"""Judgments in and out as JSON Lines: judgments made elsewhere join a study as if made here.

Import (`judgments_import`): the file is read from disk, validated ("line N: reason") and written
CHUNK lines at a time, all in one transaction; any error, on any line, leaves the database as it
was. On PostgreSQL, completions and judgments are written by binary COPY (core.bulk), and the
pairs the import makes take their keys from the sequence when found and are written once at the
end, with their counts (every foreign key is checked at commit). Memory grows with the study's
contexts, completions and pairs, not with the file's length.

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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
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
from core.bulk import copy_insert, copy_rows, new_ids, statistics_refresh

from .judgment_export import judgments_export  # noqa: F401 (one import point)
from .judgment_sources import JudgmentRecord, iter_judgments, read_source
from .models import JudgeKind, Judgment, Pair, Rater

# Each side or verdict to its mirror (keys and values: the formats' literals, None and "").
FLIP: dict[Any, Any] = {"a": "b", "b": "a", "tie": "tie", None: None, "": ""}
BATCH = 2000
# A verdict as stored, to tell a repeated line from a conflicting one:
# (winner, strength, strength_max, axes, shown_left).
StoredVerdict = tuple[str, int | None, int | None, dict[str, Any], str]
# A judgment to insert, in INSERT_COLUMNS order.
JudgmentRow = tuple[
    int,  # study_id
    int,  # pair_id
    str | None,  # judge_kind
    int | None,  # rater_id
    str,  # judge
    str | None,  # judge_family
    str,  # winner
    int | None,  # strength
    int | None,  # strength_max
    dict[str, Any],  # axes
    str | None,  # rationale
    str,  # shown_left
    int | None,  # duration_ms
    datetime | None,  # submitted_at
    str,  # source
    dict[str, Any] | None,  # metadata
]


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
    pairs: dict[tuple[int, int], int]  # (completion_a id, completion_b id) -> pair id
    pair_of: dict[tuple[str, str, str], tuple[int, bool]]
    stored: dict[tuple[int, str, str], StoredVerdict]
    new: dict[tuple[int, str, str], StoredVerdict]
    human: Counter[int]
    # PostgreSQL: the pairs this import makes, written at its end with their counts (their
    # keys are taken from the sequence when they are found; every foreign key is deferred).
    later: list[tuple[int, int, int, int]] = field(default_factory=list)  # id, context, a, b


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
    report.quotas_raised = _pairs_write_later(study, known) + _count_human(known.human)
    statistics_refresh([Judgment, Pair, Completion], report.created)
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
        pairs={
            (a, b): pk
            for a, b, pk in Pair.objects.filter(study=study)
            .values_list("completion_a_id", "completion_b_id", "id")
            .iterator(chunk_size=BATCH)
        },
        pair_of={},
        stored=_stored_verdicts(study),
        new={},
        human=Counter(),
    )


def _import_chunk(
    study: Study, records: Sequence[JudgmentRecord], known: _Known, report: JudgmentImportReport
) -> None:
    report.read += len(records)
    raters = _raters(study, records, report)
    real = [r for r in records if not r.quality_check]
    report.quality_checks_skipped += len(records) - len(real)
    report.tie_strength_dropped += sum("dropped_tie_strength" in (r.metadata or {}) for r in real)
    report.time_unknown += sum(r.submitted_at is None for r in real)
    _contexts(study, real, known.contexts, report)
    _systems(study, real, known.systems, report)
    _completions(real, known, report)
    pairs = _pairs(study, real, known, report)
    _judgments(study, real, pairs, raters, known, report)


def _contexts(
    study: Study,
    records: Sequence[JudgmentRecord],
    known: dict[str, int],
    report: JudgmentImportReport,
) -> None:
    wanted = {r.context_id for r in records}
    new = [
        DialogueContext(study=study, external_id=c, turns=[], source="import")
        for c in sorted(wanted - known.keys())
    ]
    DialogueContext.objects.bulk_create(new, batch_size=BATCH)
    report.contexts_created += len(new)
    known.update({c.external_id: c.pk for c in new})


def _systems(
    study: Study,
    records: Sequence[JudgmentRecord],
    known: dict[str, int],
    report: JudgmentImportReport,
) -> None:
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


def _completions(
    records: Sequence[JudgmentRecord], state: _Known, report: JudgmentImportReport
) -> None:
    """Keep (context id, system id) -> (completion id, text) up to date from the file's texts.

    A completion the file gives no text for becomes a placeholder marked text-unknown (never
    served to raters); a placeholder gets its text from the first line that has it, and a
    second, different text for it (anywhere in the file) is an error.
    """
    known, contexts, systems = state.completions, state.contexts, state.systems
    new: dict[tuple[int, int], str | None] = {}  # (context id, system id) -> text (None: unknown)
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
            new[key] = text
            continue
        pk, have = known[key] if key in known else (None, new[key] or None)
        if text is None or text == have:
            continue
        if have is not None:
            raise ImportFileError(
                f"line {r.line}: the completion of {system!r} on context "
                f"{context_id!r} differs from the one stored"
            )
        if pk is None:
            new[key] = text
        else:
            filled[pk] = Completion(pk=pk, text=text, text_unknown=False)
            known[key] = (pk, text)
    ids = copy_insert(
        Completion,
        COMPLETION_COLUMNS,
        [(c, s, text or "", text is None, IMPORTED) for (c, s), text in new.items()],
    )
    Completion.objects.bulk_update(list(filled.values()), ["text", "text_unknown"])
    report.completions_created += len(new)
    report.completions_text_unknown += sum(text is None for text in new.values())
    report.completions_filled_in += len(filled)
    known.update({key: (pk, text) for pk, (key, text) in zip(ids, new.items(), strict=True)})


def _pairs(
    study: Study, records: Sequence[JudgmentRecord], state: _Known, report: JudgmentImportReport
) -> list[int]:
    """Orient every record canonically; the pair id of each record, in record order."""
    contexts, systems, completions = state.contexts, state.systems, state.completions
    pairs, seen = state.pairs, state.pair_of
    # (context, system_a, system_b) as the file says -> (pair, whether to flip): files repeat a
    # pair for each judge, so the ids are looked up once per pair, not once per line.
    # New pairs are numbered by their place in `new` (as -1 - index) until they are written.
    new: list[tuple[int, int, int, int, int]] = []
    found: list[tuple[str, str, str]] = []
    for r in records:
        key = (r.context_id, r.system_a, r.system_b)
        if key not in seen:
            context = contexts[r.context_id]
            a, b = (completions[(context, systems[s])][0] for s in (r.system_a, r.system_b))
            ab = (min(a, b), max(a, b))
            if ab not in pairs:
                pairs[ab] = -1 - len(new)
                new.append((study.pk, context, ab[0], ab[1], study.judgments_per_pair))
            seen[key] = (pairs[ab], a > b)
            found.append(key)
    if connection.vendor == "postgresql":
        ids = new_ids(Pair, len(new))
        state.later.extend((pk, c, a, b) for pk, (_, c, a, b, _) in zip(ids, new, strict=True))
    else:
        ids = copy_insert(Pair, PAIR_COLUMNS, new)
    for key in found:
        pk, turn = seen[key]
        if pk < 0:
            seen[key] = (ids[-1 - pk], turn)
    for pk, (_, _, a, b, _) in zip(ids, new, strict=True):
        pairs[(a, b)] = pk
    out = []
    for r in records:
        pk, turn = seen[(r.context_id, r.system_a, r.system_b)]
        if turn:
            flip(r)
            report.flipped += 1
        out.append(pk)
    report.pairs_created += len(new)
    return out


def _raters(
    study: Study, records: Sequence[JudgmentRecord], report: JudgmentImportReport
) -> dict[str, Rater]:
    """file judge id -> Rater for human judges; "excluded": true sets the override, "cohort"
    a new rater's cohort (an existing rater keeps theirs)."""
    ids = {r.judge for r in records if _is_human(r)}
    cohorts = {r.judge: r.cohort for r in records if _is_human(r) and r.cohort}
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
    excluded = {r.judge for r in records if _is_human(r) and r.excluded}
    to_exclude = [raters[i] for i in excluded if raters[i].exclusion_override is not True]
    for rater in to_exclude:
        rater.exclusion_override = True
    Rater.objects.bulk_update(to_exclude, ["exclusion_override"], batch_size=BATCH)
    return raters


def _is_human(r: JudgmentRecord) -> bool:
    return r.judge_kind == JudgeKind.HUMAN.value


def _verdict(
    winner: str,
    strength: int | None,
    strength_max: int | None,
    axes: dict[str, Any] | None,
    shown_left: str | None,
) -> StoredVerdict:
    return (winner, strength, strength_max, axes or {}, shown_left or "")


def _stored_verdicts(study: Study) -> dict[tuple[int, str, str], StoredVerdict]:
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


def _judgments(
    study: Study,
    records: Sequence[JudgmentRecord],
    pairs: Sequence[int],
    raters: dict[str, Rater],
    state: _Known,
    report: JudgmentImportReport,
) -> None:
    stored, new, human = state.stored, state.new, state.human

    def rows() -> Iterator[JudgmentRow]:
        # Made while COPY streams them: the client checks a line while the server stores the
        # ones before it (an error stops the COPY and the transaction keeps nothing).
        for r, pair in zip(records, pairs, strict=True):
            rater = raters.get(r.judge) if _is_human(r) else None
            judge = rater.pseudonym if rater else r.judge
            key = _key(pair, judge, r.judge_kind, r.shown_left)
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
            if _is_human(r):
                human[pair] += 1
            yield _judgment_row(study, r, pair, rater, judge)

    judgments_insert(rows())


def _key(
    pair_id: int, judge: str, kind: str | None, shown_left: str | None
) -> tuple[int, str, str]:
    """A human judges a pair once; an LLM judge once per order shown (position swap)."""
    return (pair_id, judge, (shown_left or "") if kind == JudgeKind.LLM else "")


def _record_verdict(r: JudgmentRecord) -> StoredVerdict:
    return _verdict(r.winner, r.strength, r.strength_max, axes_json(r), r.shown_left)


# The columns a completion made by an import fills, and its provenance.
COMPLETION_COLUMNS = ["context_id", "system_id", "text", "text_unknown", "provenance"]
IMPORTED = {"source": "judgments import"}
# The columns a pair made by an import fills (the token and the rest: model defaults).
PAIR_COLUMNS = ["study_id", "context_id", "completion_a_id", "completion_b_id", "quota"]
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


def _judgment_row(
    study: Study, r: JudgmentRecord, pair: int, rater: Rater | None, judge: str
) -> JudgmentRow:
    return (
        study.pk,
        pair,
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


def judgments_insert(rows: Iterable[JudgmentRow]) -> None:
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


def _pairs_write_later(study: Study, known: _Known) -> int:
    """Write the pairs this import made (PostgreSQL), each with its human judgments counted and
    its quota raised to fit them; take them out of `known.human`. Returns the quotas raised."""
    if not known.later:
        return 0
    quota, human = study.judgments_per_pair, known.human
    counts = [human.pop(pk, 0) for pk, *_ in known.later]
    copy_rows(
        Pair,
        [
            "id",
            "study_id",
            "context_id",
            "completion_a_id",
            "completion_b_id",
            "n_judgments",
            "quota",
        ],
        (
            (pk, study.pk, c, a, b, n, max(quota, n))
            for (pk, c, a, b), n in zip(known.later, counts, strict=True)
        ),
    )
    return sum(n > quota for n in counts)


def _count_human(added: Counter[int]) -> int:
    """Add new human judgments to Pair.n_judgments, raising a quota the import would pass.

    Relative updates (n_judgments + n), so that judgments the platform stores meanwhile are not
    lost: on PostgreSQL one UPDATE for every pair (the counts sent as two arrays), elsewhere one
    per distinct increment. Returns how many quotas were raised.
    """
    if not added:
        return 0
    if connection.vendor == "postgresql":
        table = Pair._meta.db_table
        with connection.cursor() as cursor:
            # The subquery reads each pair as it was before the update: whether its quota rises.
            cursor.execute(
                f"UPDATE {table} AS p SET n_judgments = p.n_judgments + v.n, "
                "quota = GREATEST(p.quota, p.n_judgments + v.n) "
                "FROM (SELECT u.id, u.n, q.quota < q.n_judgments + u.n AS raised "
                f"FROM unnest(%s::bigint[], %s::int[]) AS u(id, n) JOIN {table} AS q "
                "ON q.id = u.id) AS v WHERE p.id = v.id RETURNING v.raised",
                [list(added), list(added.values())],
            )
            return sum(raised for (raised,) in cursor.fetchall())
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
