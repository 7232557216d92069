"""Judgment files from other tools (Chatbot Arena, MT-Bench, plain CSV) import and rank right.

The samples in tests/annotation/samples/ follow the public files' shapes: Arena's
clean_battle export, MT-Bench's human judgments and FastChat's gpt-4_pair.jsonl.
"""

from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from annotation.judgment_io import judgments_import
from annotation.models import Judgment
from completions.importers import ImportFileError
from completions.models import Completion, Study
from ranking import bradley_terry
from ranking.services import leaderboard_compute
from tests.factories import StudyFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("few_judgments_shown")]

SAMPLES = Path(__file__).parent / "samples"
WIN = {"model_a": "a", "model_b": "b", "model_1": "a", "model_2": "b"}


def _independent_fit(rows: list[tuple[str, str, str]]) -> dict[str, float]:
    """Elo straight from the file's rows (no database), every verdict weighing 1."""
    frame = pd.DataFrame(rows, columns=["system_a", "system_b", "winner"]).assign(weight=1.0)
    table = bradley_terry.fit(frame, ties="half", ci=None)
    return table["elo"].to_dict()


def _imported_fit(study: Study) -> dict[str, float | None]:
    result = leaderboard_compute(study, judges="all", ci="fisher", weights="none")
    return {row["system"]: row["elo"] for row in result["systems"]}


def _assert_same_ranking(study: Study, rows: list[tuple[str, str, str]]) -> None:
    """Same Elo for every system the data can place; the others (always won or always lost:
    only the fit's prior would hold their Elo) are shown without one, as too few judgments."""
    expected, got = _independent_fit(rows), _imported_fit(study)
    assert set(got) == set(expected)
    frame = pd.DataFrame(rows, columns=["system_a", "system_b", "winner"]).assign(weight=1.0)
    unplaced = set(bradley_terry.unbounded_systems(frame))
    assert {system for system, elo in got.items() if elo is None} == unplaced
    placed = [system for system in expected if system not in unplaced]
    shift = sum(got[s] - expected[s] for s in placed) / len(placed)  # type: ignore[operator]
    for system in placed:
        assert got[system] - shift == pytest.approx(expected[system], abs=0.5), system


def _run(path: Path, fmt: str, slug: str, *extra: str) -> str:
    out = StringIO()
    args = [str(path), "--study", slug, "--create", "--format", fmt, *extra]
    call_command("import_judgments", *args, stdout=out)
    return out.getvalue()


def test_a_chatbot_arena_battle_export_imports_and_ranks_like_an_independent_fit():
    battles = json.loads((SAMPLES / "arena_battles.json").read_text())
    out = _run(SAMPLES / "arena_battles.json", "arena", "arena")
    study = Study.objects.get(slug="arena")
    assert f"created: {len(battles)}" in out
    judgments = Judgment.objects.filter(study=study)
    assert judgments.count() == len(battles)
    # Unix tstamps become times; "tie (bothbad)" is a tie that keeps its original label.
    assert all(j.submitted_at is not None and j.judge_kind == "human" for j in judgments)
    bothbad = [b for b in battles if b["winner"] == "tie (bothbad)"]
    assert judgments.filter(metadata__arena_winner="tie (bothbad)").count() == len(bothbad)
    # Battles without conversations leave placeholders unless another battle gave the text.
    with_text = Completion.objects.filter(context__study=study, text_unknown=False)
    assert with_text.exists() and all("I hear you" in c.text for c in with_text)
    rows = [(b["model_a"], b["model_b"], WIN.get(b["winner"], "tie")) for b in battles]
    _assert_same_ranking(study, rows)
    # Judge ids are pseudonymised like any human judge.
    assert not judgments.filter(judge__startswith="arena_user").exists()


def test_mtbench_human_judgments_import_per_question_and_turn():
    lines = (SAMPLES / "mtbench_human_judgments.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    _run(SAMPLES / "mtbench_human_judgments.jsonl", "mtbench", "mt-human")
    study = Study.objects.get(slug="mt-human")
    contexts = set(study.contexts.values_list("external_id", flat=True))
    assert contexts == {f"mtbench-{r['question_id']}-t{r['turn']}" for r in records}
    # The completion is the assistant reply of that turn.
    turn2 = study.contexts.filter(external_id__endswith="-t2").first()
    assert all("answer 2" in c.text for c in Completion.objects.filter(context=turn2))
    rows = [(r["model_a"], r["model_b"], WIN.get(r["winner"], "tie")) for r in records]
    _assert_same_ranking(study, rows)


def test_mtbench_gpt4_pair_judgments_combine_both_orders_and_skip_errors():
    lines = (SAMPLES / "mtbench_gpt4_pair.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    out = _run(SAMPLES / "mtbench_gpt4_pair.jsonl", "mtbench", "mt-gpt4")
    study = Study.objects.get(slug="mt-gpt4")
    errors = sum("error" in (r["g1_winner"], r["g2_winner"]) for r in records)
    assert errors == 1 and "source rows skipped: 1" in out
    judgments = Judgment.objects.filter(study=study)
    assert judgments.count() == len(records) - errors
    assert set(judgments.values_list("judge", "judge_kind", "judge_family")) == {
        ("gpt-4:pair-v2", "llm", "gpt")
    }
    # Texts are not in this file: placeholders, never served to raters.
    assert not Completion.objects.filter(context__study=study, text_unknown=False).exists()
    kept = [r for r in records if "error" not in (r["g1_winner"], r["g2_winner"])]
    rows = [
        (
            r["model_1"],
            r["model_2"],
            WIN[r["g1_winner"]] if r["g1_winner"] == r["g2_winner"] else "tie",
        )
        for r in kept
    ]
    inconsistent = sum(r["g1_winner"] != r["g2_winner"] for r in kept)
    assert inconsistent >= 1
    _assert_same_ranking(study, rows)


CSV_MAP = "context_id=item,system_a=left_model,system_b=right_model,judge=annotator"


def test_a_plain_csv_imports_with_a_column_mapping():
    path = SAMPLES / "judgments_other_tool.csv"
    _run(
        path, "csv", "csv-study", "--map", CSV_MAP, "--map", "winner=preferred,strength=confidence"
    )
    study = Study.objects.get(slug="csv-study")
    with open(path, newline="") as fh:
        records = list(csv.DictReader(fh))
    judgments = Judgment.objects.filter(study=study)
    assert judgments.count() == len(records)
    # Unmapped columns are kept in metadata; strength 1-2 without a scale is on the human 2.
    assert set(judgments.values_list("strength_max", flat=True)) <= {2, None}
    assert judgments.filter(metadata__notes="ok").count() == len(records) - 1
    rows = [(r["left_model"], r["right_model"], r["preferred"]) for r in records]
    _assert_same_ranking(study, rows)


def test_a_csv_with_a_missing_mapped_column_or_a_bad_cell_is_refused(tmp_path):
    path = SAMPLES / "judgments_other_tool.csv"
    with pytest.raises(CommandError, match="line 1: the CSV has no column 'rater'"):
        _run(path, "csv", "bad", "--map", CSV_MAP.replace("annotator", "rater"))
    bad = tmp_path / "bad.csv"
    bad.write_text("context_id,system_a,system_b,judge,winner\nc1,m1,m2,j1,a\nc1,m1,m2,j2,left\n")
    with pytest.raises(CommandError, match="line 3: 'winner'"):
        _run(bad, "csv", "bad")
    assert not Judgment.objects.exists()


def test_a_malformed_arena_file_is_refused_and_keeps_nothing(tmp_path):
    battles = json.loads((SAMPLES / "arena_battles.json").read_text())
    del battles[2]["model_b"]
    path = tmp_path / "arena.json"
    path.write_text(json.dumps(battles))
    study = StudyFactory()
    with pytest.raises(ImportFileError, match="line 3: 'system_b' is required"):
        judgments_import(study=study, path=path, fmt="arena")
    assert not Judgment.objects.exists()
