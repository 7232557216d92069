"""Leaderboards and agreement per cohort of raters, and agreement between cohorts.

Pure pandas/numpy/scipy: no Django import. Input: counted human judgments (see
:mod:`ranking.verdicts`) with a ``cohort`` column (the rater's cohort) besides the usual
``item``, ``judge``, ``system_a``/``system_b``, ``winner``, ``strength``/``strength_max``.

Between two cohorts, on the items both judged:

* ``same_direction``: the share of items whose two cohort majorities (strict plurality of
  a / tie / b, see :func:`ranking.agreement.majority`) are the same verdict; and
  ``same_direction_no_ties`` over the items where neither majority is a tie.
* ``cohen_kappa``: Cohen's kappa of the two majority verdicts (the two cohorts as two
  coders of a / tie / b), chance-corrected by each cohort's own verdict shares.
* ``krippendorff_alpha``: Krippendorff's alpha (ordinal, a < tie < b) of the same two coders.
* ``elo_spearman``: Spearman's rank correlation of the two cohort boards' Elo over the systems
  both boards rate.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from . import agreement, board, bradley_terry

ORDER = {"a": 0, "tie": 1, "b": 2}


@dataclass(frozen=True)
class CohortAgreement:
    """How two cohorts' verdicts agree (see the module docstring); NaN when undefined."""

    left: str
    right: str
    n_items: int  # items with a majority in both cohorts
    same_direction: float
    n_no_ties: int
    same_direction_no_ties: float
    cohen_kappa: float
    krippendorff_alpha: float
    n_systems: int
    elo_spearman: float

    def as_dict(self) -> dict[str, Any]:
        return {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in asdict(self).items()
        }


def split(judgments: pd.DataFrame, cohorts: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Human judgments per cohort, in ``cohorts`` order (default: sorted labels present)."""
    human = judgments[judgments["judge_kind"] == "human"]
    labels = cohorts if cohorts is not None else sorted(human["cohort"].dropna().unique())
    return {label: human[human["cohort"] == label] for label in labels}


def cohort_board(judgments: pd.DataFrame, params: dict[str, Any]) -> tuple[pd.DataFrame, list[str]]:
    """The Bradley–Terry Elo table of one cohort's judgments and the fit's warnings (the
    board's weights and ties; robust intervals, `board.quick_params`: a per-cohort board is
    fitted on request, without a bootstrap). ``too_few`` marks the rows the data cannot place
    (fewer than ``board.MIN_COMPARISONS`` comparisons, or no finite estimate)."""
    empty = pd.DataFrame(columns=bradley_terry.OUTPUT_COLUMNS)
    if judgments.empty:
        return empty, []
    comparisons = board.comparisons_from_judgments(
        judgments, weights=params["weights"], ties=params["ties"]
    )
    if comparisons.empty:
        return empty, []
    anchor = params.get("anchor")
    present = set(comparisons["system_a"]) | set(comparisons["system_b"])
    fitted, messages = board.fit_board(
        comparisons, board.quick_params(params), anchor=anchor if anchor in present else None
    )
    table = fitted.table.copy()
    unbounded = bradley_terry.unbounded_systems(comparisons)
    table["too_few"] = (table["n"] < board.min_rows(params)) | table.index.isin(list(unbounded))
    return table, messages


def majorities(judgments: pd.DataFrame, *, min_verdicts: int = 1) -> pd.Series:
    """Per item, the cohort's strict-plurality verdict (None without one), non-null only."""
    plural = agreement.majority(judgments, "human", min_verdicts=min_verdicts)
    return plural[plural.notna()].astype(object)


MIRROR = {"a": "b", "b": "a", "tie": "tie"}


def both_orientations(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two coders' a / tie / b labels on each item, and again with every item stored the other
    way round: chance agreement then treats "a" and "b" alike (see `ranking.agreement`)."""
    flip = np.vectorize(MIRROR.get, otypes=[object])
    if len(left) == 0:
        return left, right
    return np.concatenate([left, flip(left)]), np.concatenate([right, flip(right)])


def cohen_kappa(left: np.ndarray, right: np.ndarray) -> float:
    """Cohen's kappa of two coders' category labels (same length, no missing values); callers
    pass :func:`both_orientations` of a / tie / b labels."""
    if len(left) == 0:
        return math.nan
    labels = sorted(set(left) | set(right))
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    np.add.at(table, ([index[v] for v in left], [index[v] for v in right]), 1.0)
    table /= table.sum()
    observed = np.trace(table)
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if expected >= 1.0:
        return math.nan  # both coders used a single, identical category
    return float((observed - expected) / (1.0 - expected))


def two_coder_alpha(left: np.ndarray, right: np.ndarray, *, level: str = "ordinal") -> float:
    """Krippendorff's alpha of two coders on a / tie / b (ordinal: a < tie < b)."""
    if len(left) == 0:
        return math.nan
    counts = np.zeros((len(left), len(ORDER)))
    for column in (left, right):
        counts[np.arange(len(left)), [ORDER[v] for v in column]] += 1.0
    return agreement.alpha_from_counts(counts, level=level)


def elo_spearman(left: pd.DataFrame, right: pd.DataFrame) -> tuple[float, int]:
    """Spearman's rho of two boards' Elo over their common systems (those each board can
    place), and how many there are."""
    left, right = (t[~t["too_few"].astype(bool)] if "too_few" in t else t for t in (left, right))
    common = left.index.intersection(right.index)
    if len(common) < 3:
        return math.nan, len(common)
    rho = stats.spearmanr(left.loc[common, "elo"], right.loc[common, "elo"]).statistic
    return float(rho), len(common)


def between(
    left: str,
    right: str,
    judgments: dict[str, pd.DataFrame],
    boards: dict[str, pd.DataFrame],
    *,
    min_verdicts: int = 1,
) -> CohortAgreement:
    """Agreement of two cohorts (see the module docstring)."""
    a = majorities(judgments[left], min_verdicts=min_verdicts)
    b = majorities(judgments[right], min_verdicts=min_verdicts)
    common = a.index.intersection(b.index)
    va, vb = a.loc[common].to_numpy(), b.loc[common].to_numpy()
    decisive = (va != "tie") & (vb != "tie")
    rho, n_systems = elo_spearman(boards[left], boards[right])
    return CohortAgreement(
        left=left,
        right=right,
        n_items=len(common),
        same_direction=float((va == vb).mean()) if len(common) else math.nan,
        n_no_ties=int(decisive.sum()),
        same_direction_no_ties=(
            float((va[decisive] == vb[decisive]).mean()) if decisive.any() else math.nan
        ),
        cohen_kappa=cohen_kappa(*both_orientations(va, vb)),
        krippendorff_alpha=two_coder_alpha(*both_orientations(va, vb)),
        n_systems=n_systems,
        elo_spearman=rho,
    )


def cohort_section(
    judgments: pd.DataFrame, params: dict[str, Any], *, cohorts: list[str], min_verdicts: int = 2
) -> dict[str, Any]:
    """Everything the pages, API and CLI show per cohort: each cohort's board, its agreement
    (Fleiss' kappa, Krippendorff's alpha, observed agreement among its raters) and every
    pair of cohorts' agreement. JSON-ready (NaN -> None)."""
    parts = split(judgments, cohorts)
    fits = {label: cohort_board(frame, params) for label, frame in parts.items()}
    boards = {label: table for label, (table, _) in fits.items()}
    present = [label for label in cohorts if not parts[label].empty]
    return {
        "cohorts": [_cohort_entry(label, parts[label], *fits[label]) for label in cohorts],
        "between": [
            between(x, y, parts, boards, min_verdicts=min_verdicts).as_dict()
            for x, y in itertools.combinations(present, 2)
        ],
        "min_verdicts": min_verdicts,
    }


def _cohort_entry(
    label: str, frame: pd.DataFrame, table: pd.DataFrame, warnings: list[Any]
) -> dict[str, Any]:
    inter = agreement.inter_human_agreement(frame) if not frame.empty else None
    systems = (
        [
            {
                "system": str(system),
                "elo": None if row.get("too_few") else _num(row["elo"]),
                "ci_low": None if row.get("too_few") else _num(row["ci_low"]),
                "ci_high": None if row.get("too_few") else _num(row["ci_high"]),
                "n": int(row["n"]),
                "win_rate": _num(row["win_rate"]),
                "too_few": bool(row.get("too_few", False)),
            }
            for system, row in table.sort_values("too_few", kind="stable").iterrows()
        ]
        if len(table)
        else []
    )
    return {
        "cohort": label,
        "n_judgments": len(frame),
        "n_raters": int(frame["judge"].nunique()) if not frame.empty else 0,
        "systems": systems,
        "warnings": warnings,
        "agreement": {
            "fleiss_kappa": _num(agreement.fleiss_kappa(frame)) if not frame.empty else None,
            "krippendorff_alpha": (
                _num(agreement.krippendorff_alpha(frame)) if not frame.empty else None
            ),
            "inter_human_agreement": _num(inter.rate) if inter else None,
            "inter_human_n": inter.n if inter else 0,
        },
    }


def _num(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else round(value, 4)
