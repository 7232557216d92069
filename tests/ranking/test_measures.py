"""The refit stores the rater, judge and study measures in its snapshots; the three commands
print them in the contract's shape; the study's rater weights change the board."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from ranking import measures, services
from ranking.models import LeaderboardSnapshot
from tests.factories.cohorts import build_cohort_study

pytestmark = pytest.mark.django_db

RATER_FIELDS = {"rater", "cohort", "n", "reliability", "position_bias", "outlier"}
JUDGE_FIELDS = {
    "judge", "kind", "n", "agreement", "agreement_ci_low", "agreement_ci_high",
    "agreement_no_ties", "first_shown_rate", "flip_rate", "prefer_longer",
    "humans_prefer_longer", "self_family_rate", "ece", "brier", "cost_per_1000",
    "seconds_per_1000",
}  # fmt: skip
QUALITY_FIELDS = {
    "separability", "agreement_with_confidence", "pair_rank_brier", "split_half",
    "judgments_needed",
}  # fmt: skip


@pytest.fixture
def study():
    return build_cohort_study(slug="measured", items=40)


def _json(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def test_a_refit_stores_the_three_sections_in_every_board(study):
    snapshots = services.snapshot_refit_study(study_id=study.pk, trigger="manual")
    assert {s.judges for s in snapshots} == {"human", "llm", "all"}
    for snapshot in LeaderboardSnapshot.objects.filter(study=study):
        for key in measures.SECTIONS:
            assert key in snapshot.result
    result = snapshots[0].result
    raters = {row["rater"]: row for row in result["rater_quality"]["raters"]}
    # The flagged clinician who always picks b is measured (and marked excluded), and the
    # model finds it far less reliable than the raters of the synthetic cohorts.
    flagged = raters.pop("r-flagged")
    assert flagged["excluded"] is True
    others = [row["reliability"] for row in raters.values()]
    assert flagged["reliability"] < min(others)
    judges = {row["judge"]: row for row in result["judge_audit"]["judges"]}
    assert judges["judge-gpt"]["kind"] == "llm"
    assert {"clinician", "crowd"} <= set(judges)
    grade = result["study_quality"]
    assert set(grade["separability"]) >= {"human"}
    assert any(row["board"].startswith("cohort:") for row in grade["agreement_with_confidence"])


def test_a_refit_over_unchanged_inputs_keeps_the_stored_sections(study):
    first = services.snapshot_refit_study(study_id=study.pk, trigger="manual")
    again = services.snapshot_refit_study(study_id=study.pk, trigger="manual")
    assert [s.pk for s in first] == [s.pk for s in again]
    assert again[0].result["rater_quality"] == first[0].result["rater_quality"]


def test_the_commands_print_the_contract_fields(study):
    raters = _json("rater_quality", "--study", study.slug)
    assert "model" in raters and raters["raters"]
    assert all(set(row) >= RATER_FIELDS for row in raters["raters"])
    audit = _json("judge_audit", "--study", study.slug)
    assert audit["judges"] and all(set(row) == JUDGE_FIELDS for row in audit["judges"])
    grade = _json("study_quality", "--study", study.slug)
    assert set(grade) >= QUALITY_FIELDS
    assert grade["judgments_needed"]["target"] == study.target_separability


def test_the_commands_print_readable_tables(study):
    for command in ("rater_quality", "judge_audit", "study_quality"):
        out = io.StringIO()
        call_command(command, "--study", study.slug, stdout=out)
        assert study.slug in out.getvalue()


def test_rater_weights_leave_out_the_outliers_verdicts(study):
    data = services.study_data_load(study)
    data.rater_quality = measures.rater_quality_frame(study)
    judgments = data.select(judges="human")
    flagged = data.rater_quality.index[data.rater_quality["outlier"]]
    kept = measures.weighted_judgments(judgments, data=data, study=study, mode="no-outliers")
    assert len(kept) == len(judgments) - judgments["judge"].isin(flagged).sum()
    weighted = measures.weighted_judgments(judgments, data=data, study=study, mode="reliability")
    expected = judgments["judge"].astype(str).map(data.rater_quality["reliability"])
    assert weighted["rater_weight"].tolist() == pytest.approx(expected.tolist())
    board = services.leaderboard_compute(
        study, judges="human", rater_weights="reliability", ci="fisher"
    )
    plain = services.leaderboard_compute(study, judges="human", ci="fisher")
    assert board["params"]["rater_weights"] == "reliability"
    assert [r["elo"] for r in board["systems"]] != [r["elo"] for r in plain["systems"]]


def test_the_study_setting_weighs_the_board_and_marks_it_stale(study):
    before = services.leaderboard_current(study, judges="human")
    study.rater_weights = "reliability"
    study.save(update_fields=["rater_weights"])
    after = services.leaderboard_current(study, judges="human")
    assert after["params"]["rater_weights"] == "reliability"
    assert after["snapshot"]["id"] != before["snapshot"]["id"]


def test_a_refit_reads_the_judgments_once_for_every_section(study, postgres):
    """The boards, the raters' quality (excluded raters included), the cohorts and the reply
    lengths all come from one read of the judgments table: the same as reading each."""
    import pandas as pd
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ranking import selectors

    with CaptureQueriesContext(connection) as queries:
        data = services.study_data_load(study)
    reads = [q["sql"] for q in queries if q["sql"].startswith("COPY")]
    assert len(reads) == 2, reads  # the judgments, then their pairs
    assert ['FROM "annotation_judgment"' in sql for sql in reads] == [True, False]
    # The raters' quality from the loaded verdicts equals the one that reads them itself.
    from_load = measures.rater_quality_frame(study, data=data)
    assert "r-flagged" in from_load.index  # excluded from the boards, measured here
    assert not data.raw["judge"].astype(str).eq("r-flagged").any()
    pd.testing.assert_frame_equal(from_load, measures.rater_quality_frame(study))
    # Each judgment's cohort from the frame equals the per-id lookup.
    cohorts = measures.judgment_cohorts(study, data.raw)
    looked_up = measures.judgment_cohorts(study, data.raw.drop(columns="cohort"))
    assert cohorts.astype(object).where(cohorts.notna(), None).tolist() == (
        looked_up.astype(object).where(looked_up.notna(), None).tolist()
    )
    assert cohorts.notna().any()
    # Reply lengths per pair from the completions equal those counted from the pairs' texts.
    lengths = measures.item_lengths(data.raw, selectors.completion_words(study))
    texts = measures.reply_lengths(selectors.pair_texts_frame(study)).reindex(lengths.index)
    pd.testing.assert_frame_equal(lengths, texts, check_names=False)
