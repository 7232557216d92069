"""Human writers as derived leaderboard rows (paper 4.2, 9.3). Pure pandas: no Django.

- "Humans (pooled)": every human system's comparisons as one system. Comparisons between two
  human systems would compare the pooled system with itself and are dropped.
- "Average Human" (the paper's "top-scoring completion per context"): in each context, the
  human completion with the best record *in that context* is chosen: highest score
  (wins + half the ties, unweighted) divided by its comparisons there; ties broken by more
  comparisons, then by the system name (so the choice is reproducible). Only the chosen
  completion's comparisons against non-human systems are kept, as one system.

Each derived row comes from its own fit (the other systems as they are, the humans replaced
by the derived system), and is shifted so that the systems both fits share have the same mean
Elo as in the main table: the derived row reads on the main table's scale.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import pandas as pd

POOLED = "Humans (pooled)"
AVERAGE = "Average Human"


def _sides(comparisons: pd.DataFrame, humans: Collection[str]) -> tuple[pd.Series, pd.Series]:
    humans = list(humans)
    return comparisons["system_a"].isin(humans), comparisons["system_b"].isin(humans)


def pooled_comparisons(comparisons: pd.DataFrame, humans: Collection[str]) -> pd.DataFrame:
    a_human, b_human = _sides(comparisons, humans)
    kept = comparisons[~(a_human & b_human)].copy()
    kept.loc[a_human[kept.index], "system_a"] = POOLED
    kept.loc[b_human[kept.index], "system_b"] = POOLED
    return kept.reset_index(drop=True)


def best_human_per_context(comparisons: pd.DataFrame, humans: Collection[str]) -> dict:
    """Context -> the human system with the best record in that context (rule above)."""
    a_human, b_human = _sides(comparisons, humans)
    score_a = comparisons["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5})
    records = pd.concat(
        [
            pd.DataFrame(
                {
                    "context": comparisons.loc[a_human, "context"],
                    "system": comparisons.loc[a_human, "system_a"],
                    "score": score_a[a_human],
                }
            ),
            pd.DataFrame(
                {
                    "context": comparisons.loc[b_human, "context"],
                    "system": comparisons.loc[b_human, "system_b"],
                    "score": 1.0 - score_a[b_human],
                }
            ),
        ]
    )
    if records.empty:
        return {}
    table = records.groupby(["context", "system"])["score"].agg(["mean", "count"]).reset_index()
    table = table.sort_values(
        ["context", "mean", "count", "system"], ascending=[True, False, False, True]
    )
    best = table.drop_duplicates("context")
    return dict(zip(best["context"], best["system"], strict=True))


def average_human_comparisons(comparisons: pd.DataFrame, humans: Collection[str]) -> pd.DataFrame:
    best = best_human_per_context(comparisons, humans)
    a_human, b_human = _sides(comparisons, humans)
    chosen = comparisons["context"].map(best)
    a_best = a_human & (comparisons["system_a"] == chosen)
    b_best = b_human & (comparisons["system_b"] == chosen)
    keep = (~a_human & ~b_human) | (a_best & ~b_human) | (b_best & ~a_human)
    kept = comparisons[keep].copy()
    kept.loc[a_best[kept.index], "system_a"] = AVERAGE
    kept.loc[b_best[kept.index], "system_b"] = AVERAGE
    return kept.reset_index(drop=True)


def align_row(derived: pd.DataFrame, main: pd.DataFrame, name: str) -> dict | None:
    """The derived system's row, shifted onto the main table's Elo scale (see module doc)."""
    if name not in derived.index:
        return None
    shared = derived.index.intersection(main.index).difference([name])
    shift = float(main.loc[shared, "elo"].mean() - derived.loc[shared, "elo"].mean())
    if shared.empty:
        shift = 0.0
    row = derived.loc[name]
    return {
        "system": name,
        "elo": float(row["elo"]) + shift,
        "ci_low": float(row["ci_low"]) + shift,
        "ci_high": float(row["ci_high"]) + shift,
        "win_rate": float(row["win_rate"]),
        "n": int(row["n"]),
    }


def derived_rows(
    comparisons: pd.DataFrame,
    humans: Collection[str],
    main: pd.DataFrame,
    fit: Callable[[pd.DataFrame], pd.DataFrame],
) -> list[dict]:
    """The two derived rows (those that have comparisons), fitted with `fit`."""
    if not len(humans) or comparisons.empty:
        return []
    rows = []
    for name, derive in ((POOLED, pooled_comparisons), (AVERAGE, average_human_comparisons)):
        derived = derive(comparisons, humans)
        if derived.empty:
            continue
        row = align_row(fit(derived), main, name)
        if row is not None:
            rows.append(row)
    return rows
