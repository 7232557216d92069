"""LLM judges seen through their position swaps (paper 9.5, 9.9). Pure pandas: no Django.

Each LLM judge judges a pair twice, once in each order shown. Rows are judgments in canonical
orientation with at least the columns ``item`` (the pair), ``judge``, ``judge_kind``,
``winner`` ("a"|"b"|"tie"), ``shown_left`` ("a"|"b"|None), ``strength``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

SWAP_KEYS = ["judge", "item"]


def _llm(judgments: pd.DataFrame) -> pd.Series:
    return judgments["judge_kind"] == "llm"


def consistent_games(judgments: pd.DataFrame) -> pd.DataFrame:
    """One game per (LLM judge, pair) judged in both orders (see ranking.verdicts)."""
    from .verdicts import consistent_games as one_per_pair

    return one_per_pair(judgments)


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


def leave_one_judge_out(
    judgments: pd.DataFrame,
    *,
    agreement: Callable[[pd.DataFrame], tuple[float, int]],
    elo: Callable[[pd.DataFrame], dict[str, float]],
) -> list[dict]:
    """Stability under judge subsampling (paper 9.9): with each LLM judge left out in turn,
    the human–LLM agreement (``agreement(frame) -> (rate, n)``) and the LLM-only Elo table
    (``elo(llm_frame) -> {system: elo}``). The first row ("none") is the full ensemble."""
    judges = sorted(judgments.loc[_llm(judgments), "judge"].unique())
    rows = []
    for left_out in [None, *judges] if len(judges) > 1 else []:
        frame = judgments if left_out is None else judgments[judgments["judge"] != left_out]
        rate, n = agreement(frame)
        rows.append(
            {
                "left_out": left_out,
                "human_llm_agreement": rate,
                "n": n,
                "elo": elo(frame[_llm(frame)]),
            }
        )
    return rows


# --------------------------------------------------------------------------- page sections


def _frame_elo(llm_frame: pd.DataFrame) -> dict[str, float]:
    from . import bradley_terry

    if llm_frame.empty:
        return {}
    weights = bradley_terry.strength_weight(
        pd.to_numeric(llm_frame["strength"], errors="coerce").astype(float),
        pd.to_numeric(llm_frame["strength_max"], errors="coerce").astype(float),
        "normalized",
        winner=llm_frame["winner"],
    )
    comparisons = pd.DataFrame(
        {
            "system_a": llm_frame["system_a"].to_numpy(),
            "system_b": llm_frame["system_b"].to_numpy(),
            "winner": llm_frame["winner"].to_numpy(),
            "weight": weights,
        }
    )
    table = bradley_terry.fit(comparisons, ci="fisher")
    return {str(name): round(float(elo), 1) for name, elo in table["elo"].items()}


def _frame_agreement(frame: pd.DataFrame) -> tuple[float | None, int]:
    from . import agreement

    rate = agreement.human_llm_agreement(frame, n_boot=0)
    value = None if rate.rate is None or np.isnan(rate.rate) else round(float(rate.rate), 4)
    return value, int(rate.n)


def _plain(value):
    if isinstance(value, float | np.floating):
        return None if np.isnan(value) else round(float(value), 4)
    if isinstance(value, np.integer):
        return int(value)
    return value


def llm_judge_section(judgments: pd.DataFrame, *, games: str) -> dict:
    """For the leaderboard: how LLM games are counted, and each judge's position statistics."""
    stats = position_stats(judgments)
    rows = [
        {"judge": str(judge), **{k: _plain(v) for k, v in row.items()}}
        for judge, row in stats.iterrows()
    ]
    return {"games": games, "position": rows}


def subsampling_section(judgments: pd.DataFrame) -> list[dict]:
    """For the agreement table: agreement and LLM Elo with each LLM judge left out in turn."""
    return leave_one_judge_out(judgments, agreement=_frame_agreement, elo=_frame_elo)
