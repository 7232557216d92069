"""core.bulk: new rows by one binary COPY (PostgreSQL) or bulk_create, with their keys."""

from __future__ import annotations

import pytest
from django.db import connection

from annotation.models import Pair
from completions.models import Completion
from core import bulk
from core.bulk import copy_insert, copy_rows, new_ids
from tests.factories import DialogueContextFactory, StudyFactory, SystemFactory

pytestmark = pytest.mark.django_db


def _completions(n: int) -> tuple[int, list[int]]:
    study = StudyFactory()
    context = DialogueContextFactory(study=study)
    systems = [SystemFactory(study=study, name=f"s{i}") for i in range(n)]
    rows = [
        (context.pk, s.pk, f"reply {i}", False, {"source": "test", "i": i})
        for i, s in enumerate(systems)
    ]
    ids = copy_insert(
        Completion, ["context_id", "system_id", "text", "text_unknown", "provenance"], rows
    )
    return study.pk, ids


def test_rows_get_their_keys_in_order_and_every_other_column_its_default():
    _, ids = _completions(3)
    assert len(set(ids)) == 3
    stored = {c.pk: c for c in Completion.objects.filter(pk__in=ids)}
    for i, pk in enumerate(ids):
        completion = stored[pk]
        assert completion.text == f"reply {i}" and completion.provenance == {
            "source": "test",
            "i": i,
        }
        assert completion.metadata == {} and completion.writer_id is None
        assert completion.created_at is not None and completion.ttft_ms is None


def test_a_callable_default_is_called_for_each_row():
    study_pk, ids = _completions(3)
    context = Completion.objects.get(pk=ids[0]).context_id
    pairs = copy_insert(
        Pair,
        ["study_id", "context_id", "completion_a_id", "completion_b_id", "quota"],
        [(study_pk, context, ids[0], ids[1], 3), (study_pk, context, ids[1], ids[2], 4)],
    )
    stored = list(Pair.objects.filter(pk__in=pairs).order_by("pk"))
    assert [p.quota for p in stored] == [3, 4] and [p.pk for p in stored] == sorted(pairs)
    assert len({p.token for p in stored}) == 2 and all(len(p.token) > 20 for p in stored)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="keys from the sequence: PostgreSQL")
def test_keys_taken_first_are_the_ones_the_rows_are_written_with_and_no_later_insert_reuses_them():
    study_pk, ids = _completions(3)
    context = Completion.objects.get(pk=ids[0]).context_id
    (reserved,) = new_ids(Pair, 1)
    copy_rows(
        Pair,
        ["id", "study_id", "context_id", "completion_a_id", "completion_b_id", "n_judgments"],
        [(reserved, study_pk, context, ids[0], ids[1], 2)],
    )
    assert Pair.objects.get(pk=reserved).n_judgments == 2
    later = Pair.objects.create(
        study_id=study_pk, context_id=context, completion_a_id=ids[1], completion_b_id=ids[2]
    )
    assert later.pk > reserved


def _planned_rows(model) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [model._meta.db_table])
        return cursor.fetchone()[0]


def test_a_large_write_refreshes_the_planners_statistics_once_committed(
    postgres, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(bulk, "ANALYZE_AFTER", 4)
    _completions(5)
    stored = Completion.objects.count()
    assert _planned_rows(Completion) != stored  # the planner does not know them yet
    with django_capture_on_commit_callbacks(execute=False) as small:
        bulk.statistics_refresh([Completion, Pair], 3)
    assert small == []  # a small write leaves the statistics to autovacuum
    with django_capture_on_commit_callbacks(execute=True) as large:
        bulk.statistics_refresh([Completion, Pair], 5)
    assert len(large) == 1
    assert _planned_rows(Completion) == stored


def test_a_large_judgments_import_refreshes_the_statistics(monkeypatch, tmp_path, postgres):
    import json

    from annotation.judgment_io import judgments_import

    monkeypatch.setattr(bulk, "ANALYZE_AFTER", 2)
    refreshed = []
    monkeypatch.setattr(bulk.transaction, "on_commit", lambda fn: refreshed.append(fn))
    study = StudyFactory()
    DialogueContextFactory(study=study, external_id="c1")
    lines = [
        {"context_id": "c1", "system_a": "x", "system_b": "y", "text_a": "one", "text_b": "two",
         "judge": f"j{i}", "judge_kind": "human", "winner": "a"}
        for i in range(3)
    ]  # fmt: skip
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert judgments_import(study=study, path=path).created == 3
    assert len(refreshed) == 1
