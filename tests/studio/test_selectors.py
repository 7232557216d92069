"""The hub's checklist: live counts and the next step, in the order a study is set up."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotation.models import Pair, Rater
from studio.selectors import checklist_rows, next_step_row, study_checklist
from tests.factories import (
    DialogueContextFactory,
    JudgmentFactory,
    RaterFactory,
    RunFactory,
    StudyFactory,
)
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db


def _by_key(study):
    return {row.key: row for row in study_checklist(study=study)}


def test_an_empty_study_starts_with_its_material():
    study = StudyFactory(slug="empty", name="Empty", status="draft")
    rows = study_checklist(study=study)
    assert next_step_row(rows).key == "contexts"
    DialogueContextFactory(study=study, external_id="c1", turns=[], bare=True)
    assert next_step_row(study_checklist(study=study)).key == "systems"


def test_an_empty_studys_raters_are_never_done_and_it_opens_only_with_pairs():
    study = StudyFactory(slug="empty", name="Empty", status="draft")
    assert study.status == "draft"  # new studies start as drafts
    # A rater who followed the link of the empty study was told to return it: finished.
    RaterFactory(study=study, pseudonym="r-gone", finished_at=timezone.now(), consented_at=None)
    rows = _by_key(study)
    assert not rows["raters"].done and rows["raters"].count == 0
    assert not rows["open"].done and rows["open"].detail.startswith("draft")
    assert rows["open"].next_step == "Open the study (once it has pairs)"


def test_counts_follow_pairs_raters_and_judgments():
    study = build_study(n_contexts=2, quota=1, writers_per_context=1)
    RaterFactory(study=study, pseudonym="r-a", consented_at=timezone.now())
    RaterFactory(
        study=study, pseudonym="r-b", consented_at=timezone.now(), finished_at=timezone.now()
    )
    RaterFactory(study=study, pseudonym="r-c", flagged=True, consented_at=None)
    rows = _by_key(study)
    assert (rows["contexts"].count, rows["systems"].count, rows["completions"].count) == (2, 3, 6)
    assert rows["human_completions"].count == 2 and rows["human_completions"].target == 2
    assert rows["pairs"].count == 6 and rows["pairs"].detail == "0 complete"
    assert rows["open"].done and rows["open"].detail == "open"
    # r-b finished without judging anything: the study has not been judged by anyone yet.
    assert rows["raters"].count == 0 and not rows["raters"].done
    assert rows["raters"].detail == ("finished; 1 active, 1 finished in all, 1 flagged or excluded")
    assert (rows["judgments"].count, rows["judgments"].target) == (0, 6)
    assert next_step_row(list(rows.values())).key == "raters"
    pair = Pair.objects.filter(study=study).first()
    JudgmentFactory(pair=pair, rater=Rater.objects.get(pseudonym="r-b"), judge="r-b")
    rows = _by_key(study)
    assert rows["raters"].count == 1 and rows["raters"].done
    assert next_step_row(list(rows.values())).key == "judgments"
    Pair.objects.filter(study=study).update(n_judgments=1)
    rows = study_checklist(study=study)
    assert next_step_row(rows) is None  # every pair full: nothing left to set up
    assert [r.key for r in checklist_rows(rows, "pairs", "contexts")] == ["contexts", "pairs"]


def test_llm_runs_and_writers_have_rows_of_their_own():

    study = build_study(n_contexts=2, quota=1, writers_per_context=1)
    RunFactory(study=study, kind="judge", status="finished")
    RunFactory(study=study, kind="generate", status="running")
    rows = _by_key(study)
    assert rows["llm_runs"].count == 1 and rows["llm_runs"].optional
    assert rows["llm_runs"].detail == "finished; 1 running, 2 in all"
    assert rows["human_completions"].detail == (
        "accepted; 0 awaiting review, 0 rejected, 0 flagged"
    )


def test_writers_awaiting_review_are_counted_apart_from_the_systems():
    from tests.factories import CompletionFactory, WriterFactory, WritingFactory

    study = build_study(n_contexts=1)  # two model systems and one human system with replies
    context = study.contexts.get()
    accepted = WriterFactory(study=study)
    CompletionFactory(context=context, system=accepted.system, text="An accepted reply.")
    for _ in range(6):
        WritingFactory(writer=WriterFactory(study=study), status="pending", text="Waiting.")
    WriterFactory(study=study)  # consented, wrote nothing yet: neither
    row = _by_key(study)["systems"]
    assert row.count == 4 and row.detail == "+6 writers awaiting review"
