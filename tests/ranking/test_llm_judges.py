"""Position swaps of LLM judges, by hand-computed examples (no Django)."""

from __future__ import annotations

import math

import pandas as pd

from ranking.llm_judges import consistent_games, leave_one_judge_out, position_stats

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


def test_leave_one_judge_out_runs_the_full_ensemble_then_each_judge_removed():
    seen = []

    def agreement(frame):
        seen.append(sorted(frame["judge"].unique()))
        return 0.5, len(frame)

    rows = leave_one_judge_out(_frame(ROWS), agreement=agreement, elo=lambda f: {"n": len(f)})
    assert [r["left_out"] for r in rows] == [None, "c", "g"]
    assert seen == [["c", "g", "r1"], ["g", "r1"], ["c", "r1"]]
    assert [r["elo"]["n"] for r in rows] == [5, 4, 1]


def test_a_single_llm_judge_has_no_subsampling():
    one = _frame([r for r in ROWS if r[1] != "c"])
    assert leave_one_judge_out(one, agreement=lambda f: (1.0, 1), elo=lambda f: {}) == []
