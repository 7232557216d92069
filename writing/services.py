"""Writes for writers: entry, consent, the lease engine (claim, renew, draft, submit), review.

Engine invariants (paper 9.3: each context gets exactly `Study.writers_per_context` distinct
writers):
- a context holds at most N texts that are pending, accepted, or drafts under a running lease;
  a claimer locks the context's WritingContext row (PostgreSQL `FOR UPDATE SKIP LOCKED`) and
  recounts *after* taking the lock, so every earlier claimer of that context has committed;
- a writer writes a context at most once (constraint `writing_writer_once`), and their
  Completion can exist only once per context (`completion_one_per_system`);
- a draft holds its place while its lease runs (each autosave renews it) but is not a
  completion: only pending and accepted texts count as written.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from completions.models import Completion, DialogueContext, Study, System, SystemKind

from .behaviour import behaviour_clean, behaviour_flags
from .models import Writer, Writing, WritingContext, WritingSettings
from .text_rules import Limits, limit_errors

if TYPE_CHECKING:
    from django.contrib.auth.models import User

CLAIM_ATTEMPTS = 8
HUMAN_FAMILY = "human"


# --------------------------------------------------------------------------- settings


def writing_settings(study: Study) -> WritingSettings:
    """The study's writer settings, created with the defaults on first use."""
    found, _ = WritingSettings.objects.get_or_create(study=study)
    return found


def writing_limits(ws: WritingSettings) -> Limits:
    return Limits(
        min_words=ws.min_words,
        max_words=ws.max_words,
        max_chars=ws.max_chars,
        band_min_words=ws.band_min_words,
        band_max_words=ws.band_max_words,
        band_min_sentences=ws.band_min_sentences,
        band_max_sentences=ws.band_max_sentences,
    )


class WritingOff(Exception):
    """Contexts open for writing only while writing is on; the message says what to do."""


def writing_contexts_open(*, study: Study, limit: int | None = None) -> int:
    """Open the study's not-yet-open contexts for writing (the first `limit` by id).

    Refused while writing is off: contexts opened then would wait for writers who cannot come,
    and the page would say they are open."""
    if not writing_settings(study).enabled:
        raise WritingOff(
            "Writing is off for this study, so no context was opened. Switch “Writing is on” "
            "in the writer settings first."
        )
    todo = DialogueContext.objects.filter(study=study, writing__isnull=True).order_by("id")
    if limit is not None:
        todo = todo[:limit]
    rows = [WritingContext(study=study, context=context) for context in todo]
    WritingContext.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


# --------------------------------------------------------------------------- writers


def _pseudonym(*, study: Study, key: str) -> str:
    """Keyed HMAC for panel ids and accounts (stable, not reversible); random otherwise."""
    if not key:
        return "writer-" + secrets.token_hex(6)
    digest = hmac.new(
        settings.PSEUDONYM_KEY.encode(), f"writer:{study.pk}:{key}".encode(), hashlib.sha256
    )
    return "writer-" + digest.hexdigest()[:12]


def _writer_create(*, study: Study, key: str, **fields: Any) -> Writer:
    pseudonym = _pseudonym(study=study, key=key)
    system = System.objects.create(
        study=study, name=pseudonym, kind=SystemKind.HUMAN, family=HUMAN_FAMILY
    )
    return Writer.objects.create(study=study, system=system, pseudonym=pseudonym, **fields)


class ProlificWriterMismatch(Exception):
    """A Prolific id that is already a writer here arrived with other study/session ids."""


@transaction.atomic
def writer_enter(
    *,
    study: Study,
    external_id: str = "",
    prolific_study_id: str = "",
    prolific_session_id: str = "",
    user: User | None = None,
    same_browser: bool = False,
    cohort: str = "crowd",
) -> Writer:
    """A new invitation writer, or the returning panel writer / account (they resume).

    A returning Prolific writer resumes only from the same browser or with the same STUDY_ID and
    SESSION_ID (Prolific sends both every time a participant reopens their own submission);
    someone who knows only another participant's PROLIFIC_PID gets ProlificWriterMismatch.
    `cohort` is recorded for a new writer; a returning one keeps theirs.
    """
    if user is not None:
        found = Writer.objects.filter(study=study, user=user).first()
        return found or _writer_create(
            study=study, key=f"user:{user.pk}", user=user, source="account", cohort=cohort
        )
    if not external_id:
        return _writer_create(study=study, key="", cohort=cohort)
    found = Writer.objects.filter(study=study, external_id=external_id).first()
    if found is not None and not same_browser:
        same_session = (
            bool(prolific_session_id)
            and found.prolific_session_id == prolific_session_id[:200]
            and found.prolific_study_id == prolific_study_id[:200]
        )
        if not same_session:
            raise ProlificWriterMismatch(external_id)
    return found or _writer_create(
        study=study,
        key=f"panel:{external_id}",
        external_id=external_id,
        source="prolific",
        prolific_study_id=prolific_study_id[:200],
        prolific_session_id=prolific_session_id[:200],
        cohort=cohort,
    )


def writer_consent(*, writer: Writer) -> Writer:
    if writer.consented_at is None:
        writer.consented_at = timezone.now()
        writer.save(update_fields=["consented_at"])
    return writer


def writer_finish(*, writer: Writer) -> Writer:
    if writer.finished_at is None:
        writer.finished_at = timezone.now()
        writer.save(update_fields=["finished_at"])
    return writer


# --------------------------------------------------------------------------- the lease engine


def _holding(now: datetime) -> Q:
    """Texts that take a place in their context: written, or a draft under a running lease."""
    return Q(status__in=[Writing.Status.PENDING, Writing.Status.ACCEPTED]) | Q(
        status=Writing.Status.DRAFT, lease_expires_at__gt=now
    )


def context_filled(*, context_id: int, now: datetime, exclude_id: int | None = None) -> int:
    qs = Writing.objects.filter(_holding(now), context_id=context_id)
    if exclude_id is not None:
        qs = qs.exclude(pk=exclude_id)
    return qs.count()


def _lock_context(context_id: int) -> None:
    """Take the context's row lock (waits for a claimer holding it)."""
    list(WritingContext.objects.select_for_update().filter(context_id=context_id).values("id"))


def writer_quota_left(*, writer: Writer, ws: WritingSettings) -> bool:
    if ws.contexts_per_writer is None:
        return True
    used = writer.writings.exclude(status=Writing.Status.EXPIRED).count()
    return used < ws.contexts_per_writer


def writing_current(*, writer: Writer) -> Writing | None:
    return writer.writings.filter(status=Writing.Status.DRAFT).select_related("context").first()


def writing_next(*, writer: Writer, now: datetime | None = None) -> Writing | None:
    """The writer's current draft (resumed), else a newly claimed context; None when done."""
    now = now or timezone.now()
    with transaction.atomic():
        current = writing_current(writer=writer)
        if current is not None and (
            current.lease_expires_at > now or _lease_renew(writing=current, now=now)
        ):
            return current
        study = writer.study
        ws = writing_settings(study)
        open_to_writers = study.accepts_writers and ws.enabled
        if not open_to_writers or not writer_quota_left(writer=writer, ws=ws):
            return None
        return _claim(writer=writer, now=now, ws=ws)


def _lease_renew(*, writing: Writing, now: datetime) -> bool:
    """Extend a draft's lease if its context still has room; else mark it expired (kept)."""
    _lock_context(writing.context_id)
    quota = writing.writer.study.writers_per_context
    if context_filled(context_id=writing.context_id, now=now, exclude_id=writing.pk) >= quota:
        Writing.objects.filter(pk=writing.pk).update(status=Writing.Status.EXPIRED)
        writing.status = Writing.Status.EXPIRED
        return False
    lease = writing_settings(writing.writer.study).lease_seconds
    writing.lease_expires_at = now + timedelta(seconds=lease)
    writing.save(update_fields=["lease_expires_at"])
    return True


def _candidates(
    *, writer: Writer, now: datetime, quota: int, excluded: list[int]
) -> QuerySet[WritingContext]:
    filled = Coalesce(
        Subquery(
            Writing.objects.filter(_holding(now), context_id=OuterRef("context_id"))
            .order_by()
            .values("context_id")
            .annotate(n=Count("id"))
            .values("n")[:1]
        ),
        0,
    )
    mine = Writing.objects.filter(writer=writer).values("context_id")
    return (
        WritingContext.objects.filter(study_id=writer.study_id)
        .exclude(context_id__in=mine)
        .exclude(context_id__in=excluded)
        .annotate(filled=filled)
        .filter(filled__lt=quota)
        .order_by("filled", "id")
    )


def _claim(*, writer: Writer, now: datetime, ws: WritingSettings) -> Writing | None:
    """Lock the least-filled open context this writer has not written and that has room.

    SKIP LOCKED lets concurrent writers take different contexts; when every candidate is
    locked by others we wait on one rather than wrongly telling the writer there is nothing
    left. The count is repeated after the lock: the claiming query read it before.
    """
    quota = writer.study.writers_per_context
    excluded: list[int] = []
    for _attempt in range(CLAIM_ATTEMPTS):
        base = _candidates(writer=writer, now=now, quota=quota, excluded=excluded)
        row = base.select_for_update(skip_locked=True, of=("self",)).values("context_id").first()
        if row is None:
            row = base.select_for_update(of=("self",)).values("context_id").first()
        if row is None:
            return None
        context_id = row["context_id"]
        if context_filled(context_id=context_id, now=now) < quota:
            return Writing.objects.create(
                study_id=writer.study_id,
                writer=writer,
                context_id=context_id,
                leased_at=now,
                lease_expires_at=now + timedelta(seconds=ws.lease_seconds),
            )
        excluded.append(context_id)
    return None


# A writer's text longer than this is refused whole (never stored, never sent back): no reply
# of 1-3 sentences comes near it, so only a script or a paste of something else does.
DRAFT_MAX_CHARS = 20_000


def too_long_message(text: str, limit: int) -> str:
    return f"Your reply is {len(text):,} characters long; the limit is {limit:,}. It was not saved."


@transaction.atomic
def writing_draft_save(*, writing: Writing, text: str, now: datetime | None = None) -> bool:
    """Store the draft text and renew the lease; False when the draft is no longer open."""
    now = now or timezone.now()
    writing = Writing.objects.select_related("writer__study").get(pk=writing.pk)
    if writing.status != Writing.Status.DRAFT:
        return False
    if writing.lease_expires_at <= now and not _lease_renew(writing=writing, now=now):
        Writing.objects.filter(pk=writing.pk).update(
            text=text[:DRAFT_MAX_CHARS], draft_saved_at=now
        )
        return False
    lease = writing_settings(writing.writer.study).lease_seconds
    Writing.objects.filter(pk=writing.pk).update(
        text=text[:DRAFT_MAX_CHARS],
        draft_saved_at=now,
        lease_expires_at=now + timedelta(seconds=lease),
    )
    return True


@dataclass
class SubmitResult:
    writing: Writing
    errors: list[str]
    refused: bool = False  # the lease ran out and the context filled meanwhile

    @property
    def ok(self) -> bool:
        return not self.errors and not self.refused


@transaction.atomic
def writing_submit(
    *, writing: Writing, text: str, raw_behaviour: dict[str, Any], now: datetime | None = None
) -> SubmitResult:
    """Submit a draft for review. Idempotent: a repeated submit changes nothing."""
    now = now or timezone.now()
    _lock_context(writing.context_id)
    writing = Writing.objects.select_related("writer__study").get(pk=writing.pk)
    if writing.status in (Writing.Status.PENDING, Writing.Status.ACCEPTED):
        return SubmitResult(writing=writing, errors=[])
    if writing.status != Writing.Status.DRAFT:
        return SubmitResult(writing=writing, errors=[], refused=True)
    ws = writing_settings(writing.writer.study)
    text = text.strip()
    errors = limit_errors(text, writing_limits(ws))
    if errors:
        Writing.objects.filter(pk=writing.pk).update(text=text, draft_saved_at=now)
        writing.text = text
        return SubmitResult(writing=writing, errors=errors)
    quota = writing.writer.study.writers_per_context
    if writing.lease_expires_at <= now and (
        context_filled(context_id=writing.context_id, now=now, exclude_id=writing.pk) >= quota
    ):
        writing.status, writing.text = Writing.Status.EXPIRED, text
        writing.save(update_fields=["status", "text"])
        return SubmitResult(writing=writing, errors=[], refused=True)
    elapsed_ms = int((now - writing.leased_at).total_seconds() * 1000)
    behaviour = behaviour_clean(raw_behaviour, elapsed_ms=elapsed_ms, text_chars=len(text))
    for name, value in behaviour.fields().items():
        setattr(writing, name, value)
    writing.flags = behaviour_flags(behaviour, text_chars=len(text))
    writing.text, writing.status, writing.submitted_at = text, Writing.Status.PENDING, now
    writing.save()
    return SubmitResult(writing=writing, errors=[])


# --------------------------------------------------------------------------- review


class ReviewError(Exception):
    """A review decision that cannot be applied (shown to the admin as is)."""


@transaction.atomic
def writing_accept(*, writing: Writing, by: User | None = None) -> Completion:
    """Accept a submitted text: it becomes the writer's Completion for the context."""
    writing = Writing.objects.select_for_update().select_related("writer").get(pk=writing.pk)
    if writing.status == Writing.Status.ACCEPTED and writing.completion is not None:
        return writing.completion
    if writing.status != Writing.Status.PENDING:
        raise ReviewError(f"Only a submitted text can be accepted (this one is {writing.status}).")
    try:
        with transaction.atomic():
            completion = Completion.objects.create(
                context_id=writing.context_id,
                system_id=writing.writer.system_id,
                writer=writing.writer.user,
                text=writing.text,
                latency_ms=writing.active_ms or None,
                provenance={"source": "writer form", "writing": writing.token},
                metadata={"writing": {"flags": writing.flags, "active_ms": writing.active_ms}},
            )
    except IntegrityError as exc:
        raise ReviewError("This writer already has a completion for this context.") from exc
    writing.status, writing.completion = Writing.Status.ACCEPTED, completion
    writing.reviewed_by, writing.reviewed_at, writing.reject_reason = by, timezone.now(), ""
    writing.save(
        update_fields=["status", "completion", "reviewed_by", "reviewed_at", "reject_reason"]
    )
    return completion


@transaction.atomic
def writing_reject(
    *, writing: Writing, reason: str, by: User | None = None, judged: bool = False
) -> Writing:
    """Reject a text: kept here, out of analysis; its place returns to the pool.

    An accepted text loses its Completion (and with it its pairs), so the caller must pass
    `judged=True` when those pairs carry judgments: that is refused, judgments are never lost.
    """
    reason = reason.strip()[:500]
    if not reason:
        raise ReviewError("Please give a reason for the rejection.")
    writing = Writing.objects.select_for_update().get(pk=writing.pk)
    if writing.status not in (Writing.Status.PENDING, Writing.Status.ACCEPTED):
        raise ReviewError(f"Only a submitted text can be rejected (this one is {writing.status}).")
    if writing.status == Writing.Status.ACCEPTED and judged:
        raise ReviewError("This completion has already been judged; it can no longer be rejected.")
    completion_id = writing.completion_id
    writing.status, writing.reject_reason = Writing.Status.REJECTED, reason
    writing.completion, writing.reviewed_by, writing.reviewed_at = None, by, timezone.now()
    writing.save(
        update_fields=["status", "reject_reason", "completion", "reviewed_by", "reviewed_at"]
    )
    if completion_id is not None:
        Completion.objects.filter(pk=completion_id).delete()
    return writing
