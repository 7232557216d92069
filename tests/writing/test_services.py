"""The writer lease engine and review: quotas, never twice, drafts, expiry, accept/reject."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from completions.models import Completion, System
from tests.factories import WritingFactory
from tests.factories.writing import GOOD_TEXT, behaviour, build_writing_study
from writing.models import Writing
from writing.services import (
    ProlificWriterMismatch,
    ReviewError,
    writer_enter,
    writing_accept,
    writing_draft_save,
    writing_next,
    writing_reject,
    writing_submit,
)

pytestmark = pytest.mark.django_db


def _write(writer, text=GOOD_TEXT, **kw):
    writing = writing_next(writer=writer, **kw)
    assert writing is not None
    result = writing_submit(writing=writing, text=text, raw_behaviour=behaviour(), **kw)
    assert result.ok, result.errors
    return result.writing


def test_each_writer_is_a_human_system_with_a_pseudonym():
    study = build_writing_study()
    writer = writer_enter(study=study)
    system = System.objects.get(pk=writer.system_id)
    assert system.kind == "human" and system.family == "human"
    assert system.name == writer.pseudonym and writer.pseudonym.startswith("writer-")


def test_a_panel_writer_returning_with_the_same_id_is_the_same_writer():
    study = build_writing_study()
    first = writer_enter(study=study, external_id="PID1", prolific_session_id="S1")
    again = writer_enter(study=study, external_id="PID1", prolific_session_id="S1")
    assert first.pk == again.pk and first.source == "prolific"
    assert "PID1" not in first.pseudonym
    same_browser = writer_enter(study=study, external_id="PID1", same_browser=True)
    assert same_browser.pk == first.pk


def test_another_participants_prolific_id_does_not_resume_their_writing():
    study = build_writing_study()
    writer_enter(study=study, external_id="PID1", prolific_study_id="ST", prolific_session_id="S1")
    with pytest.raises(ProlificWriterMismatch):
        writer_enter(study=study, external_id="PID1", prolific_study_id="ST")
    with pytest.raises(ProlificWriterMismatch):
        writer_enter(
            study=study, external_id="PID1", prolific_study_id="ST", prolific_session_id="S2"
        )


def test_each_context_gets_exactly_n_distinct_writers_and_nobody_writes_one_twice():
    study = build_writing_study(n_contexts=2, per_context=3)
    writers = [writer_enter(study=study) for _ in range(5)]
    done = {}
    for writer in writers:
        done[writer.pk] = []
        while (writing := writing_next(writer=writer)) is not None:
            writing_submit(writing=writing, text=GOOD_TEXT, raw_behaviour=behaviour())
            done[writer.pk].append(writing.context_id)
    per_context = {}
    for contexts in done.values():
        assert len(contexts) == len(set(contexts))
        for c in contexts:
            per_context[c] = per_context.get(c, 0) + 1
    assert sorted(per_context.values()) == [3, 3]
    assert sum(map(len, done.values())) == 6


def test_the_database_refuses_a_second_text_by_the_same_writer_on_a_context():
    study = build_writing_study(n_contexts=1)
    writer = writer_enter(study=study)
    writing = writing_next(writer=writer)
    with pytest.raises(IntegrityError), transaction.atomic():
        WritingFactory(
            study=study,
            writer=writer,
            context=writing.context,
            leased_at=writing.leased_at,
            lease_expires_at=writing.lease_expires_at,
        )


def test_a_draft_holds_its_place_and_resumes_but_is_not_written():
    study = build_writing_study(n_contexts=1, per_context=1)
    first, second = writer_enter(study=study), writer_enter(study=study)
    draft = writing_next(writer=first)
    assert writing_draft_save(writing=draft, text="Half a thought")
    assert writing_next(writer=second) is None  # the only place is leased
    resumed = writing_next(writer=first)
    assert resumed.pk == draft.pk and resumed.text == "Half a thought"
    assert Writing.objects.get(pk=draft.pk).status == "draft"


def test_an_expired_lease_returns_the_place_to_the_pool_and_keeps_the_text():
    study = build_writing_study(n_contexts=1, per_context=1, lease_seconds=60)
    first, second = writer_enter(study=study), writer_enter(study=study)
    draft = writing_next(writer=first)
    writing_draft_save(writing=draft, text="I was writing this")
    later = timezone.now() + timedelta(seconds=120)
    other = writing_next(writer=second, now=later)
    assert other is not None and other.context_id == draft.context_id
    _ = writing_submit(writing=other, text=GOOD_TEXT, raw_behaviour=behaviour(), now=later)
    late = writing_submit(writing=draft, text=GOOD_TEXT, raw_behaviour=behaviour(), now=later)
    assert late.refused
    kept = Writing.objects.get(pk=draft.pk)
    assert kept.status == "expired" and kept.text == GOOD_TEXT
    assert writing_next(writer=first, now=later) is None


def test_text_outside_the_hard_limits_is_refused_and_the_draft_kept():
    study = build_writing_study(max_words=10)
    writer = writer_enter(study=study)
    writing = writing_next(writer=writer)
    result = writing_submit(writing=writing, text="word " * 11, raw_behaviour=behaviour())
    assert not result.ok and "limit is 10" in result.errors[0]
    assert Writing.objects.get(pk=writing.pk).status == "draft"
    assert Writing.objects.get(pk=writing.pk).text.startswith("word word")


def test_a_double_submit_stores_one_text():
    study = build_writing_study()
    writer = writer_enter(study=study)
    writing = _write(writer)
    again = writing_submit(writing=writing, text="Another text entirely.", raw_behaviour={})
    assert again.ok and Writing.objects.get(pk=writing.pk).text == GOOD_TEXT


def test_behaviour_is_clamped_and_flags_recorded_on_submit():
    study = build_writing_study()
    writer = writer_enter(study=study)
    writing = writing_next(writer=writer)
    raw = behaviour(active_ms=10**9, inserted_chars=len(GOOD_TEXT), longest_insert=len(GOOD_TEXT))
    result = writing_submit(writing=writing, text=GOOD_TEXT, raw_behaviour=raw)
    stored = Writing.objects.get(pk=result.writing.pk)
    assert stored.status == "pending"  # flags never reject by themselves
    assert "pasted" in stored.flags
    assert stored.active_ms <= 5_000  # clamped to the time since the lease began


def test_accept_creates_the_completion_and_reject_keeps_the_text_out_of_analysis():
    study = build_writing_study(n_contexts=1, per_context=1)
    writer, other = writer_enter(study=study), writer_enter(study=study)
    writing = _write(writer)
    assert writing_next(writer=other) is None  # pending counts toward the quota
    completion = writing_accept(writing=writing)
    assert completion.system_id == writer.system_id and completion.text == GOOD_TEXT
    with pytest.raises(ReviewError):
        writing_reject(writing=writing, reason="  ")
    with pytest.raises(ReviewError):
        writing_reject(writing=writing, reason="Copied", judged=True)
    writing_reject(writing=writing, reason="Copied from a website")
    stored = Writing.objects.get(pk=writing.pk)
    assert stored.status == "rejected" and stored.text == GOOD_TEXT
    assert not Completion.objects.filter(pk=completion.pk).exists()
    assert writing_next(writer=other) is not None  # the place is back in the pool
    assert writing_next(writer=writer) is None  # but never for the same writer


def test_a_writer_cap_and_a_paused_study_stop_new_claims():
    study = build_writing_study(n_contexts=3, contexts_per_writer=1)
    writer = writer_enter(study=study)
    _write(writer)
    assert writing_next(writer=writer) is None
    study.status = "paused"
    study.save()
    assert writing_next(writer=writer_enter(study=study)) is None


@pytest.mark.parametrize(
    ("status", "writes"), [("draft", True), ("open", True), ("paused", False), ("closed", False)]
)
def test_writers_write_while_a_study_is_set_up_and_while_it_is_open(status, writes):
    """Writers' texts are material: they are written before the pairs (a draft study) too."""
    study = build_writing_study(n_contexts=2)
    study.status = status
    study.save()
    assert (writing_next(writer=writer_enter(study=study)) is not None) is writes
