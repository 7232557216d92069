"""The style-controlled board on a real study: the demo's exported judgments, fitted again
independently (sklearn) from the exported texts, give the same controlled Elo."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from annotation.judgment_export import judgments_export
from ranking import services
from studio.demo import load_demo
from tests.ranking.test_style import independent_elo

pytestmark = pytest.mark.django_db

PARAMS = {"ci": "fisher", "weights": "none", "ties": "half", "combined": "by_count"}


def _words(text: str) -> int:
    return len(text.split())


@pytest.fixture
def demo():
    study = load_demo()
    study.style_features = ["length", "questions"]
    study.save(update_fields=["style_features"])
    return study


def exported(study, tmp_path) -> pd.DataFrame:
    path = tmp_path / "judgments.jsonl"
    judgments_export(study=study, fmt="jsonl", path=path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    frame = pd.DataFrame(rows)
    return frame[~frame["quality_check"] & ~frame["excluded"]].reset_index(drop=True)


def test_the_controlled_board_equals_an_independent_fit_of_the_exported_judgments(demo, tmp_path):
    result = services.leaderboard_compute(demo, judges="all", **PARAMS)
    frame = exported(demo, tmp_path)
    x = []
    for feature in (_words, lambda t: t.count("?")):
        fa = frame["completion_a"].map(feature).to_numpy(dtype=float)
        fb = frame["completion_b"].map(feature).to_numpy(dtype=float)
        total = fa + fb
        diff = np.divide(fa - fb, total, out=np.zeros_like(total), where=total != 0)
        x.append(diff / np.sqrt(np.mean(diff**2)))
    systems = pd.Index(sorted(set(frame["system_a"]) | set(frame["system_b"])))
    reference, coefficients = independent_elo(frame, np.column_stack(x), systems)
    controlled = {row["system"]: row["elo"] for row in result["style_control"]["systems"]}
    assert set(controlled) == set(systems)
    assert max(abs(controlled[s] - reference[s]) for s in systems) < 0.5
    assert result["style"]["length"]["coef"] == pytest.approx(coefficients[0], abs=1e-3)
    assert result["style"]["questions"]["coef"] == pytest.approx(coefficients[1], abs=1e-3)
    assert result["style"]["length"]["ci_low"] < result["style"]["length"]["ci_high"]


def test_without_style_features_no_style_board_is_fitted(demo):
    demo.style_features = []
    demo.save(update_fields=["style_features"])
    result = services.leaderboard_compute(demo, judges="all", ci="fisher")
    assert "style_control" not in result and "style" not in result


def test_the_judges_section_audits_each_llm_judges_length_bias_against_humans(demo):
    result = services.leaderboard_compute(demo, judges="all", ci="fisher")
    audit = result["llm_judges"]["length_audit"]
    assert audit["humans"]["n"] > 0
    judges = {row["judge"]: row for row in audit["judges"]}
    assert set(judges) == {"demo-judge-g", "demo-judge-c"}
    row = judges["demo-judge-g"]
    assert row["diff"] == pytest.approx(row["coef"] - audit["humans"]["coef"], abs=1e-3)
    assert row["diff_ci_low"] < row["diff"] < row["diff_ci_high"]
    assert row["reading"]


def test_the_command_prints_both_boards_side_by_side(demo, capsys):
    call_command("leaderboard", study=demo.slug, style="length", ci="fisher", format="json")
    result = json.loads(capsys.readouterr().out)
    assert set(result["style"]) == {"length"}
    first = result["systems"][0]
    assert {"elo", "ci_low", "ci_high"} <= set(first["uncontrolled"])
    assert result["style_control"]["features"] == ["length"]
    call_command("leaderboard", study=demo.slug, style="length,questions", ci="fisher")
    table = capsys.readouterr().out
    assert "Style-controlled" in table and "questions" in table
