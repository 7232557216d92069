"""Writes for the study material: studies, the ESConv screening import, JSONL imports.

Every import parses and validates its whole input first (completions.esconv / .importers), then
writes in one transaction with bulk inserts. Re-running an import changes nothing: contexts are
keyed by (study, external id), completions by (context, system).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from completions import esconv
from completions.importers import CompletionRecord, ContextRecord, ImportFileError, read_completions
from completions.importers import read_contexts as read_context_records
from completions.models import Completion, DialogueContext, Study, System, SystemKind

DATASET_SYSTEM = "original-dataset"
BATCH = 1000


class StudyNotFound(LookupError):
    pass


@dataclass
class ImportReport:
    """What an import did; `dropped` counts per reason (ESConv screening)."""

    noun: str = "contexts"
    unit: str = "lines"
    read: int = 0
    kept: int = 0
    created: int = 0
    already_present: int = 0
    updated: int = 0
    completions_created: int = 0
    completions_present: int = 0
    systems_created: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        labels = {
            "read": f"{self.unit} read",
            "kept": "dialogues kept",
            "created": f"{self.noun} created",
            "already_present": f"{self.noun} already present",
            "updated": f"{self.noun} filled in (were placeholders)",
            "completions_created": "dataset completions created",
            "completions_present": "dataset completions already present",
            "systems_created": "systems created",
        }
        always = {"read", "created", "already_present"}
        out = [
            f"{label}: {getattr(self, k)}"
            for k, label in labels.items()
            if k in always or getattr(self, k)
        ]
        out += [f"dropped ({reason}): {n}" for reason, n in sorted(self.dropped.items())]
        return out


def study_resolve(*, slug: str, create: bool = False, name: str = "") -> Study:
    """The study with this slug; created when `create` is set, else StudyNotFound."""
    if create:
        study, _ = Study.objects.get_or_create(slug=slug, defaults={"name": name or slug})
        return study
    try:
        return Study.objects.get(slug=slug)
    except Study.DoesNotExist:
        raise StudyNotFound(f"no study with slug {slug!r} (pass --create to create it)") from None


def system_get_or_create(*, study: Study, name: str, kind: str, family: str = "") -> System:
    """A study's system by name; an existing system with another kind is an error."""
    system, created = System.objects.get_or_create(
        study=study, name=name, defaults={"kind": kind, "family": family}
    )
    if not created and system.kind != kind:
        raise ImportFileError(f"system {name!r} exists with kind {system.kind!r}, not {kind!r}")
    return system


def _existing_contexts(study: Study, ids: Iterable[str]) -> dict[str, DialogueContext]:
    found: dict[str, DialogueContext] = {}
    ids = list(ids)
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        found.update(
            (c.external_id, c)
            for c in DialogueContext.objects.filter(study=study, external_id__in=chunk)
        )
    return found


# ESConv ---------------------------------------------------------------------------------------


@transaction.atomic
def esconv_import(
    *,
    study: Study,
    path: str | Path | None = None,
    raw_dialogues: list[Any] | None = None,
    limit: int | None = None,
) -> ImportReport:
    """Screen an ESConv file (or already-loaded list) and create its contexts and dataset replies.

    Raises esconv.EsconvFormatError for a malformed file or conversation, before any write.
    """
    if raw_dialogues is not None:
        raw = raw_dialogues
    elif path is not None:
        raw = esconv.load_esconv(path)
    else:
        raise ValueError("esconv_import needs a path or raw_dialogues")
    screened = esconv.screen_corpus(raw, limit=limit)
    report = ImportReport(
        unit="dialogues",
        read=screened.dialogues_read,
        kept=screened.dialogues_kept,
        dropped=screened.dropped,
    )
    system = system_get_or_create(
        study=study, name=DATASET_SYSTEM, kind=SystemKind.DATASET, family="dataset"
    )
    existing = _existing_contexts(study, (c.external_id for c in screened.contexts))
    new = [_esconv_context(study, c) for c in screened.contexts if c.external_id not in existing]
    DialogueContext.objects.bulk_create(new, batch_size=BATCH)
    report.created, report.already_present = len(new), len(existing)
    by_id = {**existing, **{c.external_id: c for c in new}}
    have = set(
        Completion.objects.filter(system=system, context__study=study).values_list(
            "context_id", flat=True
        )
    )
    replies = [
        _esconv_reply(by_id[c.external_id], system, c)
        for c in screened.contexts
        if by_id[c.external_id].pk not in have
    ]
    Completion.objects.bulk_create(replies, batch_size=BATCH)
    report.completions_created = len(replies)
    report.completions_present = len(screened.contexts) - len(replies)
    return report


def _esconv_context(study: Study, c: esconv.ScreenedContext) -> DialogueContext:
    return DialogueContext(
        study=study,
        external_id=c.external_id,
        turns=c.turns,
        emotion_type=c.emotion_type[:100],
        problem_type=c.problem_type[:200],
        source=esconv.SOURCE,
        source_id=c.dialog_id,
        metadata=c.metadata,
    )


def _esconv_reply(
    context: DialogueContext, system: System, c: esconv.ScreenedContext
) -> Completion:
    return Completion(
        context=context,
        system=system,
        text=c.reply,
        metadata={"strategies": c.reply_strategies},
        provenance={
            "source": esconv.SOURCE,
            "dialog_id": c.dialog_id,
            "turn_index": c.turn_index + 1,
        },
    )


# JSONL contexts -------------------------------------------------------------------------------


def contexts_import(*, study: Study, path: str | Path) -> ImportReport:
    """Import a contexts JSONL file (see importers.parse_context); all or nothing."""
    return contexts_import_records(study=study, records=read_context_records(path))


@transaction.atomic
def contexts_import_records(*, study: Study, records: list[ContextRecord]) -> ImportReport:
    report = ImportReport(read=len(records))
    existing = _existing_contexts(study, (r.external_id for r in records))
    new, filled = [], []
    for r in records:
        context = existing.get(r.external_id)
        if context is None:
            new.append(_context_from_record(study, r))
        elif not context.turns:
            # A placeholder made by a judgments import (no turns known then): fill it in.
            filled.append(_fill(context, r))
        elif context.turns != r.db_fields()["turns"]:
            raise ImportFileError(
                f"line {r.line}: context {r.external_id!r} already exists with different turns"
            )
    DialogueContext.objects.bulk_create(new, batch_size=BATCH)
    DialogueContext.objects.bulk_update(filled, FILL_FIELDS, batch_size=BATCH)
    report.created, report.updated = len(new), len(filled)
    report.already_present = len(records) - len(new) - len(filled)
    return report


FILL_FIELDS = [
    "turns",
    "emotion_type",
    "problem_type",
    "adversarial",
    "escalation_profile",
    "source",
    "source_id",
    "metadata",
]


def _context_from_record(study: Study, r: ContextRecord) -> DialogueContext:
    return _fill(DialogueContext(study=study, external_id=r.external_id), r)


def _fill(context: DialogueContext, r: ContextRecord) -> DialogueContext:
    for name, value in r.db_fields().items():
        setattr(context, name, value)
    return context


# JSONL completions ----------------------------------------------------------------------------


def completions_import(*, study: Study, path: str | Path) -> ImportReport:
    """Import a completions JSONL file; systems are created as needed. All or nothing."""
    return completions_import_records(study=study, records=read_completions(path))


@transaction.atomic
def completions_import_records(*, study: Study, records: list[CompletionRecord]) -> ImportReport:
    report = ImportReport(noun="completions", read=len(records))
    contexts = _existing_contexts(study, {r.context_id for r in records})
    systems = _systems_for(study, records, report)
    have = _completion_texts(study)
    new, filled = [], []
    for r in records:
        context = contexts.get(r.context_id)
        if context is None:
            raise ImportFileError(
                f"line {r.line}: unknown context {r.context_id!r} (import the contexts first)"
            )
        key = (context.pk, systems[r.system].pk)
        if key in have and have[key][1]:
            # A placeholder from a judgments import (text unknown then): fill it in.
            filled.append(_completion_fill(have[key][0], r))
            continue
        if key in have:
            if have[key][2] != r.text:
                raise ImportFileError(
                    f"line {r.line}: {r.system} already has a different "
                    f"completion for context {r.context_id!r}"
                )
            continue
        new.append(
            Completion(
                context=context,
                system=systems[r.system],
                text=r.text,
                ttft_ms=r.ttft_ms,
                latency_ms=r.latency_ms,
                provenance=r.provenance,
                metadata=r.metadata,
            )
        )
    Completion.objects.bulk_create(new, batch_size=BATCH)
    Completion.objects.bulk_update(filled, COMPLETION_FILL_FIELDS, batch_size=BATCH)
    report.created, report.updated = len(new), len(filled)
    report.already_present = len(records) - len(new) - len(filled)
    _fill_system_ttft(systems.values())
    return report


COMPLETION_FILL_FIELDS = ["text", "text_unknown", "ttft_ms", "latency_ms", "provenance", "metadata"]


def _completion_fill(pk: int, r: CompletionRecord) -> Completion:
    return Completion(
        pk=pk,
        text=r.text,
        text_unknown=False,
        ttft_ms=r.ttft_ms,
        latency_ms=r.latency_ms,
        provenance=r.provenance,
        metadata=r.metadata,
    )


def _completion_texts(study: Study) -> dict[tuple[int, int], tuple[int, bool, str]]:
    """(context id, system id) -> (completion id, text unknown, text)."""
    rows = Completion.objects.filter(context__study=study).values_list(
        "context_id", "system_id", "id", "text_unknown", "text"
    )
    return {(c, s): (pk, u, t) for c, s, pk, u, t in rows.iterator(chunk_size=BATCH)}


def _systems_for(
    study: Study, records: list[CompletionRecord], report: ImportReport
) -> dict[str, System]:
    systems = {s.name: s for s in System.objects.filter(study=study)}
    for r in records:
        system = systems.get(r.system)
        if system is None:
            # A null kind or family in the file means the format's default (model, none).
            systems[r.system] = System.objects.create(
                study=study, name=r.system, kind=r.kind or SystemKind.MODEL, family=r.family or ""
            )
            report.systems_created += 1
        elif system.kind != r.kind:
            raise ImportFileError(
                f"line {r.line}: system {r.system!r} exists with kind "
                f"{system.kind!r}, not {r.kind!r}"
            )
    return systems


def _fill_system_ttft(systems: Iterable[System]) -> None:
    """A system without a time to first token gets the median of its completions' values."""
    for system in systems:
        if system.ttft_ms is not None:
            continue
        values = [
            v
            for v in system.completions.exclude(ttft_ms=None).values_list("ttft_ms", flat=True)
            if v is not None
        ]
        if values:
            system.ttft_ms = statistics.median(values)
            system.save(update_fields=["ttft_ms"])
