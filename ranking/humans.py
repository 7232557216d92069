"""The human rows under the leaderboard (paper 9.3). Pure pandas/numpy: no Django.

Each writer is a system of their own in the main table. Under it, two derived rows:

- **"Average human"**: the strength of the writer behind a context's human reply, drawn at
  random: the writers' Elo averaged, each weighted by the contexts they wrote (equal weights
  when every writer wrote every context). Its interval comes from the main fit itself: the
  same weighted average taken in every bootstrap round (or, with asymptotic intervals, the
  variance of the weighted sum from the fit's covariance). It is a fair human baseline: with
  writers and models of equal skill it sits at the models' level, and its 95 % interval covers
  that level 95 % of the time.
- **"Best human (per context)"**: the paper's "top-scoring completion per context", an
  oracle: in each context the writer the judges preferred there (highest score, wins plus
  half the ties over comparisons, unweighted; ties broken by more comparisons, then by name).
  Chosen on the same verdicts that score it, it wins by luck as much as by skill (with
  writers no better than the models it still came out about 56 Elo above them). So by
  default it is *cross-fitted*: each pair's verdicts are split in two halves by judge; the
  writer chosen on one half is scored on the other half's verdicts, and vice versa. What is
  left is the real advantage of picking, per context, the reply judges prefer, which no
  writer can do in advance. ``cross_fit=False`` gives the paper's in-sample choice.
  The row is its own fit (the writers replaced by the chosen one), shifted onto the main
  table's scale through the systems both fits share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable
from typing import Any

import numpy as np
import pandas as pd

BEST = "Best human (per context)"
AVERAGE = "Average human"

AVERAGE_NOTE = (
    "The writer of a context drawn at random: the writers' Elo averaged, weighted by the "
    "contexts each wrote, with the interval of that average from the same fit."
)
BEST_NOTE = (
    "An oracle: in each context the writer the judges preferred. Cross-fitted: chosen on one "
    "half of the judges' verdicts and scored on the other, so luck in the verdicts does not "
    "lift it. No writer can pick like this in advance."
)
BEST_NOTE_IN_SAMPLE = (
    "An oracle, as in the paper: in each context the writer the judges preferred, chosen and "
    "scored on the same verdicts, so it is lifted by luck as well as skill (optimistic)."
)


def _sides(comparisons: pd.DataFrame, humans: Collection[str]) -> tuple[pd.Series, pd.Series]:
    humans = list(humans)
    return comparisons["system_a"].isin(humans), comparisons["system_b"].isin(humans)


# --------------------------------------------------------------------------- average human


def contexts_per_writer(comparisons: pd.DataFrame, humans: Collection[str]) -> pd.Series:
    """How many contexts each writer's replies were compared in."""
    a_human, b_human = _sides(comparisons, humans)
    rows = pd.concat(
        [
            comparisons.loc[a_human, ["context", "system_a"]].set_axis(["context", "s"], axis=1),
            comparisons.loc[b_human, ["context", "system_b"]].set_axis(["context", "s"], axis=1),
        ]
    )
    return rows.drop_duplicates().groupby("s")["context"].size()


def average_human_row(
    table: pd.DataFrame,
    weights: pd.Series,
    *,
    draws: pd.DataFrame | None = None,
    covariance: pd.DataFrame | None = None,
    alpha: float = 0.05,
    ci: str | None = "bootstrap",
) -> dict[str, Any] | None:
    """The "Average human" row from the main fit (see the module doc).

    ``weights``: writer -> contexts written. The interval: the percentile interval of the
    weighted average over ``draws`` (bootstrap rounds); else from ``covariance`` (Elo^2,
    Fisher); with ``ci="paper"``, the paper's SE = sqrt(1/n) on theta with n the writers'
    comparisons.
    """
    writers = [w for w in weights.index if w in table.index]
    if not writers:
        return None
    w = weights.reindex(writers).to_numpy(dtype=float)
    w = w / w.sum()
    rows = table.loc[writers]
    elo = float(w @ rows["elo"].to_numpy())
    n = int(rows["n"].sum())
    low = high = se = math.nan
    if draws is not None:
        series = draws[writers].to_numpy() @ w
        low, high = np.percentile(series, [100 * alpha / 2, 100 * (1 - alpha / 2)])
        se = float(series.std(ddof=1))
    elif ci == "paper":
        se = 400.0 / math.log(10.0) / math.sqrt(max(n, 1))
    elif covariance is not None:
        se = math.sqrt(max(float(w @ covariance.loc[writers, writers].to_numpy() @ w), 0.0))
    if draws is None and not math.isnan(se):
        z = _z(alpha)
        low, high = elo - z * se, elo + z * se
    return {
        "system": AVERAGE,
        "elo": elo,
        "ci_low": float(low),
        "ci_high": float(high),
        "se": se,
        "win_rate": float(w @ rows["win_rate"].to_numpy()),
        "n": n,
        "writers": len(writers),
        "note": AVERAGE_NOTE,
    }


def _z(alpha: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(1.0 - alpha / 2.0))


# --------------------------------------------------------------------------- best human


def _records(comparisons: pd.DataFrame, humans: Collection[str]) -> pd.DataFrame:
    """One row per (comparison, human side): context, fold, system and score (1 / 0.5 / 0)."""
    a_human, b_human = _sides(comparisons, humans)
    verdict = comparisons["winner"].to_numpy(dtype=object)
    score_a = pd.Series(
        np.select([verdict == "a", verdict == "tie"], [1.0, 0.5], 0.0), comparisons.index
    )
    fold = comparisons["fold"] if "fold" in comparisons.columns else pd.Series(0, comparisons.index)
    sides = [(a_human, "system_a", score_a), (b_human, "system_b", 1.0 - score_a)]
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "context": comparisons.loc[mask, "context"],
                    "fold": fold[mask],
                    "system": comparisons.loc[mask, column],
                    "score": score[mask],
                }
            )
            for mask, column, score in sides
        ]
    )


def _best(records: pd.DataFrame) -> pd.Series:
    """Context -> the writer with the best record there (the paper's rule, module doc)."""
    if records.empty:
        return pd.Series(dtype=object)
    table = records.groupby(["context", "system"])["score"].agg(["mean", "count"]).reset_index()
    table = table.sort_values(
        ["context", "mean", "count", "system"], ascending=[True, False, False, True]
    )
    best = table.drop_duplicates("context")
    return pd.Series(best["system"].to_numpy(), index=best["context"].to_numpy())


def best_human_per_context(
    comparisons: pd.DataFrame, humans: Collection[str]
) -> dict[Hashable, Any]:
    """Context -> the human system with the best record in that context (all verdicts)."""
    return _best(_records(comparisons, humans)).to_dict()


def judge_folds(comparisons: pd.DataFrame) -> np.ndarray:
    """Split each pair's judges in two halves: fold 0 and 1 alternate over the pair's judges
    in order of appearance (a judge's two position-swapped verdicts stay together)."""
    keys = comparisons[["item", "judge"]]
    first = ~keys.duplicated()
    rank = first.astype(int).groupby(comparisons["item"].to_numpy()).cumsum() - 1
    order = pd.Series(rank.where(first).to_numpy(), index=pd.MultiIndex.from_frame(keys))
    order = order[first.to_numpy()]
    return (order.reindex(pd.MultiIndex.from_frame(keys)).to_numpy() % 2).astype(int)


def best_human_comparisons(
    comparisons: pd.DataFrame, humans: Collection[str], *, cross_fit: bool = True
) -> pd.DataFrame:
    """The comparisons of the "Best human (per context)" system (see the module doc).

    In-sample: the chosen writer's comparisons against non-writers. Cross-fitted (needs
    ``item`` and ``judge`` columns): the verdicts of each half scored for the writer chosen
    on the other half; a context where the other half has no verdict on writers is left out.
    """
    a_human, b_human = _sides(comparisons, humans)
    mixed = _with_best(comparisons[a_human ^ b_human])
    if cross_fit:
        mixed = mixed.assign(fold=judge_folds(mixed))
        records = _records(mixed, humans)
        parts = []
        for fold in (0, 1):
            chosen = _best(records[records["fold"] == 1 - fold])
            parts.append(_keep_chosen(mixed[mixed["fold"] == fold], humans, chosen))
        kept = pd.concat(parts)
    else:
        kept = _keep_chosen(mixed, humans, _best(_records(mixed, humans)))
    return kept.drop(columns=["fold"], errors="ignore").reset_index(drop=True)


def _with_best(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with BEST allowed in its system columns (categorical ones get the category)."""
    columns = {}
    for side in ("system_a", "system_b"):
        column = frame[side]
        if isinstance(column.dtype, pd.CategoricalDtype):
            if BEST not in column.cat.categories:
                columns[side] = column.cat.add_categories([BEST])
        else:
            columns[side] = column.astype(object)
    return frame.assign(**columns)


def _keep_chosen(mixed: pd.DataFrame, humans: Collection[str], chosen: pd.Series) -> pd.DataFrame:
    a_human, b_human = _sides(mixed, humans)
    pick = mixed["context"].map(chosen)
    a_best = a_human & (mixed["system_a"] == pick)
    b_best = b_human & (mixed["system_b"] == pick)
    kept = mixed[a_best | b_best].copy()
    kept.loc[a_best[kept.index], "system_a"] = BEST
    kept.loc[b_best[kept.index], "system_b"] = BEST
    return kept


def align_row(
    derived: pd.DataFrame, main: pd.DataFrame, name: str, reference: list[str]
) -> dict[str, Any]:
    """The derived system's row, shifted onto the main table's Elo scale: the shift makes the
    ``reference`` systems (the main fit's well-connected ones, or its anchor) that both fits
    share have the same mean Elo in both."""
    shared = [s for s in reference if s in derived.index and s in main.index and s != name]
    if not shared:
        shared = list(derived.index.intersection(main.index).difference([name]))
    shift = float(main.loc[shared, "elo"].mean() - derived.loc[shared, "elo"].mean())
    if not shared:
        shift = 0.0
    row = derived.loc[name]
    assert isinstance(row, pd.Series)  # the fit has one row per system
    return {
        "system": name,
        "elo": float(row["elo"]) + shift,
        "ci_low": float(row["ci_low"]) + shift,
        "ci_high": float(row["ci_high"]) + shift,
        "se": float(row["se"]),
        "win_rate": float(row["win_rate"]),
        "n": int(row["n"]),
    }


def best_human_row(
    comparisons: pd.DataFrame,
    humans: Collection[str],
    main: pd.DataFrame,
    fit: Callable[[pd.DataFrame], pd.DataFrame],
    *,
    reference: list[str],
    cross_fit: bool = True,
) -> dict[str, Any] | None:
    """The "Best human (per context)" row: its comparisons fitted with ``fit`` and aligned."""
    if not len(humans) or comparisons.empty:
        return None
    cross_fit = cross_fit and {"item", "judge"} <= set(comparisons.columns)
    derived = best_human_comparisons(comparisons, humans, cross_fit=cross_fit)
    if derived.empty:
        return None
    a_human, b_human = _sides(comparisons, humans)
    others = _with_best(comparisons[~(a_human | b_human)])
    joined = pd.concat([others, derived], ignore_index=True)
    for side in ("system_a", "system_b"):  # one category list on both sides: codes, no strings
        if isinstance(others[side].dtype, pd.CategoricalDtype):
            new = pd.Index(derived[side].astype(object).unique())
            categories = others[side].cat.categories.union(new)
            joined[side] = pd.Categorical(joined[side].astype(object), categories=categories)
    table = fit(joined)
    if BEST not in table.index:
        return None
    row = align_row(table, main, BEST, reference)
    row.update({"cross_fitted": cross_fit, "note": BEST_NOTE if cross_fit else BEST_NOTE_IN_SAMPLE})
    return row
