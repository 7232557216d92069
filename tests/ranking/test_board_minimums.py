"""Rows that agree with their data: the stated minimums, too-few rows and cells, one n per
row, ties per source, the combined board and the board a study opens on."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from ranking import board, bradley_terry, categories, coverage, verdicts
from ranking.limits import MIN_COMPARISONS, MIN_SOURCE_JUDGMENTS

SYSTEMS = pd.DataFrame(
    {
        "kind": ["model"] * 4,
        "family": ["gpt"] * 4,
        "ttft_ms": [None] * 4,
        "external_score": [None] * 4,
    },
    index=pd.Index(["big-1", "big-2", "big-3", "rare"], name="system"),
)
COMPLETIONS = pd.DataFrame(
    columns=["completion", "system", "family", "kind", "ttft_ms", "strategies", "context"]
)


def _judgments(rows: list[tuple[str, str, str, str]], seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rows, columns=["system_a", "system_b", "winner", "judge_kind"])
    n = len(frame)
    human = frame["judge_kind"] == "human"
    return frame.assign(
        id=np.arange(n),
        item=np.arange(n) // 3,
        context=np.arange(n) // 6,
        cluster=np.arange(n) // 12,
        judge=[f"j{i % 7}" for i in range(n)],
        strength=np.where(frame["winner"] == "tie", np.nan, rng.integers(1, 3, n)),
        strength_max=np.where(human, 2.0, 5.0),
        shown_left=rng.choice(["a", "b"], n),
        adversarial=False,
    )


def _study(human: int = 300, llm: int = 0, rare: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for kind, count in (("human", human), ("llm", llm)):
        for _ in range(count):
            a, b = rng.choice(["big-1", "big-2", "big-3"], 2, replace=False)
            rows.append((a, b, rng.choice(["a", "b", "tie"], p=[0.45, 0.4, 0.15]), kind))
    rows += [("rare", "big-1", "b", "human")] * rare  # always lost, and too few besides
    return _judgments(rows)


def _board(judgments: pd.DataFrame, judges: str = "human", **overrides) -> dict:
    params = board.params_resolve(
        overrides.pop("preset", "default"), **{"ci": "sandwich", **overrides}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bradley_terry.BradleyTerryWarning)
        return board.board(
            judgments,
            systems=SYSTEMS,
            completions=COMPLETIONS,
            params=params,
            rule=verdicts.VerdictRule(),
            judges=judges,
        )


def test_a_row_below_the_minimum_shows_its_count_and_no_number():
    result = _board(_study())
    rows = {row["system"]: row for row in result["systems"]}
    rare = rows["rare"]
    assert rare["too_few"] is True and rare["n"] == 5
    assert all(rare[k] is None for k in ("elo", "ci_low", "ci_high", "rank_low", "rank_high"))
    assert "fewer than the 20" in rare["too_few_reason"]
    assert result["systems"][-1]["system"] == "rare"  # after the rows the data can place
    assert all(not rows[s]["too_few"] and rows[s]["elo"] is not None for s in ("big-1", "big-2"))
    assert result["interval"]["min_comparisons"] == MIN_COMPARISONS == 20


def test_a_row_only_the_prior_holds_is_too_few_however_many_comparisons():
    result = _board(_study(rare=30))  # 30 losses in 30: no finite estimate
    rare = next(row for row in result["systems"] if row["system"] == "rare")
    assert rare["too_few"] and rare["elo"] is None
    assert "always lost" in rare["too_few_reason"]
    # Fitted anyway it would read as a number thousands of Elo down: the prior's, not the data's.
    table = bradley_terry.fit(
        board.comparisons_from_judgments(_study(rare=30), weights="normalized"), ci="fisher"
    )
    assert table.loc["rare", "elo"] < 500


def test_a_rows_n_and_win_rate_rest_on_the_same_comparisons_with_ties_left_out():
    judgments = _study()
    paper = _board(judgments, preset="paper", ci="paper", ties="drop", weights="raw")
    row = next(r for r in paper["systems"] if r["system"] == "big-1")
    counted = judgments[(judgments["winner"] != "tie")]
    mine = counted[(counted["system_a"] == "big-1") | (counted["system_b"] == "big-1")]
    won = ((mine["system_a"] == "big-1") & (mine["winner"] == "a")) | (
        (mine["system_b"] == "big-1") & (mine["winner"] == "b")
    )
    assert row["n"] == len(mine)
    assert row["win_rate"] == pytest.approx(won.mean(), abs=1e-4)
    human_ties = int((judgments["winner"] == "tie").sum())
    assert paper["ties"]["human"] == {
        "ties": human_ties,
        "of": len(judgments),
        "what": "left out of the fit",
    }


def test_the_combined_board_needs_the_minimum_from_each_source():
    few_llm = _study(human=300, llm=MIN_SOURCE_JUDGMENTS - 1)
    result = _board(few_llm, judges="all")
    assert result["too_few"] is True
    assert all(row["too_few"] and row["elo"] is None for row in result["systems"])
    assert "too few judgments for a combined board" in result["warnings"][0]
    assert result["counts"]["llm"] == MIN_SOURCE_JUDGMENTS - 1
    enough = _board(_study(human=300, llm=MIN_SOURCE_JUDGMENTS), judges="all")
    assert enough["too_few"] is False
    weights = enough["counts"]["weights"]
    assert weights["scheme"] == "by_source"
    assert weights["human_share"] == pytest.approx(0.5, abs=1e-3)
    # 305 human judgments share half the weight with 50 LLM verdicts: one LLM verdict weighs
    # about six human ones, and the header says so.
    assert weights["human_verdict_vs_llm_verdict"] == pytest.approx(50 / 305, abs=0.01)
    assert "weighed by source" in enough["counts"]["label"]


def test_a_category_with_too_few_judgments_shows_no_prior_held_number():
    judgments = _study()
    # The last context's verdicts alone are a category of one pair: nothing can be ranked.
    values = {
        c: ("tiny" if c == judgments["context"].max() else "large") for c in judgments["context"]
    }
    params = board.params_resolve("default")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bradley_terry.BradleyTerryWarning)
        section = categories.category_boards(
            judgments,
            categories=values,
            systems=SYSTEMS,
            completions=COMPLETIONS,
            params=params,
            rule=verdicts.VerdictRule(),
            judges="human",
        )
    tiny = section["by"]["tiny"]
    assert tiny["too_few"] is True
    assert all(row["elo"] is None and row["ci_low"] is None for row in tiny["systems"])
    assert section["by"]["large"]["interval"]["method"] == "sandwich"
    assert section["by"]["large"]["interval"]["level"] == 95
    for cell in section["by"].values():
        for row in cell["systems"]:
            assert row["too_few"] or abs(row["elo"] - 1500) < 1000


def test_the_combined_counts_say_which_judges_a_human_board_counts():
    result = _board(_study(human=300, llm=100), judges="human")
    assert result["counts"]["human"] == 305 and result["counts"]["judges"] == "human"
    assert result["counts"]["label"].startswith("305 human judgments")


def test_formula_coverage_is_measured_on_the_boards_design():
    design = coverage.paper_design(systems=6, conversations=60, seed=2)
    theta = coverage.spread_strengths(sorted(set(design["system_a"])), 270)
    simulated = coverage.simulate(design, theta, np.random.default_rng(0))
    measured = coverage.formula_coverage(simulated, theta, ci="sandwich", replicates=50)
    assert measured.intervals == 50 * 6
    assert coverage.acceptable(measured.rate)
