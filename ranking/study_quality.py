"""The study graded: can its boards separate the systems, do two boards agree, how reliable is
the order, and how many judgments would reach the admin's target. Pure numpy/pandas/scipy.

Separability with confidence, agreement with confidence and the pair-rank Brier score are
arena-hard-auto's benchmark-of-benchmarks measures (T. Li et al., "From Crowdsourced Data to
High-Quality Benchmarks: Arena-Hard and BenchBuilder Pipeline", 2024; the notebook
``notebook/benchmark_statistics.ipynb`` of lmarena/arena-hard-auto), computed on the same
bootstrap output the board's intervals come from:

- ``separability``: 1 − (system pairs whose 95 % intervals overlap) / (all system pairs). Two
  intervals overlap when, taking the one with the lower lower bound first, the other's lower
  bound is below its upper bound (touching intervals do not overlap). arena-hard's notebook
  also skips a pair whose two intervals are bit-for-bit identical to a pair already counted;
  here every pair counts once, identical intervals included.
- ``agreement_with_confidence(board, reference)``: over the system pairs the *reference*
  separates (intervals not overlapping: overlap = max(0, min of the uppers − max of the
  lowers) is 0), 1 when the board separates them in the same order, 1/2 when the board's
  intervals overlap, 0 when it separates them the other way; the mean.
- ``pair_rank_brier(board, reference)``: for each pair (a, b) of systems both rate, in name
  order, the board's probability that a ranks below b, Φ(−(m_a − m_b)/√(v_a + v_b)) with m and
  v the mean and (population) variance of each system's bootstrap Elo, scored against 1 when
  the reference's Elo of a is below b's; the mean squared error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

#: Random halves of the source conversations drawn for the split-half reliability.
SPLITS = 20


def overlapping_pairs(lower: Sequence[float], upper: Sequence[float]) -> tuple[int, int]:
    """(system pairs whose intervals overlap, all system pairs)."""
    intervals = sorted(zip(lower, upper, strict=True), key=lambda bounds: bounds[0])
    overlapping = 0
    for i, (_, first_upper) in enumerate(intervals):
        for later_lower, _ in intervals[i + 1 :]:
            if later_lower < first_upper:
                overlapping += 1
            else:
                break  # sorted by lower bound: no later interval starts before this one ends
    k = len(intervals)
    return overlapping, k * (k - 1) // 2


def separability(lower: Sequence[float], upper: Sequence[float]) -> float | None:
    """Share of system pairs whose intervals do not overlap (None under two systems)."""
    overlapping, total = overlapping_pairs(lower, upper)
    return None if total == 0 else 1.0 - overlapping / total


def agreement_with_confidence(
    board: pd.DataFrame, reference: pd.DataFrame
) -> tuple[float | None, int]:
    """(agreement, reference-separated pairs) of two tables indexed by system with ``ci_low``
    and ``ci_high``; None when the reference separates no pair. Every pair of the systems both
    tables rate, at once (arrays over the pairs: 200 systems make 19,900 of them). Two
    intervals are ordered as (low, high) tuples are."""
    shared = [s for s in board.index if s in reference.index]
    if len(shared) < 2:
        return None, 0
    score = board.loc[shared, ["ci_low", "ci_high"]].to_numpy(dtype=float)
    ref = reference.loc[shared, ["ci_low", "ci_high"]].to_numpy(dtype=float)
    a, b = np.triu_indices(len(shared), k=1)
    separated = ~_overlapping(ref, a, b)
    total = int(separated.sum())
    if not total:
        return None, 0
    tied = _overlapping(score, a, b)
    same_order = (_below(score, a, b) & _below(ref, a, b)) | (
        _below(score, b, a) & _below(ref, b, a)
    )
    count = 0.5 * np.sum(separated & tied) + np.sum(separated & ~tied & same_order)
    return float(count) / total, total


def _overlapping(bounds: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether the intervals of systems a and b overlap by more than a point."""
    low, high = bounds[:, 0], bounds[:, 1]
    return np.asarray((np.minimum(high[a], high[b]) - np.maximum(low[a], low[b])) > 0)


def _below(bounds: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether a's (low, high) comes before b's, as Python orders tuples."""
    low, high = bounds[:, 0], bounds[:, 1]
    return np.asarray((low[a] < low[b]) | ((low[a] == low[b]) & (high[a] < high[b])))


def pair_rank_brier(moments: pd.DataFrame, reference: pd.Series) -> tuple[float | None, int]:
    """(Brier score, pairs) of the board's bootstrap ``moments`` (indexed by system: ``mean``,
    ``var``) against the ``reference`` Elo per system. Pairs in name order, all at once."""
    shared = sorted(str(s) for s in moments.index if s in reference.index)
    if len(shared) < 2:
        return None, 0
    mean = moments.loc[shared, "mean"].to_numpy(dtype=float)
    var = moments.loc[shared, "var"].to_numpy(dtype=float)
    ref = reference.loc[shared].to_numpy(dtype=float)
    a, b = np.triu_indices(len(shared), k=1)
    spread = np.sqrt(var[a] + var[b])
    difference = mean[a] - mean[b]
    certain = np.where(difference < 0, 1.0, np.where(difference > 0, 0.0, 0.5))
    with np.errstate(divide="ignore", invalid="ignore"):
        p_below = np.where(
            spread > 0,
            stats.norm.cdf(0.0, loc=difference, scale=np.where(spread > 0, spread, 1.0)),
            certain,
        )
    label = (ref[a] < ref[b]).astype(float)
    errors = (label - p_below) ** 2
    return float(np.mean(errors)), len(errors)


def draw_moments(draws: pd.DataFrame | None) -> dict[str, dict[str, float]]:
    """Per system, the mean and population variance of its bootstrap Elo draws."""
    if draws is None or draws.empty:
        return {}
    return {
        str(name): {"mean": float(np.nanmean(column)), "var": float(np.nanvar(column))}
        for name, column in draws.items()
    }


def split_half(
    comparisons: pd.DataFrame,
    fit: Callable[[np.ndarray], pd.Series],
    *,
    splits: int = SPLITS,
    seed: int = 0,
) -> dict[str, Any]:
    """Split-half reliability of the board's order: the source conversations (``cluster``, else
    ``context``, else each comparison) are dealt at random into two halves, each half fitted
    (``fit`` is given the half as a boolean mask over the rows of ``comparisons`` and returns
    Elo per system), and the Spearman correlation of the two halves' Elo over
    the systems both rate is averaged over ``splits`` deals; ``value`` is that mean corrected to
    the whole study's size by the Spearman–Brown formula 2r / (1 + r)."""
    labels, codes = np.unique(_units(comparisons), return_inverse=True)
    if len(labels) < 4:
        return {"value": None, "half_correlation": None, "splits": 0}
    rng = np.random.default_rng(seed)
    correlations = []
    for _ in range(splits):
        chosen = np.zeros(len(labels), dtype=bool)
        chosen[rng.permutation(len(labels))[: len(labels) // 2]] = True
        in_first = chosen[codes]  # each comparison goes with its conversation
        left, right = fit(in_first), fit(~in_first)
        shared = left.index.intersection(right.index)
        if len(shared) >= 3:
            rho = stats.spearmanr(left[shared], right[shared]).statistic
            if not math.isnan(rho):
                correlations.append(float(rho))
    if not correlations:
        return {"value": None, "half_correlation": None, "splits": 0}
    r = float(np.mean(correlations))
    value = 2 * r / (1 + r) if r > -1 else None
    return {"value": value, "half_correlation": r, "splits": len(correlations)}


def _units(comparisons: pd.DataFrame) -> np.ndarray:
    """Each comparison's resampling unit as an integer: its unit's rank among the units' names
    in text order (the order the deal draws from). Factorized first, so only the distinct
    names are ever made text (1,500,000 string conversions and a string sort cost 6 s)."""
    present = [c for c in ("cluster", "context") if c in comparisons.columns]
    column = comparisons[present[0]] if present else pd.Series(np.arange(len(comparisons)))
    codes, names = pd.factorize(column, use_na_sentinel=False)
    order = np.argsort(np.asarray(pd.Index(names).astype(str), dtype=str), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    units: np.ndarray = rank[codes]
    return units


def separation_factors(table: pd.DataFrame) -> list[float | None]:
    """Per system pair, by how much the study's judgments would have to be multiplied for the
    two intervals to stop overlapping, if each interval narrows as 1/√(judgments) around its
    estimate: ((upper margin of the lower system + lower margin of the higher) / gap)². Sorted;
    None (never) where the two estimates are equal."""
    rows = table.dropna(subset=["elo", "ci_low", "ci_high"])
    elo = rows["elo"].to_numpy(dtype=float)
    low, high = rows["ci_low"].to_numpy(dtype=float), rows["ci_high"].to_numpy(dtype=float)
    factors: list[float] = []
    for a, b in combinations(range(len(rows)), 2):
        top, bottom = (a, b) if elo[a] >= elo[b] else (b, a)
        gap = float(elo[top] - elo[bottom])
        width = float((elo[top] - low[top]) + (high[bottom] - elo[bottom]))
        factors.append(math.inf if gap <= 0 else (max(width, 0.0) / gap) ** 2)
    factors.sort()
    return [None if math.isinf(f) else f for f in factors]
