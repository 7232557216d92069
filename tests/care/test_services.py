"""Care services: qualification, skips that never count against anyone, early stops."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Judgment, Pair
from annotation.quality import rater_quality_update
from annotation.services import assignment_next
from care.models import ContentNote, QualificationItem, RaterCare, Skip
from care.selectors import care_forget, content_notes, qualification_step, time_worked_rows
from care.services import (
    assignment_skip,
    content_note_set,
    qualification_answer,
    qualification_correct,
    qualification_items_seed_from_rubric,
    rater_stop,
    writer_stop,
    writing_skip,
)
from tests.factories import CareSettingsFactory, RaterFactory, SystemFactory, WriterFactory
from tests.factories.annotation import build_study
from tests.factories.writing import build_writing_study
from writing.models import Writer, Writing
from writing.services import writer_consent, writing_next

pytestmark = pytest.mark.django_db


def _rater(study, name="r1", minutes_ago=0):
    consented = timezone.now() - timedelta(minutes=minutes_ago)
    return RaterFactory(
        study=study,
        pseudonym=f"{name}-{study.pk}",
        external_id=f"PID-{name}",
        consented_at=consented,
    )


def _answer_all(rater, right: bool):
    while (item := qualification_step(rater=rater).item) is not None:
        good = 1 if item.expected == "a" else 5
        qualification_answer(rater=rater, item=item, choice=good if right else 6 - good)


def test_a_qualification_answer_is_right_when_it_prefers_the_better_reply_at_either_strength():
    item = QualificationItem(expected="b")
    assert [qualification_correct(item=item, choice=c) for c in range(1, 6)] == [
        False,
        False,
        False,
        True,
        True,
    ]


def test_the_rubric_seeds_one_training_and_four_qualification_items_once():
    study = build_study(n_contexts=1)
    items = qualification_items_seed_from_rubric(study=study)
    assert sorted(i.phase for i in items) == ["qualification"] * 4 + ["training"]
    qualification = [i for i in items if i.phase == "qualification"]
    # The better reply is first in two and second in two, longer in two and shorter in two.
    assert sorted(i.expected for i in qualification) == ["a", "a", "b", "b"]
    better_longer = [
        len((i.text_a if i.expected == "a" else i.text_b).split())
        > len((i.text_b if i.expected == "a" else i.text_a).split())
        for i in qualification
    ]
    assert sorted(better_longer) == [False, False, True, True]
    assert all(i.explanation.startswith("it shows ") for i in items)
    assert qualification_items_seed_from_rubric(study=study) == []


def test_training_comes_first_and_a_rater_passes_with_enough_right_answers():
    study = build_study(n_contexts=1)
    qualification_items_seed_from_rubric(study=study)
    rater = _rater(study)
    assert qualification_step(rater=rater).item.phase == "training"
    _answer_all(rater, right=True)
    care = RaterCare.objects.get(rater=rater)
    assert (care.qualification, care.n_correct, care.n_qualification) == ("passed", 4, 4)
    rater.refresh_from_db()
    assert rater.finished_at is None


def test_a_rater_below_the_threshold_fails_and_is_finished():
    study = build_study(n_contexts=1)
    CareSettingsFactory(study=study, pass_share=1.0)
    care_forget(study=study)
    qualification_items_seed_from_rubric(study=study)
    rater = _rater(study)
    items = list(QualificationItem.objects.filter(study=study, phase="qualification"))
    _answer_all(rater, right=True)  # training and qualification all right ...
    care = RaterCare.objects.get(rater=rater)
    assert care.qualification == "passed"
    other = _rater(study, "r2")
    for item in QualificationItem.objects.filter(study=study):
        wrong = item == items[0]  # ... one wrong qualification answer fails at a 100 % bar
        good = 1 if item.expected == "a" else 5
        qualification_answer(rater=other, item=item, choice=6 - good if wrong else good)
    care = RaterCare.objects.get(rater=other)
    assert (care.qualification, care.n_correct) == ("failed", 3)
    other.refresh_from_db()
    assert other.finished_at is not None


def test_a_skip_frees_the_pair_for_others_and_never_counts_against_the_rater():
    study = build_study(n_contexts=1, quota=1, quality_check_rate=0)
    rater = _rater(study)
    leased = assignment_next(rater=rater)
    skip = assignment_skip(assignment=leased, reason="  too close to home ")
    assert skip.reason == "too close to home" and skip.context_id == leased.pair.context_id
    leased.refresh_from_db()
    assert leased.status == "expired"
    assert not Judgment.objects.exists()
    rater_quality_update(rater=rater)
    rater.refresh_from_db()
    assert not rater.flagged and not rater.excluded
    # The pair (quota 1) goes to someone else at once; this rater never gets it again.
    other = _rater(study, "r2")
    assert assignment_next(rater=other).pair_id == leased.pair_id
    again = assignment_next(rater=rater)
    assert again is None or again.pair_id != leased.pair_id
    Pair.objects.filter(pk=leased.pair_id).update(quota=5)
    assert assignment_next(rater=rater).pair_id != leased.pair_id


def test_stopping_records_the_time_worked_once_and_releases_the_item():
    study = build_study(n_contexts=1, quality_check_rate=0)
    rater = _rater(study, minutes_ago=12)
    leased = assignment_next(rater=rater)
    care = rater_stop(rater=rater)
    assert 12 * 60 - 2 <= care.seconds_worked <= 12 * 60 + 2
    assert care.stop_outcome == "code"
    assert Assignment.objects.get(pk=leased.pk).status == "released"
    first = care.stopped_at
    assert rater_stop(rater=rater).stopped_at == first  # a second stop changes nothing
    row = next(r for r in time_worked_rows(study) if r["pseudonym"] == rater.pseudonym)
    assert row["stopped"] is True and row["minutes_worked"] == 12.0
    assert "PID-r1" not in str(list(time_worked_rows(study)))


def _writer(study, minutes_ago=0):

    system = SystemFactory(study=study, name="writer-sys", kind="human", family="")
    writer = WriterFactory(study=study, system=system, pseudonym="w-care")
    writer_consent(writer=writer)
    Writer.objects.filter(pk=writer.pk).update(
        consented_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    writer.refresh_from_db()
    return writer


def test_a_writer_skips_a_context_without_using_their_quota_and_stops():
    study = build_writing_study(n_contexts=2, contexts_per_writer=1)
    writer = _writer(study, minutes_ago=5)
    first = writing_next(writer=writer)
    writing_skip(writing=first, reason="")
    assert Writing.objects.get(pk=first.pk).status == "expired"
    second = writing_next(writer=writer)
    assert second is not None and second.context_id != first.context_id
    care = writer_stop(writer=writer)
    assert 5 * 60 - 2 <= care.seconds_worked <= 5 * 60 + 2
    assert Writing.objects.get(pk=second.pk).status == "expired"
    assert Skip.objects.get().writer_id == writer.pk


def test_screened_contexts_and_admin_flags_carry_a_content_note():
    study = build_study(n_contexts=2)
    screened, plain = study.contexts.order_by("pk")
    screened.metadata = {"screening": {"score": 5, "signals": ["hopeless"]}}
    screened.problem_type, screened.emotion_type = "job crisis", "depression"
    screened.save()
    care_forget(study=study)
    notes = content_notes(study=study)
    assert notes == {
        screened.pk: "This conversation touches on job crisis and depression, and the person "
        "describes distress."
    }
    content_note_set(context=plain, text="Mentions a bereavement.")
    assert content_notes(study=study)[plain.pk] == "Mentions a bereavement."
    content_note_set(context=plain, text="")
    assert not ContentNote.objects.exists() and plain.pk not in content_notes(study=study)
