"""Which verdicts count, and how much: one rule for the leaderboard, agreement and exports.

Pure pandas/numpy: no Django import (the release bundle ships this module beside
``bradley_terry.py`` so its recompute script applies the same rule).

The rule (a study's settings, :class:`VerdictRule`):

* **LLM position swaps.** An LLM judge judges each pair twice, once in each order shown.
  ``llm_games="both"`` (default) keeps both verdicts as two votes; ``"consistent"`` makes
  them one verdict: the common winner when the two orders agree (strength: the smaller of
  the two), else a tie. Never is one of the two dropped.
* **Human majority.** A human majority on a pair needs at least ``human_min_verdicts``
  human verdicts (default 2): one rater's verdict is not a majority.
* **Sources on the combined board.** On the "all judges" board, human and LLM verdicts weigh
  by source, not by count: each source's verdicts share the board's total weight in the
  ratio ``human_share : 1 - human_share`` (default 1:1), so thousands of LLM verdicts do not
  drown a few hundred human ones. ``human_share=None`` weighs every verdict alike (as does a
  board fitted with ``combined="by_count"``, the paper preset).
* A human judge counts once per pair (their latest verdict); an LLM judge counts once per
  pair and order shown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

LlmGames = Literal["both", "consistent"]
SWAP_KEYS = ["judge", "item"]


@dataclass(frozen=True)
class VerdictRule:
    llm_games: LlmGames = "both"
    human_min_verdicts: int = 2
    human_share: float | None = 0.5

    def __post_init__(self) -> None:
        if self.llm_games not in ("both", "consistent"):
            raise ValueError(f"llm_games must be 'both' or 'consistent', not {self.llm_games!r}")
        if self.human_min_verdicts < 1:
            raise ValueError("human_min_verdicts must be at least 1")
        if self.human_share is not None and not 0.0 < self.human_share < 1.0:
            raise ValueError("human_share must be strictly between 0 and 1 (or None)")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> VerdictRule:
        known = {k: v for k, v in (values or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)


def counted(judgments: pd.DataFrame, rule: VerdictRule) -> pd.DataFrame:
    """The verdicts that count under ``rule`` (LLM swaps kept or made consistent; a human's
    repeated verdicts on a pair reduced to the latest). Rows keep their columns."""
    frame = _latest_human(judgments)
    if rule.llm_games == "consistent":
        frame = consistent_games(frame)
    return frame


def _latest_human(judgments: pd.DataFrame) -> pd.DataFrame:
    if not {"item", "judge"} <= set(judgments.columns):
        return judgments
    human = judgments["judge_kind"] == "human"
    if not human.any():
        return judgments
    repeated = judgments[human].duplicated(SWAP_KEYS, keep="last")
    if not repeated.any():
        return judgments
    return judgments.drop(index=repeated[repeated].index)


def consistent_games(judgments: pd.DataFrame) -> pd.DataFrame:
    """One verdict per (LLM judge, pair) judged in both orders: the common winner when the two
    verdicts agree (strength: the smaller of the two), else a tie without strength. Axis
    marks survive where both orders agree. Human judgments and LLM verdicts without their
    swapped twin pass through unchanged."""
    llm = judgments[(judgments["judge_kind"] == "llm") & judgments["shown_left"].isin(["a", "b"])]
    sizes = llm.groupby(SWAP_KEYS)["shown_left"].transform("nunique")
    twins = llm[sizes == 2].sort_values(SWAP_KEYS + ["shown_left"])
    if twins.empty:
        return judgments
    first = twins.groupby(SWAP_KEYS, sort=False).head(1).set_index(SWAP_KEYS)
    second = twins.groupby(SWAP_KEYS, sort=False).tail(1).set_index(SWAP_KEYS)
    second = second.reindex(first.index)
    agree = first["winner"] == second["winner"]
    games = first.copy()
    games["winner"] = np.where(agree, first["winner"], "tie")
    strength = np.fmin(
        pd.to_numeric(first["strength"], errors="coerce").to_numpy(dtype=float),
        pd.to_numeric(second["strength"], errors="coerce").to_numpy(dtype=float),
    )
    games["strength"] = np.where(agree & (games["winner"] != "tie"), strength, np.nan)
    games["shown_left"] = None
    for column in [c for c in games.columns if c.startswith("axis_")]:
        games[column] = games[column].where(games[column] == second[column], None)
    rest = judgments.drop(index=twins.index)
    return pd.concat([rest, games.reset_index()[judgments.columns]], ignore_index=True)


def source_factors(
    judge_kind: pd.Series | np.ndarray, weight: np.ndarray, rule: VerdictRule
) -> np.ndarray:
    """Per verdict, the factor that gives each source its share of the total weight.

    With human weight W_h, LLM weight W_l and share h: humans get h (W_h + W_l) / W_h, LLMs
    (1 - h) (W_h + W_l) / W_l; the board's total weight is unchanged. With one source only,
    or ``human_share`` None, every factor is 1.
    """
    kind = np.asarray(judge_kind, dtype=object)
    weight = np.asarray(weight, dtype=float)
    factors = np.ones(len(kind))
    human, llm = kind == "human", kind == "llm"
    w_human, w_llm = weight[human].sum(), weight[llm].sum()
    if rule.human_share is None or w_human <= 0 or w_llm <= 0:
        return factors
    total = w_human + w_llm
    factors[human] = rule.human_share * total / w_human
    factors[llm] = (1.0 - rule.human_share) * total / w_llm
    return factors
