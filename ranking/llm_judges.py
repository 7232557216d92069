"""LLM judges seen through their position swaps (paper 9.5, 9.9). Pure pandas: no Django.

Each LLM judge judges a pair twice, once in each order shown. Rows are judgments in canonical
orientation with at least the columns ``item`` (the pair), ``judge``, ``judge_kind``,
``winner`` ("a"|"b"|"tie"), ``shown_left`` ("a"|"b"|None), ``strength``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

SWAP_KEYS = ["judge", "item"]


def _llm(judgments: pd.DataFrame) -> pd.Series:
    return judgments["judge_kind"] == "llm"


COLUMNS = [
    "judge",
    "verdicts",
    "pairs_both_orders",
    "consistent_pairs",
    "consistency",
    "first_position_wins",
    "first_position_win_rate",
]


def position_stats(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per LLM judge: verdicts, pairs judged in both orders, position consistency (share of
    those pairs whose two verdicts name the same winner) and first-position win rate (share
    of verdicts with a known order that chose the reply shown first; 0.5 = no position bias).
    Only verdicts naming a winner (a or b) with a known order enter the last four."""
    llm = judgments[_llm(judgments)]
    if llm.empty:
        return pd.DataFrame(columns=COLUMNS).set_index("judge")
    # Plain labels: results indexed by a categorical judge would carry every rater's name.
    llm = llm.assign(judge=llm["judge"].astype(object))
    shown = llm[llm["shown_left"].isin(["a", "b"]) & llm["winner"].isin(["a", "b"])]
    first = (shown["winner"] == shown["shown_left"]).groupby(shown["judge"]).agg(["sum", "size"])
    per_pair = shown.groupby(SWAP_KEYS).agg(
        orders=("shown_left", "nunique"), winners=("winner", "nunique")
    )
    both = per_pair[per_pair["orders"] == 2]
    pairs = (both["winners"] == 1).groupby(level="judge").agg(["sum", "size"])
    frame = pd.DataFrame({"verdicts": llm.groupby("judge").size()})
    frame["pairs_both_orders"] = pairs["size"].reindex(frame.index, fill_value=0)
    frame["consistent_pairs"] = pairs["sum"].reindex(frame.index, fill_value=0)
    frame["first_position_wins"] = first["sum"].reindex(frame.index, fill_value=0)
    shown_n = first["size"].reindex(frame.index, fill_value=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        frame["consistency"] = np.where(
            frame["pairs_both_orders"] > 0,
            frame["consistent_pairs"] / frame["pairs_both_orders"],
            np.nan,
        )
        frame["first_position_win_rate"] = np.where(
            shown_n > 0, frame["first_position_wins"] / shown_n, np.nan
        )
    frame = frame.astype(
        {
            c: int
            for c in ("verdicts", "pairs_both_orders", "consistent_pairs", "first_position_wins")
        }
    )
    frame.index.name = "judge"
    return frame.sort_index()[COLUMNS[1:]]


def leave_one_judge_out(judgments: pd.DataFrame, *, min_human: int = 2) -> list[dict[str, Any]]:
    """Stability under judge subsampling (paper 9.9): with each LLM judge left out in turn,
    the human–LLM agreement (as :func:`ranking.agreement.human_llm_agreement`: strict
    majorities, at least ``min_human`` human verdicts, every LLM verdict a vote) and the
    LLM-only Elo table (normalised weights, ties half, point estimates). The first row
    ("none") is the full ensemble. Every count is made once and each judge's share taken off,
    so the cost does not grow with judges times verdicts."""
    from . import agreement

    votes = agreement._verdicts(judgments, "llm")
    judges = sorted(pd.unique(votes["judge"].astype(object)), key=str)
    if len(judges) <= 1:
        return []
    humans = agreement.majority(judgments, "human", min_verdicts=min_human).dropna()
    items = pd.Index(sorted(set(votes["item"]) & set(humans.index)), name="item")
    counts = _vote_counts(votes[votes["item"].isin(items)], items, judges)
    human = humans.reindex(items).astype(object).to_numpy()
    elo = _elo_without(judgments[_llm(judgments)], judges)
    rows = []
    for position, left_out in enumerate([None, *judges]):
        kept = counts.sum(axis=0) - (counts[position - 1] if left_out is not None else 0)
        rows.append(
            {
                "left_out": left_out,
                **_majority_match(kept, human),
                "elo": elo(left_out),
            }
        )
    return rows


def _vote_counts(votes: pd.DataFrame, items: pd.Index, judges: list[Any]) -> np.ndarray:
    """judges x items x (a, tie, b) counts of LLM votes."""
    from .agreement import CATEGORIES

    out = np.zeros((len(judges), len(items), 3))
    if votes.empty:
        return out
    j = pd.Index(judges).get_indexer(pd.Index(votes["judge"].astype(object)))
    i = items.get_indexer(pd.Index(votes["item"]))
    c = pd.Index(CATEGORIES).get_indexer(pd.Index(votes["value"].astype(object)))
    np.add.at(out, (j, i, c), 1.0)
    return out


def _majority_match(counts: np.ndarray, human: np.ndarray) -> dict[str, Any]:
    """Share of items whose strict-plurality LLM verdict (counts: items x a/tie/b) matches
    the human majority, over items that have one."""
    from .agreement import CATEGORIES

    ordered = np.sort(counts, axis=1)
    strict = ordered[:, -1] > ordered[:, -2]
    llm = np.asarray(CATEGORIES, dtype=object)[counts.argmax(axis=1)]
    if not strict.any():
        return {"human_llm_agreement": None, "n": 0}
    rate = float(np.mean(llm[strict] == human[strict]))
    return {"human_llm_agreement": round(rate, 4), "n": int(strict.sum())}


def _elo_without(
    llm_frame: pd.DataFrame, judges: list[Any]
) -> Callable[[str | None], dict[str, Any]]:
    """A function: left-out judge -> the LLM-only Elo table without that judge's verdicts."""
    from . import bradley_terry

    if llm_frame.empty:
        return lambda _: {}
    enc = bradley_terry._encode(
        pd.DataFrame(
            {
                "system_a": llm_frame["system_a"].array,
                "system_b": llm_frame["system_b"].array,
                "winner": llm_frame["winner"].array,
                "weight": bradley_terry.strength_weight(
                    pd.to_numeric(llm_frame["strength"], errors="coerce").astype(float),
                    pd.to_numeric(llm_frame["strength_max"], errors="coerce").astype(float),
                    "normalized",
                    winner=llm_frame["winner"],
                ),
            }
        )
    )
    k = len(enc.systems)
    judge = pd.Index(judges).get_indexer(llm_frame["judge"].astype(object))
    cells = np.zeros((len(judges), k * k * 3))
    np.add.at(cells, (judge, bradley_terry._cells(enc)), enc.weight)
    counts = np.zeros((len(judges), k))
    np.add.at(counts, (judge, enc.a), 1.0)
    np.add.at(counts, (judge, enc.b), 1.0)

    def elo(left_out: str | None) -> dict[str, Any]:
        drop = judges.index(left_out) if left_out is not None else None
        cell = cells.sum(axis=0) - (cells[drop] if drop is not None else 0.0)
        seen = counts.sum(axis=0) - (counts[drop] if drop is not None else 0.0) > 0
        wins, ties = bradley_terry._matrices_from_cells(cell, k)
        wins = (wins + ties / 2.0)[np.ix_(seen, seen)]
        if not seen.any():
            return {}
        theta = bradley_terry.fit_matrix(wins)[0]
        values = bradley_terry.elo_from_theta(theta)
        return {str(s): round(float(v), 1) for s, v in zip(enc.systems[seen], values, strict=True)}

    return elo


# --------------------------------------------------------------------------- page sections


def _plain(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return None if np.isnan(value) else round(float(value), 4)
    if isinstance(value, np.integer):
        return int(value)
    return value


def llm_judge_section(judgments: pd.DataFrame, *, games: str) -> dict[str, Any]:
    """For the leaderboard: how LLM games are counted, and each judge's position statistics."""
    stats = position_stats(judgments)
    rows = [
        {"judge": str(judge), **{k: _plain(v) for k, v in row.items()}}
        for judge, row in stats.iterrows()
    ]
    return {"games": games, "position": rows}


def subsampling_section(judgments: pd.DataFrame, *, min_human: int = 2) -> list[dict[str, Any]]:
    """For the agreement table: agreement and LLM Elo with each LLM judge left out in turn."""
    return leave_one_judge_out(judgments, min_human=min_human)
