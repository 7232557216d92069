"""The invariants the database itself enforces (on PostgreSQL and on the embedded SQLite)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Judgment, Pair
from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    JudgmentFactory,
    PairFactory,
    RaterFactory,
    StudyFactory,
    SystemFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_refuses_a_pair_whose_completions_come_from_different_contexts():
    study = StudyFactory()
    one, other = DialogueContextFactory(study=study), DialogueContextFactory(study=study)
    first = CompletionFactory(context=one)
    stranger = CompletionFactory(context=other)
    with pytest.raises(IntegrityError), transaction.atomic():
        PairFactory(study=study, context=one, completion_a=first, completion_b=stranger)
    assert not Pair.objects.exists()


def test_it_refuses_a_pair_stored_out_of_canonical_order():
    pair = PairFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        PairFactory(
            study=pair.study,
            context=pair.context,
            completion_a=pair.completion_b,
            completion_b=pair.completion_a,
        )


def test_a_rater_judges_a_pair_once():
    judgment = JudgmentFactory(judge="r-same")
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgmentFactory(pair=judgment.pair, judge="r-same", winner="b")
    assert Judgment.objects.count() == 1


def test_a_pair_never_holds_more_than_its_quota():
    pair = PairFactory(quota=2, n_judgments=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Pair.objects.filter(pk=pair.pk).update(n_judgments=3)


def test_a_writer_writes_a_context_once():
    writer = get_user_model().objects.create_user("clinician", password="x" * 12)
    context = DialogueContextFactory()
    CompletionFactory(context=context, writer=writer)
    with pytest.raises(IntegrityError), transaction.atomic():
        CompletionFactory(
            context=context, writer=writer, system=SystemFactory(study=context.study, kind="human")
        )


def test_a_tie_carries_no_strength_and_strength_needs_a_scale():
    pair = PairFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgmentFactory(pair=pair, winner="tie", strength=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgmentFactory(pair=pair, strength=3, strength_max=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgmentFactory(pair=pair, strength=1, strength_max=None)


def test_a_judgment_is_on_a_pair_or_a_quality_check_never_both_nor_neither():
    pair = PairFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgmentFactory(
            study=pair.study,
            judge="x",
            judge_kind="human",
            winner="a",
            submitted_at=timezone.now(),
            pair=None,
            strength=None,
            strength_max=None,
            shown_left="",
        )


def test_the_same_prolific_participant_is_one_rater_per_study():
    rater = RaterFactory(external_id="PROLIFIC123")
    with pytest.raises(IntegrityError), transaction.atomic():
        RaterFactory(study=rater.study, external_id="PROLIFIC123")
    RaterFactory(external_id="PROLIFIC123")  # another study: fine
