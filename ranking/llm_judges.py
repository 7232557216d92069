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
    """One game per (LLM judge, pair) judged in both orders: the common winner when the two
    verdicts agree (strength: the smaller of the two), else a tie without strength.

    Human judgments and LLM verdicts without their swapped twin pass through unchanged.
    """
    llm = judgments[_llm(judgments) & judgments["shown_left"].isin(["a", "b"])]
    sizes = llm.groupby(SWAP_KEYS)["shown_left"].transform("nunique")
    twins = llm[sizes == 2].sort_values(SWAP_KEYS + ["shown_left"])
    if twins.empty:
        return judgments
    first = twins.groupby(SWAP_KEYS, sort=False).head(1).set_index(SWAP_KEYS)
    second = twins.groupby(SWAP_KEYS, sort=False).tail(1).set_index(SWAP_KEYS)
    agree = first["winner"] == second["winner"].reindex(first.index)
    games = first.copy()
    games["winner"] = np.where(agree, first["winner"], "tie")
    strength = np.fmin(
        pd.to_numeric(first["strength"], errors="coerce").to_numpy(dtype=float),
        pd.to_numeric(second["strength"].reindex(first.index), errors="coerce").to_numpy(
            dtype=float
        ),
    )
    games["strength"] = np.where(agree, strength, np.nan)
    games["shown_left"] = None
    for column in [c for c in games.columns if c.startswith("axis_")]:
        same = games[column] == second[column].reindex(first.index)
        games[column] = games[column].where(same, None)
    rest = judgments.drop(index=twins.index)
    return pd.concat([rest, games.reset_index()[judgments.columns]], ignore_index=True)


def position_stats(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per LLM judge: verdicts, pairs judged in both orders, position consistency (share of
    those pairs whose two verdicts name the same winner) and first-position win rate (share
    of verdicts with a known order that chose the reply shown first; 0.5 = no position bias)."""
    llm = judgments[_llm(judgments)]
    rows = []
    for judge, own in llm.groupby("judge", sort=True):
        shown = own[own["shown_left"].isin(["a", "b"]) & own["winner"].isin(["a", "b"])]
        first_wins = int((shown["winner"] == shown["shown_left"]).sum())
        both = shown.groupby("item").filter(lambda g: g["shown_left"].nunique() == 2)
        per_pair = both.groupby("item")["winner"].nunique()
        consistent = int((per_pair == 1).sum())
        rows.append(
            {
                "judge": judge,
                "verdicts": len(own),
                "pairs_both_orders": len(per_pair),
                "consistent_pairs": consistent,
                "consistency": consistent / len(per_pair) if len(per_pair) else np.nan,
                "first_position_wins": first_wins,
                "first_position_win_rate": first_wins / len(shown) if len(shown) else np.nan,
            }
        )
    columns = [
        "judge",
        "verdicts",
        "pairs_both_orders",
        "consistent_pairs",
        "consistency",
        "first_position_wins",
        "first_position_win_rate",
    ]
    return pd.DataFrame(rows, columns=columns).set_index("judge")


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
