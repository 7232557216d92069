"""Reads for care: a study's settings and content notes (kept per process for a minute, as
they are read on the rater round trip), qualification progress and the admin's summaries."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.db.models import Count, Exists, Max, OuterRef, Q
from django.utils import timezone

from annotation.models import Rater
from completions.models import DialogueContext, Study
from writing.models import Writer

from .models import (
    CareSettings,
    ContentNote,
    QualificationAnswer,
    QualificationItem,
    RaterCare,
    Skip,
)

CACHE_TTL = 60.0
_settings_cache: dict[tuple[Any, ...], tuple[float, CareSettings]] = {}
_notes_cache: dict[tuple[Any, ...], tuple[float, dict[int, str]]] = {}


def _key(study: Study) -> tuple[Any, ...]:
    return (study.pk, study.created_at)  # a recreated study never reads an old entry


def care_settings(*, study: Study) -> CareSettings:
    """The study's care settings (defaults when it has none), kept a minute per process."""
    cached = _settings_cache.get(_key(study))
    if cached is not None and cached[0] > time.monotonic():
        return cached[1]
    found = CareSettings.objects.filter(study=study).first() or CareSettings(study=study)
    _settings_cache[_key(study)] = (time.monotonic() + CACHE_TTL, found)
    return found


def care_forget(*, study: Study) -> None:
    """Drop this process's copies after an admin changed settings or notes."""
    _settings_cache.pop(_key(study), None)
    _notes_cache.pop(_key(study), None)


def screening_note(context_meta: dict[str, Any], problem_type: str, emotion_type: str) -> str:
    """A note for a context whose screening found distress signals ("" when it found none)."""
    signals = (context_meta or {}).get("screening", {}).get("signals") or []
    if not signals:
        return ""
    topics = [t for t in (problem_type, emotion_type) if t]
    about = " and ".join(topics) if topics else "personal difficulties"
    return f"This conversation touches on {about}, and the person describes distress."


def content_notes(*, study: Study) -> dict[int, str]:
    """Context id -> content note: the admin's notes, else the screening's (if turned on)."""
    cached = _notes_cache.get(_key(study))
    if cached is not None and cached[0] > time.monotonic():
        return cached[1]
    notes: dict[int, str] = {}
    if care_settings(study=study).notes_from_screening:
        flagged = DialogueContext.objects.filter(
            study=study, metadata__screening__signals__0__isnull=False
        ).values_list("pk", "metadata", "problem_type", "emotion_type")
        for pk, meta, problem, emotion in flagged:
            if note := screening_note(meta, problem, emotion):
                notes[pk] = note
    for context_id, text in ContentNote.objects.filter(context__study=study).values_list(
        "context_id", "text"
    ):
        notes[context_id] = text
    _notes_cache[_key(study)] = (time.monotonic() + CACHE_TTL, notes)
    return notes


def skip_limit(*, study: Study) -> int:
    """How many items a rater may skip: the study's items per rater (at least one). The skip
    that reaches it ends the rater's session, as a stop: so a rater who only skips reads no
    more conversations than a rater who answers, and gets no code for it."""
    return max(1, study.items_per_rater)


def rater_answers_kept(*, rater: Rater) -> int:
    """The real items the rater judged that the study keeps (none once they withdrew)."""
    return rater.judgments.filter(pair__isnull=False).count()


def _support_link(line: str) -> tuple[str, str] | None:
    label, _, url = line.rpartition("|")
    url, label = url.strip(), label.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or "." not in parts.netloc or " " in url:
        return None
    return label or url, url


def support_link_valid(line: str) -> bool:
    """Whether a line of the support links reads as 'label | https://address'."""
    return _support_link(line) is not None


def support_links(settings: CareSettings) -> list[tuple[str, str]]:
    """The 'label | address' lines as (label, address). The settings form refuses malformed
    lines, so none is lost in silence; one stored before that check is left out here."""
    return [link for line in settings.support_links.splitlines() if (link := _support_link(line))]


# --- Qualification ------------------------------------------------------------------------


@dataclass(frozen=True)
class QualificationStep:
    item: QualificationItem | None  # the next item to answer; None when both blocks are done
    number: int
    total: int
    n_training: int


def qualification_step(*, rater: Rater) -> QualificationStep:
    answered = QualificationAnswer.objects.filter(rater=rater, item=OuterRef("pk"))
    items = list(
        QualificationItem.objects.filter(study_id=rater.study_id).annotate(
            answered=Exists(answered)
        )
    )  # the items and whether this rater answered each, in one query
    items.sort(key=lambda i: (i.phase != QualificationItem.Phase.TRAINING, i.position, i.pk))
    pending = [i for i in items if not i.answered]
    n_training = sum(1 for i in items if i.phase == QualificationItem.Phase.TRAINING)
    return QualificationStep(
        item=pending[0] if pending else None,
        number=len(items) - len(pending) + 1,
        total=len(items),
        n_training=n_training,
    )


def rater_care(*, rater: Rater) -> RaterCare | None:
    return RaterCare.objects.filter(rater=rater).first()


@dataclass(frozen=True)
class ItemDifficulty:
    item: QualificationItem
    answers: int
    correct: int

    @property
    def share_right(self) -> float | None:
        return self.correct / self.answers if self.answers else None


def qualification_summary(*, study: Study) -> dict[str, Any]:
    """Pass rate of finished qualifications and each item's share of right answers."""
    outcomes = RaterCare.objects.filter(rater__study=study).aggregate(
        passed=Count("pk", filter=Q(qualification=RaterCare.Qualification.PASSED)),
        failed=Count("pk", filter=Q(qualification=RaterCare.Qualification.FAILED)),
    )
    finished = outcomes["passed"] + outcomes["failed"]
    items = QualificationItem.objects.filter(study=study).annotate(
        n=Count("answers"), right=Count("answers", filter=Q(answers__correct=True))
    )
    return {
        **outcomes,
        "finished": finished,
        "pass_rate": outcomes["passed"] / finished if finished else None,
        "items": [ItemDifficulty(item=i, answers=i.n, correct=i.right) for i in items],
    }


# --- What the admin sees --------------------------------------------------------------------


def skips_per_context(*, study: Study) -> list[dict[str, Any]]:
    """Contexts by how many people skipped them (most first): a signal about the material."""
    rows = (
        Skip.objects.filter(study=study)
        .values("context__external_id")
        .annotate(
            raters=Count("pk", filter=Q(rater__isnull=False)),
            writers=Count("pk", filter=Q(writer__isnull=False)),
            total=Count("pk"),
        )
        .order_by("-total", "context__external_id")
    )
    return [dict(row) for row in rows]


@dataclass(frozen=True)
class PersonCare:
    kind: str  # "rater" or "writer"
    pseudonym: str
    skips: int
    stopped_at: datetime | None
    seconds_worked: int | None
    outcome: str


def _seconds(start: datetime | None, end: datetime | None) -> int | None:
    if start is None or end is None:
        return None
    return max(0, int((end - start).total_seconds()))


def rater_time_rows(*, study: Study) -> list[PersonCare]:
    """Per rater: skips, stop and time worked (consent to stop, or to their last answer)."""
    raters = (
        Rater.objects.filter(study=study, consented_at__isnull=False)
        .select_related("care")
        .annotate(
            last_judged=Max("judgments__submitted_at"),
            last_qualified=Max("qualification_answers__answered_at"),
        )
        .order_by("created_at", "pk")
    )
    skips = dict(
        Skip.objects.filter(study=study, rater__isnull=False)
        .values_list("rater_id")
        .annotate(n=Count("pk"))
    )
    rows = []
    for rater in raters:
        care = getattr(rater, "care", None)
        stopped = care.stopped_at if care else None
        last = max(filter(None, [rater.last_judged, rater.last_qualified]), default=None)
        worked = care.seconds_worked if care and stopped else _seconds(rater.consented_at, last)
        rows.append(
            PersonCare(
                kind="rater",
                pseudonym=rater.pseudonym,
                skips=skips.get(rater.pk, 0),
                stopped_at=stopped,
                seconds_worked=worked,
                outcome=_rater_outcome(care, withdrawn=rater.withdrawn_at is not None),
            )
        )
    return rows


def _rater_outcome(care: RaterCare | None, *, withdrawn: bool = False) -> str:
    if care is None:
        return ""
    if care.stopped_at:
        why = " at the skip limit" if care.skip_limit_at else ""
        return f"stopped{why} ({care.stop_outcome}){', withdrew' if withdrawn else ''}"
    if care.qualification == RaterCare.Qualification.FAILED:
        return "screened out"
    return ""


def writer_time_rows(*, study: Study) -> list[PersonCare]:
    writers = (
        Writer.objects.filter(study=study, consented_at__isnull=False)
        .select_related("care")
        .annotate(last_written=Max("writings__submitted_at"))
        .order_by("created_at", "pk")
    )
    skips = dict(
        Skip.objects.filter(study=study, writer__isnull=False)
        .values_list("writer_id")
        .annotate(n=Count("pk"))
    )
    rows = []
    for writer in writers:
        care = getattr(writer, "care", None)
        rows.append(
            PersonCare(
                kind="writer",
                pseudonym=writer.pseudonym,
                skips=skips.get(writer.pk, 0),
                stopped_at=care.stopped_at if care else None,
                seconds_worked=(
                    care.seconds_worked
                    if care
                    else _seconds(writer.consented_at, writer.last_written)
                ),
                outcome=f"stopped ({care.stop_outcome})" if care else "",
            )
        )
    return rows


def seconds_worked_until(*, start: datetime | None, now: datetime | None = None) -> int:
    return _seconds(start, now or timezone.now()) or 0


TIME_FIELDS = [
    "role",
    "pseudonym",
    "seconds_worked",
    "minutes_worked",
    "skips",
    "stopped",
    "outcome",
]


def time_worked_rows(study: Study) -> Iterator[dict[str, Any]]:
    """The payment table, pseudonymous ids only (the Downloads page's CSV)."""
    for row in [*rater_time_rows(study=study), *writer_time_rows(study=study)]:
        yield {
            "role": row.kind,
            "pseudonym": row.pseudonym,
            "seconds_worked": row.seconds_worked,
            "minutes_worked": None
            if row.seconds_worked is None
            else round(row.seconds_worked / 60, 1),
            "skips": row.skips,
            "stopped": row.stopped_at is not None,
            "outcome": row.outcome,
        }
