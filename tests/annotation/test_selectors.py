"""The round trip's hand-written rows (annotation/selectors.py, services/common.py) equal what
the ORM reads and writes. They lean on Django internals (docs/internals/django-upgrades.md):
these tests are the gate a Django upgrade must pass."""

from __future__ import annotations

import pytest
from django.db.models import Model
from django.utils import timezone

from annotation.models import Assignment, Judgment, Rater
from annotation.selectors import hot_cursor, model_from_row, sql_columns
from annotation.services.common import model_insert
from completions.models import Study
from tests.factories import AssignmentFactory, JudgmentFactory, RaterFactory

pytestmark = pytest.mark.django_db


def _fields(obj: Model) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def _row(model: type[Model], pk: int) -> list:
    table = model._meta.db_table
    with hot_cursor() as cursor:
        cursor.execute(f"SELECT {sql_columns(model, 't')} FROM {table} t WHERE t.id = %s", [pk])
        return list(cursor.fetchone())


@pytest.mark.parametrize("model", [Assignment, Rater, Study])
def test_a_row_read_by_hand_is_the_instance_the_orm_reads(model):
    assignment = AssignmentFactory()
    obj = {Assignment: assignment, Rater: assignment.rater, Study: assignment.rater.study}[model]
    from_orm = model.objects.get(pk=obj.pk)
    from_row = model_from_row(model, _row(model, obj.pk))
    assert _fields(from_row) == _fields(from_orm)
    assert not from_row._state.adding and from_row._state.db == from_orm._state.db


def test_a_row_inserted_by_hand_is_the_row_the_orm_would_save():
    pair = JudgmentFactory().pair
    by_hand = Judgment(
        study=pair.study,
        pair=pair,
        judge_kind="human",
        rater=RaterFactory(study=pair.study),
        judge="judge-by-hand",
        winner="b",
        strength=2,
        strength_max=2,
        axes={"H": {"winner": "b", "strength": 1}},
        rationale="Warmer — and it asks.",
        duration_ms=12000,
        submitted_at=timezone.now(),
    )
    model_insert(by_hand)
    assert by_hand.pk is not None and not by_hand._state.adding
    assert _fields(Judgment.objects.get(pk=by_hand.pk)) == _fields(by_hand)
