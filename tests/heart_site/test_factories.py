"""Every test-data factory makes a row the database accepts, with its relations consistent."""

from __future__ import annotations

import pytest

from tests import factories

pytestmark = pytest.mark.django_db

FACTORIES = [
    factories.StudyFactory,
    factories.DialogueContextFactory,
    factories.SystemFactory,
    factories.CompletionFactory,
    factories.PairFactory,
    factories.RaterFactory,
    factories.QualityCheckItemFactory,
    factories.JudgmentFactory,
    factories.AssignmentFactory,
    factories.WriterFactory,
    factories.WritingFactory,
    factories.EndpointFactory,
    factories.RunFactory,
    factories.UnitFactory,
    factories.ImportJobFactory,
    factories.RefitJobFactory,
    factories.DesignStatusFactory,
    factories.CareSettingsFactory,
    factories.ContentNoteFactory,
    factories.QualificationItemFactory,
]


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_a_factory_makes_a_valid_row_twice(factory):
    first, second = factory(), factory()
    assert first.pk and second.pk and first.pk != second.pk


def test_related_rows_share_one_study():
    pair = factories.PairFactory()
    assert pair.completion_a.pk < pair.completion_b.pk
    assert pair.completion_a.system.study_id == pair.study_id == pair.context.study_id
    assignment = factories.AssignmentFactory()
    assert assignment.pair.study_id == assignment.rater.study_id
    check = factories.QualityCheckItemFactory()
    on_check = factories.JudgmentFactory(quality_item=check)
    assert on_check.pair is None and on_check.study_id == check.study_id
    leased_check = factories.AssignmentFactory(quality_item=check, rater__study=check.study)
    assert leased_check.pair is None
    writing = factories.WritingFactory()
    assert writing.context.study_id == writing.study_id == writing.writer.system.study_id


def test_release_hold_on_a_completion():
    completion = factories.CompletionFactory()
    hold = factories.ReleaseHoldFactory(study=completion.system.study, completion=completion)
    assert hold.decision == "pending"
