"""Existing data through the migrations that add draft studies and keep word limits in one place."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("completions", "0005_text_unknown_index"),
    ("annotation", "0006_i10_submitted_at_unknown"),
    ("writing", "0001_i9_writers"),
]
AFTER = [("completions", "0007_writer_limits_in_one_place"), *BEFORE[1:]]


@pytest.fixture(autouse=True)
def _latest_schema_afterwards():
    """Leave the test database at the latest migrations, whatever a test migrated back to."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_open_studies_without_pairs_become_drafts_and_word_limits_are_kept():
    old = _migrate(BEFORE)
    Study, Pair = old.get_model("completions", "Study"), old.get_model("annotation", "Pair")
    Context = old.get_model("completions", "DialogueContext")
    System = old.get_model("completions", "System")
    Completion = old.get_model("completions", "Completion")
    Study.objects.create(slug="empty", name="Empty", status="open", writer_max_words=45)
    Study.objects.create(slug="paused", name="Paused", status="paused")
    judged = Study.objects.create(slug="judged", name="Judged", status="open")
    context = Context.objects.create(study=judged, external_id="c", turns=[])
    a, b = (System.objects.create(study=judged, name=n) for n in ("a", "b"))
    one = Completion.objects.create(context=context, system=a, text="one")
    two = Completion.objects.create(context=context, system=b, text="two")
    Pair.objects.create(study=judged, context=context, completion_a=one, completion_b=two)

    new = _migrate(AFTER)
    status = dict(new.get_model("completions", "Study").objects.values_list("slug", "status"))
    assert status == {"empty": "draft", "paused": "paused", "judged": "open"}
    settings = new.get_model("writing", "WritingSettings").objects.get(study__slug="empty")
    assert settings.band_max_words == 45  # the study's old "writer max words" is not lost
