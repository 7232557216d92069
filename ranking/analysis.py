"""Descriptive analyses of a HEART study (paper 4.5-4.8, 9.10, 9.12). No Django import.

Win rates count a tie as half a win for each side, like the leaderboard's win_rate.
Percentages are returned on the 0-100 scale where the paper reports percentages
(strategy usage); win rates and shares are fractions in [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from completions.strategies import STRATEGY_NAMES

AXES = ["H", "E", "A", "R", "T"]

#: The 15-strategy taxonomy of paper 9.10, in the paper's order (one definition, versioned, in
#: completions/strategies.py; that module is plain Python, so the maths here stays Django-free).
STRATEGIES = list(STRATEGY_NAMES)


# --------------------------------------------------------------------------- win rates


def _with_systems(
    judgments: pd.DataFrame, pairs: pd.DataFrame | Mapping[Any, Any] | None
) -> pd.DataFrame:
    """Attach system_a / system_b to judgments from ``pairs`` unless already there."""
    if {"system_a", "system_b"} <= set(judgments.columns):
        return judgments
    if pairs is None:
        raise ValueError("judgments without system_a / system_b need their pairs")
    if isinstance(pairs, Mapping):
        pairs = pd.DataFrame.from_dict(
            dict(pairs), orient="index", columns=["system_a", "system_b"]
        )
        pairs.index.name = "item"
    if "item" in pairs.columns:
        pairs = pairs.set_index("item")
    return judgments.join(pairs[["system_a", "system_b"]], on="item", how="inner")


def _side_sums(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per system: the sum of its 1 / 0.5 / 0 scores on ``column`` and the number of them."""
    # Integer codes and bincount: a groupby per side and axis cost seconds per category board.
    codes, labels = pd.factorize(frame[column], use_na_sentinel=True)
    score_of = np.array(
        [{"a": 1.0, "tie": 0.5, "b": 0.0}.get(str(label), np.nan) for label in labels] + [np.nan]
    )
    score_a = score_of[codes]  # code -1 (missing) picks the trailing NaN
    known = ~np.isnan(score_a)
    parts = []
    for side, score in (("system_a", score_a), ("system_b", 1.0 - score_a)):
        system, names = _codes(frame[side], known)
        sums = np.bincount(system, weights=score[known], minlength=len(names))
        counts = np.bincount(system, minlength=len(names)).astype(float)
        index = pd.Index(np.asarray(names, dtype=object))  # plain labels: sides differ
        part = pd.DataFrame({"sum": sums, "count": counts}, index=index)
        parts.append(part[counts > 0])  # a category no verdict here names is not a row
    return parts[0].add(parts[1], fill_value=0.0)


def _codes(column: pd.Series, keep: np.ndarray) -> tuple[np.ndarray, Any]:
    """Integer codes of ``column``'s values where ``keep`` and the labels they index: a
    categorical column's own codes (no string of its millions of rows is made)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy()[keep], column.cat.categories
    return pd.factorize(column.to_numpy()[keep])


def win_rates(frame: pd.DataFrame, column: str = "winner") -> pd.Series:
    """Per system, the share of its verdicts on ``column`` it won (ties count half)."""
    sums = _side_sums(frame, column)
    return (sums["sum"] / sums["count"]).rename_axis("system")


def axis_win_rates(
    judgments: pd.DataFrame, pairs: pd.DataFrame | Mapping[Any, Any] | None = None
) -> pd.DataFrame:
    """Figure 4's columns: per system the win rate on each axis H/E/A/R/T and overall.

    Each non-null verdict on an axis (``axis_H`` ...) is one comparison for each of the two
    systems; a tie is half a win to each. ``overall`` uses the ``winner`` column. Systems
    come from ``system_a``/``system_b`` columns, or from ``pairs`` (a DataFrame with item,
    system_a, system_b, or a mapping item -> (system_a, system_b)). Axes without a column
    are left out; a system with no verdict on an axis gets NaN. Fractions in [0, 1].
    """
    frame = _with_systems(judgments, pairs)
    columns = {axis: f"axis_{axis}" for axis in AXES if f"axis_{axis}" in frame.columns}
    rates = {axis: win_rates(frame, column) for axis, column in columns.items()}
    rates["overall"] = win_rates(frame, "winner")
    result = pd.DataFrame(rates)
    result.index.name = "system"
    return result.sort_values("overall", ascending=False)


def head_to_head_shares(
    comparisons: pd.DataFrame, kind_of_system: Mapping[str, str] | pd.Series
) -> dict[str, Any]:
    """Human-vs-model comparisons: shares where the model / the human / neither won (4.5).

    Counts rows whose two systems are of kinds "model" and "human" (either order); other
    kinds (e.g. "dataset") and model-vs-model rows are ignored. Unweighted. Returns
    ``{"model_preferred", "human_preferred", "tie", "n"}`` (shares NaN when n = 0).
    """
    kinds = pd.Series(kind_of_system)
    kind_a = comparisons["system_a"].map(kinds).to_numpy(dtype=object)
    kind_b = comparisons["system_b"].map(kinds).to_numpy(dtype=object)
    model_a = (kind_a == "model") & (kind_b == "human")
    model_b = (kind_a == "human") & (kind_b == "model")
    winner = comparisons["winner"].to_numpy(dtype=object)
    keep = model_a | model_b
    n = int(keep.sum())
    model_won = ((winner == "a") & model_a) | ((winner == "b") & model_b)
    tie = (winner == "tie") & keep
    if n == 0:
        return {"model_preferred": np.nan, "human_preferred": np.nan, "tie": np.nan, "n": 0}
    return {
        "model_preferred": model_won.sum() / n,
        "human_preferred": (keep.sum() - model_won.sum() - tie.sum()) / n,
        "tie": tie.sum() / n,
        "n": n,
    }


# --------------------------------------------------------------------------- strategies


def _entropy_bits(counts: np.ndarray) -> float:
    total = counts.sum()
    if total <= 0:
        return float("nan")
    p = counts[counts > 0] / total
    return float(-(p * np.log2(p)).sum())


def strategy_usage(
    labels: pd.DataFrame, strategies: Sequence[str] = STRATEGIES
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Strategy usage per family (Figure 6) and its spread (paper 4.8, 9.10).

    ``labels``: one row per (family, completion, strategy) label; a completion with no
    strategy appears once with a null strategy so it still counts in the denominators.

    Returns ``(usage, spread)``:

    * ``usage``: strategies x families, the percentage (0-100) of the family's
      completions that use the strategy (a completion counts once per strategy);
      strategies outside ``strategies`` are appended as extra rows.
    * ``spread``, one row per family: ``completions``; ``sd`` (sample SD, ddof=1, of the
      strategy percentages, in percentage points); ``range`` (max - min percentage);
      ``entropy`` (Shannon entropy in bits of the family's distribution of strategy labels);
      ``mean_unique`` (mean number of distinct strategies per completion); ``coverage``
      (how many strategies appear at least once).
    """
    labels = labels.drop_duplicates(["family", "completion", "strategy"])
    completions = labels.groupby("family")["completion"].nunique()
    used = labels.dropna(subset=["strategy"])
    counts = pd.crosstab(used["strategy"], used["family"])
    order = list(strategies) + sorted(set(counts.index) - set(strategies))
    counts = counts.reindex(index=order, columns=completions.index, fill_value=0)
    usage = 100.0 * counts / completions
    per_completion = used.groupby(["family", "completion"]).size()
    unique_sum = (
        per_completion.groupby(level="family").sum().reindex(completions.index, fill_value=0)
    )
    spread = pd.DataFrame(
        {
            "completions": completions,
            "sd": usage.std(axis=0, ddof=1),
            "range": usage.max(axis=0) - usage.min(axis=0),
            "entropy": [_entropy_bits(counts[f].to_numpy()) for f in completions.index],
            "mean_unique": unique_sum / completions,
            "coverage": (counts > 0).sum(axis=0),
        }
    )
    usage.index.name, usage.columns.name = "strategy", "family"
    spread.index.name = "family"
    return usage, spread


# --------------------------------------------------------------------------- tests


#: Up to this many pairs the p-values are exact: every permutation of y against x is
#: enumerated (8! = 40,320). The t / normal approximations behind scipy's defaults are poor
#: at small n and give p = 0 for a perfect correlation, which a handful of systems makes likely.
EXACT_MAX_N = 8


def correlation(x: Sequence[float] | pd.Series, y: Sequence[float] | pd.Series) -> dict[str, Any]:
    """Pearson and Spearman correlation of paired values, dropping pairs with a NaN.

    Returns ``{"pearson_r", "pearson_p", "spearman_rho", "spearman_p", "n", "p_method",
    "reason"}``; two-sided p-values. With n <= EXACT_MAX_N the p-values come from the exact
    permutation distribution (``p_method`` "exact permutation"), so they are never 0: the
    smallest is 2 / n!. Larger n uses scipy's asymptotic p (``p_method`` "asymptotic").
    When nothing can be computed the statistics are NaN and ``reason`` says why.
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    keep = ~(np.isnan(xs) | np.isnan(ys))
    xs, ys = xs[keep], ys[keep]
    n = int(keep.sum())
    reason = _why_no_correlation(xs, ys, n)
    if reason:
        nan = float("nan")
        return {
            "pearson_r": nan,
            "pearson_p": nan,
            "spearman_rho": nan,
            "spearman_p": nan,
            "n": n,
            "p_method": None,
            "reason": reason,
        }
    r = float(stats.pearsonr(xs, ys).statistic)
    rho = float(stats.spearmanr(xs, ys).statistic)
    if n <= EXACT_MAX_N:
        pearson_p = exact_permutation_p(xs, ys, _pearson)
        spearman_p = exact_permutation_p(stats.rankdata(xs), stats.rankdata(ys), _pearson)
        method = "exact permutation"
    else:
        pearson_p = float(stats.pearsonr(xs, ys).pvalue)
        spearman_p = float(stats.spearmanr(xs, ys).pvalue)
        method = "asymptotic"
    return {
        "pearson_r": r,
        "pearson_p": pearson_p,
        "spearman_rho": rho,
        "spearman_p": spearman_p,
        "n": n,
        "p_method": method,
        "reason": None,
    }


def _why_no_correlation(xs: np.ndarray, ys: np.ndarray, n: int) -> str | None:
    if n < 3:
        return f"needs at least 3 systems with both values, has {n}"
    if np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return "one of the two values is the same for every system"
    return None


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of x against each row of y (y: (m, n))."""
    xc = x - x.mean()
    yc = y - y.mean(axis=-1, keepdims=True)
    return (yc @ xc) / np.sqrt((xc @ xc) * (yc * yc).sum(axis=-1))


def exact_permutation_p(
    x: np.ndarray, y: np.ndarray, statistic: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> float:
    """Two-sided exact p: the share of all n! orderings of y whose |statistic| reaches the
    observed one (the observed ordering included, so p >= 1 / n!)."""
    from itertools import permutations

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    observed = abs(float(statistic(x, y[None, :])[0]))
    orders = np.array(list(permutations(range(len(y)))))
    values = np.abs(statistic(x, y[orders]))
    # A tolerance so that orderings tying the observed value (up to rounding) count.
    return float(np.mean(values >= observed - 1e-12))


def percentile_ranks(values: pd.Series) -> pd.Series:
    """Figure 4's percentile of each system among the others: 100 x (systems below + half the
    systems tied) / (other systems). The best system is 100, the worst 0; NaN values are left
    out, and a lone system has no percentile (NaN)."""
    known = values.dropna().astype(float)
    k = len(known)
    if k < 2:
        return pd.Series(np.nan, index=values.index)
    arr = known.to_numpy()
    below = (arr[None, :] < arr[:, None]).sum(axis=1)
    tied = (arr[None, :] == arr[:, None]).sum(axis=1) - 1
    ranks = pd.Series(100.0 * (below + 0.5 * tied) / (k - 1), index=known.index)
    return ranks.reindex(values.index)


def axis_comparisons(judgments: pd.DataFrame, axis: str) -> pd.DataFrame:
    """Bradley–Terry input from one axis's marks: one comparison per judgment with a verdict
    on the axis (``axis_H`` ...), unweighted, with its context and cluster for the bootstrap."""
    column = f"axis_{axis}"
    if column not in judgments.columns:
        return pd.DataFrame(columns=["system_a", "system_b", "winner", "weight", "context"])
    rows = judgments[judgments[column].isin(["a", "b", "tie"])]
    frame = pd.DataFrame(
        {
            "system_a": rows["system_a"].array,
            "system_b": rows["system_b"].array,
            "winner": rows[column].array,
            "weight": 1.0,
        }
    )
    for extra in ("context", "cluster"):
        if extra in rows.columns:
            frame[extra] = rows[extra].array
    return frame


def benjamini_hochberg(pvalues: Sequence[float] | pd.Series, alpha: float = 0.05) -> pd.DataFrame:
    """Benjamini–Hochberg FDR control (paper 9.12), via statsmodels' ``fdr_bh``.

    Returns a DataFrame (index of ``pvalues`` if it is a Series) with ``p``,
    ``p_adjusted`` and ``reject`` (True where the adjusted p-value is <= alpha).
    NaN p-values are left out of the correction and come back with NaN / False.
    """
    series = pd.Series(pvalues, dtype=float)
    result = pd.DataFrame({"p": series, "p_adjusted": np.nan, "reject": False})
    valid = series.notna()
    if valid.any():
        reject, adjusted, _, _ = multipletests(series[valid], alpha=alpha, method="fdr_bh")
        result.loc[valid, "p_adjusted"] = adjusted
        result.loc[valid, "reject"] = reject
    return result
