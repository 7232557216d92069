"""Position swaps of LLM judges, by hand-computed examples (no Django)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ranking.llm_judges import leave_one_judge_out, position_stats
from ranking.verdicts import consistent_games

COLUMNS = ["item", "judge", "judge_kind", "winner", "shown_left", "strength", "axis_H"]


def _frame(rows):
    return pd.DataFrame(rows, columns=COLUMNS)


ROWS = [
    # judge g: pair 1 consistent (a twice), pair 2 inconsistent (first shown wins both times)
    (1, "g", "llm", "a", "a", 4, "a"),
    (1, "g", "llm", "a", "b", 2, "a"),
    (2, "g", "llm", "a", "a", 3, "a"),
    (2, "g", "llm", "b", "b", 3, "b"),
    # judge c: pair 1 only in one order (its twin failed)
    (1, "c", "llm", "b", "a", 5, None),
    # a human judgment passes through untouched
    (1, "r1", "human", "a", "b", 1, None),
]


def test_consistent_games_keep_agreeing_pairs_and_make_disagreements_ties():
    games = consistent_games(_frame(ROWS))
    g = games[games["judge"] == "g"].set_index("item")
    assert len(g) == 2
    assert g.loc[1, "winner"] == "a" and g.loc[1, "strength"] == 2  # the smaller strength
    assert g.loc[2, "winner"] == "tie" and math.isnan(g.loc[2, "strength"])
    assert pd.isna(g.loc[2, "axis_H"])  # the axis verdicts disagreed too
    assert games[games["judge"] == "c"]["winner"].tolist() == ["b"]
    assert games[games["judge"] == "r1"]["winner"].tolist() == ["a"]
    assert len(games) == 4


def test_position_stats_per_judge():
    stats = position_stats(_frame(ROWS))
    assert list(stats.index) == ["c", "g"]
    g = stats.loc["g"]
    assert g["verdicts"] == 4 and g["pairs_both_orders"] == 2 and g["consistent_pairs"] == 1
    assert g["consistency"] == 0.5
    # verdicts choosing the reply shown first: rows 1, 3, 4 of judge g
    assert g["first_position_wins"] == 3 and g["first_position_win_rate"] == 0.75
    c = stats.loc["c"]
    assert c["pairs_both_orders"] == 0 and math.isnan(c["consistency"])
    assert c["first_position_win_rate"] == 0.0


def _judged(seed: int = 0) -> pd.DataFrame:
    """Three systems, humans (2-3 verdicts a pair) and three LLM judges in both orders."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    systems = ["X", "Y", "Z"]
    for item in range(60):
        a, b = rng.choice(systems, 2, replace=False)
        lean = rng.choice(["a", "b", "tie"], p=[0.5, 0.35, 0.15])
        for r in range(rng.integers(2, 4)):
            winner = lean if rng.random() < 0.7 else rng.choice(["a", "b", "tie"])
            rows.append((item, f"r{r}", "human", winner, "a", 1.0, a, b, 2.0))
        for judge in ("g", "c", "m"):
            for shown in "ab":
                winner = lean if rng.random() < 0.6 else rng.choice(["a", "b", "tie"])
                strength = None if winner == "tie" else float(rng.integers(1, 6))
                rows.append((item, judge, "llm", winner, shown, strength, a, b, 5.0))
    columns = ["item", "judge", "judge_kind", "winner", "shown_left", "strength"]
    return pd.DataFrame(rows, columns=[*columns, "system_a", "system_b", "strength_max"])


def test_leave_one_judge_out_matches_refitting_without_each_judge():
    from ranking import agreement, board, bradley_terry

    frame = _judged()
    rows = leave_one_judge_out(frame)
    assert [r["left_out"] for r in rows] == [None, "c", "g", "m"]
    for row in rows:
        kept = frame if row["left_out"] is None else frame[frame["judge"] != row["left_out"]]
        rate = agreement.human_llm_agreement(kept, n_boot=0)
        assert row["n"] == rate.n and row["human_llm_agreement"] == round(rate.rate, 4)
        llm = kept[kept["judge_kind"] == "llm"]
        table = bradley_terry.fit(board.comparisons_from_judgments(llm, weights="normalized"))
        expected = {name: round(float(v), 1) for name, v in table["elo"].items()}
        assert row["elo"] == pytest.approx(expected, abs=0.11)


def test_a_single_llm_judge_has_no_subsampling():
    one = _frame([r for r in ROWS if r[1] != "c"])
    assert leave_one_judge_out(one) == []
