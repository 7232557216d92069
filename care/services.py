"""Writes for care: qualification answers and results, skips, early stops, the settings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from annotation.models import Assignment, Rater
from annotation.quality import _GOLD_TURNS, RUBRIC, RUBRIC_PAIRS, _turns
from annotation.services import choice_to_verdict, rater_finish, rater_withdraw
from completions.models import DialogueContext, Study
from writing.models import Writer, Writing

from .models import (
    CareSettings,
    ContentNote,
    Outcome,
    QualificationAnswer,
    QualificationItem,
    RaterCare,
    Skip,
    WriterCare,
)
from .selectors import (
    care_forget,
    care_settings,
    rater_answers_kept,
    seconds_worked_until,
    skip_limit,
)

Qualification = RaterCare.Qualification


def qualification_correct(*, item: QualificationItem, choice: int) -> bool:
    """Right when the rater prefers the reference's better reply, at either strength.

    Qualification items are shown in their stored order (reply a on the left)."""
    winner, _ = choice_to_verdict(choice=choice, shown_left="a")
    return winner == item.expected


@dataclass(frozen=True)
class AnswerResult:
    answer: QualificationAnswer
    care: RaterCare


@transaction.atomic
def qualification_answer(
    *, rater: Rater, item: QualificationItem, choice: int, now: datetime | None = None
) -> AnswerResult:
    """Store one answer (the first one counts); at the last item, decide pass or fail."""
    now = now or timezone.now()
    # The rater's care row, locked: a rater's answers are stored one at a time (a double click
    # waits here, then finds the first one), so no savepoint is needed around the insert.
    care, _ = RaterCare.objects.select_for_update().get_or_create(rater=rater)
    answer = QualificationAnswer.objects.filter(rater=rater, item=item).first()
    if answer is None:
        answer = QualificationAnswer.objects.create(
            rater=rater,
            item=item,
            choice=choice,
            correct=qualification_correct(item=item, choice=choice),
            answered_at=now,
        )
    if not care.qualification:
        care.qualification = Qualification.STARTED
        care.save(update_fields=["qualification"])
    if care.qualification == Qualification.STARTED and not _unanswered(rater).exists():
        _qualification_decide(rater=rater, care=care, now=now)
    return AnswerResult(answer=answer, care=care)


def _unanswered(rater: Rater) -> QuerySet[QualificationItem]:
    """The study's qualification items this rater has not answered (one query to ask)."""
    return QualificationItem.objects.filter(study_id=rater.study_id).exclude(answers__rater=rater)


@transaction.atomic
def qualification_finish(*, rater: Rater, now: datetime | None = None) -> RaterCare:
    """Decide now (a study with qualification on but no items defined passes everyone)."""
    care, _ = RaterCare.objects.select_for_update().get_or_create(rater=rater)
    if care.qualification in ("", Qualification.STARTED):
        _qualification_decide(rater=rater, care=care, now=now or timezone.now())
    return care


def _qualification_decide(*, rater: Rater, care: RaterCare, now: datetime) -> None:
    answers = QualificationAnswer.objects.filter(
        rater=rater, item__phase=QualificationItem.Phase.QUALIFICATION
    )
    counts = answers.aggregate(n=Count("pk"), right=Count("pk", filter=Q(correct=True)))
    care.n_qualification, care.n_correct = counts["n"], counts["right"]
    needed = care_settings(study=rater.study).pass_share
    passed = care.n_qualification == 0 or care.n_correct >= needed * care.n_qualification
    care.qualification = Qualification.PASSED if passed else Qualification.FAILED
    care.qualified_at = now
    care.save(update_fields=["qualification", "n_qualification", "n_correct", "qualified_at"])
    if not passed:
        rater_finish(rater=rater)


class NothingToSkip(Exception):
    """The item is no longer the rater's to skip (answered, or gone back to the pool)."""


@transaction.atomic
def assignment_skip(*, assignment: Assignment, reason: str = "") -> Skip:
    """The rater skips this item: its reservation ends now (the pair goes back to the pool for
    others) and the skip is recorded. No judgment is stored, so nothing about the rater's
    quality, exclusion, places or pay counts it; the rater is never given the pair again
    (one assignment per rater and pair)."""
    changed = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.LEASED).update(
        status=Assignment.Status.EXPIRED, lease_expires_at=timezone.now()
    )
    if changed != 1:
        raise NothingToSkip(assignment.token)
    pair = assignment.pair if assignment.pair_id else None
    rater = assignment.rater
    skip = Skip.objects.create(
        study_id=rater.study_id,
        context_id=pair.context_id if pair else None,
        rater=rater,
        assignment=assignment,
        pair=pair,
        reason=reason.strip()[:500],
    )
    if Skip.objects.filter(rater=rater).count() >= skip_limit(study=rater.study):
        rater_stop(rater=rater, by_skip_limit=True)
    return skip


@transaction.atomic
def writing_skip(*, writing: Writing, reason: str = "") -> Skip:
    """The writer skips this conversation: the draft's place goes back to the pool (the writer
    is not given it again) and the skip is recorded; it uses none of their quota."""
    changed = Writing.objects.filter(pk=writing.pk, status=Writing.Status.DRAFT).update(
        status=Writing.Status.EXPIRED, lease_expires_at=timezone.now()
    )
    if changed != 1:
        raise NothingToSkip(writing.token)
    return Skip.objects.create(
        study_id=writing.writer.study_id,
        context_id=writing.context_id,
        writer=writing.writer,
        writing=writing,
        reason=reason.strip()[:500],
    )


@transaction.atomic
def rater_stop(
    *, rater: Rater, now: datetime | None = None, by_skip_limit: bool = False
) -> RaterCare:
    """The rater stops now: their open item is released (back to the pool for others; an
    answer to it sent later is refused, never stored) and the time worked (from consent to
    now) is recorded once, with the study's outcome for stopping.

    `by_skip_limit`: the rater used up the skips the study allows. Then a rater who judged
    nothing gets no code at all (they are asked to return the study): skipping alone is no
    work to pay as complete."""
    now = now or timezone.now()
    care, _ = RaterCare.objects.select_for_update().get_or_create(rater=rater)
    if care.stopped_at is None:
        Assignment.objects.filter(rater=rater, status=Assignment.Status.LEASED).update(
            status=Assignment.Status.RELEASED, lease_expires_at=now
        )
        care.stopped_at = now
        care.stop_outcome = care_settings(study=rater.study).stop_outcome
        if by_skip_limit:
            care.skip_limit_at = now
            if rater_answers_kept(rater=rater) == 0:
                care.stop_outcome = Outcome.RETURN
        care.seconds_worked = seconds_worked_until(start=rater.consented_at, now=now)
        care.save(update_fields=["stopped_at", "stop_outcome", "seconds_worked", "skip_limit_at"])
        rater_finish(rater=rater)
    return care


class WithdrawalNotAllowed(Exception):
    """The study does not let raters withdraw their answers."""


@transaction.atomic
def rater_stop_and_withdraw(*, rater: Rater, now: datetime | None = None) -> RaterCare:
    """Stop (if not yet) and withdraw: the rater's answers are deleted from the study
    (annotation's `rater_withdraw`); only where the study's care settings allow it."""
    if not care_settings(study=rater.study).allow_withdrawal:
        raise WithdrawalNotAllowed(rater.study.slug)
    now = now or timezone.now()
    care = rater_stop(rater=rater, now=now)
    rater_withdraw(rater=rater, now=now)
    return care


@transaction.atomic
def writer_stop(*, writer: Writer, now: datetime | None = None) -> WriterCare:
    """The writer stops now: an open draft goes back to the pool (its text is kept) and the
    time worked is recorded once."""
    now = now or timezone.now()
    existing = WriterCare.objects.filter(writer=writer).first()
    if existing is not None:
        return existing
    Writing.objects.filter(writer=writer, status=Writing.Status.DRAFT).update(
        status=Writing.Status.EXPIRED, lease_expires_at=now
    )
    care = WriterCare.objects.create(
        writer=writer,
        stopped_at=now,
        stop_outcome=care_settings(study=writer.study).stop_outcome,
        seconds_worked=seconds_worked_until(start=writer.consented_at, now=now),
    )
    if writer.finished_at is None:
        writer.finished_at = now
        writer.save(update_fields=["finished_at"])
    return care


def care_settings_save(*, settings: CareSettings) -> CareSettings:
    settings.save()
    care_forget(study=settings.study)
    return settings


def content_note_set(*, context: DialogueContext, text: str, by: Any = None) -> ContentNote | None:
    """Flag a context with a note (or clear the admin's note with an empty text)."""
    text = text.strip()[:300]
    if not text:
        ContentNote.objects.filter(context=context).delete()
        care_forget(study=context.study)
        return None
    note, _ = ContentNote.objects.update_or_create(
        context=context, defaults={"text": text, "created_by": by}
    )
    care_forget(study=context.study)
    return note


# Training: one rubric axis (feedback shown); qualification: four, the better reply stored
# first in two and second in two, longer in two and shorter in two (annotation.quality's
# RUBRIC_PAIRS), so that no script passes: always A, always B, the longer or the shorter reply
# each get 2 of 4 right, short of the default 75 % (annotation/bots.py; the studio checks it).
_TRAINING = (("A", "a"),)
_QUALIFICATION = (("H", "a"), ("E", "b"), ("T", "a"), ("R", "b"))


@transaction.atomic
def qualification_items_seed_from_rubric(*, study: Study) -> list[QualificationItem]:
    """Gold items from the rubric's better and weaker replies, with the rubric's description
    as the explanation. Idempotent (keyed by their note, "qualification:H", ...); an item
    nobody has answered yet is brought up to date (older seeds had the better reply always
    the longer)."""
    answered = set(
        study.qualification_items.filter(answers__isnull=False).values_list("note", flat=True)
    )
    existing = set(study.qualification_items.values_list("note", flat=True))
    created = []
    plan = [("training", *spec) for spec in _TRAINING]
    plan += [("qualification", *spec) for spec in _QUALIFICATION]
    for position, (phase, axis, expected) in enumerate(plan):
        note = f"qualification:{axis}"
        if note in answered:
            continue
        better, weaker = RUBRIC_PAIRS[axis]
        text_a, text_b = (better, weaker) if expected == "a" else (weaker, better)
        description = RUBRIC[axis]["description"].rstrip(".")
        fields = {
            "phase": phase,
            "position": position,
            "turns": _turns(*_GOLD_TURNS[axis]),
            "text_a": text_a,
            "text_b": text_b,
            "expected": expected,
            "explanation": f"it shows {description[0].lower()}{description[1:]}.",
        }
        if note in existing:
            study.qualification_items.filter(note=note).update(**fields)
            continue
        created.append(QualificationItem(study=study, note=note, **fields))
    return QualificationItem.objects.bulk_create(created)


def outcome_code(*, study: Study, outcome: str, code: str) -> str:
    """The completion code an outcome hands out ("" when the person returns the study)."""
    if outcome == Outcome.COMPLETION:
        return study.completion_code
    if outcome == Outcome.CODE:
        return code
    return ""
