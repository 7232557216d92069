"""Agreement and reliability statistics of pairwise judgments (paper 4.2, 4.4, 9.9).

Pure pandas/numpy/scipy/statsmodels: no Django import.

Input: a judgments DataFrame, one row per verdict, with columns

* ``item``: the pair judged (any hashable); ``judge``: opaque judge id;
  ``judge_kind``: "human" | "llm"; optional ``judge_family`` and ``context``;
* ``winner``: "a" | "b" | "tie", in the pair's canonical orientation (not the shown order);
* ``strength`` (float or NaN) on the judge's own scale, ``strength_max`` (2 for the
  human 5-point scale, 5 for an LLM's 1-5, NaN if none);
* ``shown_left``: "a" | "b" | None, which reply was displayed on the left;
* optional per-axis verdicts ``axis_H`` .. ``axis_T`` holding "a" | "b" | "tie" | None.

Which reply of a pair is stored as "a" is an accident of storage, so kappa and alpha count every
pair in both orientations (its verdict counts and their mirror image, a and b swapped): their
chance agreement then treats "a" and "b" alike, and storing a pair the other way round changes
no statistic. (Counted once, the shares of "a" and "b" verdicts, and with them chance
agreement, would move with the storage order.)

Conventions shared by every function here: a verdict category is one of a / tie / b
(a tie is its own category, never half of something); null verdicts are ignored; a judge
counts once per item and order shown (``shown_left``): an LLM judge's two position-swapped
verdicts are two votes, never one dropped (pass the frame through
:func:`ranking.verdicts.counted` first to apply a study's rule, e.g. one consistent verdict);
a repeated row for the same item, judge and order keeps the last. Every agreement rate comes
with ties (a tie must be matched by a tie) and, as MT-Bench reports it, without ties
(only cases where neither side is a tie). Intervals resample clusters (``cluster`` column,
else ``context``, else items).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binom
from statsmodels.stats import inter_rater

CATEGORIES = ["a", "tie", "b"]
AXES = ["H", "E", "A", "R", "T"]

#: A human majority is "clear" when its share of the item's human verdicts is at least
#: this: 4 of 5 raters (0.8) or 3 of 3 are clear; 3 of 5 (0.6) or 2 of 3 are not.
CLEAR_MAJORITY = 0.7


@dataclass(frozen=True)
class AgreementRate:
    """A share of agreeing cases, the number of cases ``n`` and an optional interval."""

    rate: float
    n: int
    ci_low: float = math.nan
    ci_high: float = math.nan


# --------------------------------------------------------------------------- helpers


def _one_per_vote(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, judge, order shown): the two orders of an LLM judge both stay."""
    keys = ["item", "judge", "shown_left"] if "shown_left" in rows.columns else ["item", "judge"]
    return rows.drop_duplicates(keys, keep="last")


def _verdicts(judgments: pd.DataFrame, kind: str | None, column: str = "winner") -> pd.DataFrame:
    """Non-null verdicts of one judge kind (None = all), one per (item, judge, order shown)."""
    rows = judgments if kind in (None, "all") else judgments[judgments["judge_kind"] == kind]
    if column not in rows.columns:
        return pd.DataFrame(columns=["item", "judge", "value"])
    rows = _one_per_vote(rows[rows[column].notna()])
    # Column dtypes are kept (categories stay categories: no per-row strings).
    return rows[["item", "judge", column]].rename(columns={column: "value"}).reset_index(drop=True)


def _count_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Items x categories (a, tie, b) counts of verdicts."""
    # groupby().size() counts in C; pd.crosstab aggregates item by item in Python (100x slower).
    table = verdicts.groupby(["item", "value"], sort=True).size().unstack(fill_value=0)
    table.columns.name = "value"
    return table.reindex(columns=CATEGORIES, fill_value=0)


def _plurality(table: pd.DataFrame) -> pd.DataFrame:
    """Per item: the strict-plurality category (None if the top count is shared) and its share."""
    counts = table.to_numpy()
    if len(counts) == 0:
        return pd.DataFrame({"winner": pd.Series(dtype=object), "share": pd.Series(dtype=float)})
    ordered = np.sort(counts, axis=1)
    strict = ordered[:, -1] > ordered[:, -2]
    top = np.asarray(table.columns)[counts.argmax(axis=1)]
    # dtype=object keeps None (a str dtype would turn it into NaN).
    winner = pd.Series(top, index=table.index, dtype=object).where(strict, None)
    share = pd.Series(ordered[:, -1] / counts.sum(axis=1), index=table.index)
    return pd.DataFrame({"winner": winner, "share": share})


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, float | np.floating) and math.isnan(value):
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


# --------------------------------------------------------------------------- kappa & alpha


def fleiss_kappa_table(counts: np.ndarray | pd.DataFrame) -> float:
    """Fleiss' kappa of an items x categories table of rating counts.

    Items with fewer than two ratings are dropped. When every remaining item has the same
    number of ratings this is statsmodels' ``fleiss_kappa`` (Fleiss 1971). When the counts
    differ, it uses the usual generalisation to varying numbers of raters: per-item
    agreement P_i = (sum_k n_ik^2 - n_i) / (n_i (n_i - 1)) averaged over items, chance
    agreement from the pooled category shares. It equals Fleiss' formula for equal counts.
    NaN with no items, or when every rating falls in one category (kappa undefined).
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2:
        return math.nan
    table = table[table.sum(axis=1) >= 2]
    if len(table) == 0:
        return math.nan
    per_item = table.sum(axis=1)
    p_cat = table.sum(axis=0) / table.sum()
    expected = float((p_cat**2).sum())
    if expected >= 1.0 - 1e-12:
        return math.nan
    if np.all(per_item == per_item[0]):
        return float(inter_rater.fleiss_kappa(table, method="fleiss"))
    observed = ((table**2).sum(axis=1) - per_item) / (per_item * (per_item - 1))
    return float((observed.mean() - expected) / (1.0 - expected))


def fleiss_kappa(
    judgments: pd.DataFrame, *, kind: str | None = "human", column: str = "winner"
) -> float:
    """Fleiss' kappa over categories a / tie / b of ``column`` ("winner" or "axis_H" ...).

    Counts the verdicts of judges of ``kind`` (None: all judges) per item, every item in both
    orientations (see the module doc); items with fewer than two verdicts are dropped;
    unequal numbers of raters per item are handled by the varying-raters formula (see
    :func:`fleiss_kappa_table`). NaN with no items.
    """
    verdicts = _verdicts(judgments, kind, column)
    if verdicts.empty:
        return math.nan
    return fleiss_kappa_table(both_orientations(_count_table(verdicts).to_numpy(dtype=float)))


def both_orientations(counts: np.ndarray) -> np.ndarray:
    """An items x ordered-categories table (a, tie, b; or the 5-point scale) stacked on its
    mirror image: every pair counted once as stored and once the other way round."""
    table = np.asarray(counts, dtype=float)
    return np.vstack([table, table[:, ::-1]])


def five_point_scale(judgments: pd.DataFrame) -> pd.Series:
    """Map verdicts to the 5-point scale 1..5 (A significantly .. tie=3 .. B significantly).

    A verdict is "significant" when its strength is in the upper half of the judge's
    scale, (strength - 1) / (strength_max - 1) >= 0.5: for the human scale (max 2) a 2 is
    "significantly" and a 1 "slightly". A winner with unknown strength goes to 2 / 4.
    """
    strength = judgments.get("strength", pd.Series(np.nan, index=judgments.index)).astype(float)
    smax = judgments.get("strength_max", pd.Series(np.nan, index=judgments.index)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        significant = ((strength - 1.0) / (smax - 1.0)).to_numpy() >= 0.5
    winner = judgments["winner"].to_numpy(dtype=object)
    scale = np.select(
        [winner == "tie", winner == "a", winner == "b"],
        [3.0, np.where(significant, 1.0, 2.0), np.where(significant, 5.0, 4.0)],
        default=np.nan,
    )
    return pd.Series(scale, index=judgments.index)


def krippendorff_alpha(
    judgments: pd.DataFrame, *, kind: str | None = "human", level: str = "ordinal"
) -> float:
    """Krippendorff's alpha of the overall verdict on the 5-point scale (paper 9.9).

    Verdicts are mapped by :func:`five_point_scale`, one per judge and item, every item
    counted in both orientations (see the module doc). Ordinal by default (ties sit in the
    middle of the scale); "interval" and "nominal" also work. Computed from each item's counts
    of the five values (see :func:`alpha_from_counts`), which is what the `krippendorff`
    package computes from the judges x items matrix, without building that matrix. NaN when
    no item has two or more verdicts, or a single value occurs.
    """
    rows = judgments if kind in (None, "all") else judgments[judgments["judge_kind"] == kind]
    rows = rows.assign(scale=five_point_scale(rows)).dropna(subset=["scale"])
    rows = rows.drop_duplicates(["item", "judge"], keep="last")
    if rows.empty:
        return math.nan
    counts = rows.groupby(["item", "scale"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=[1.0, 2.0, 3.0, 4.0, 5.0], fill_value=0)
    return alpha_from_counts(both_orientations(counts.to_numpy(dtype=float)), level=level)


def alpha_from_counts(counts: np.ndarray, *, level: str = "ordinal") -> float:
    """Krippendorff's alpha from an items x values table of counts (values in scale order).

    Coincidences o_ck = sum over items with m >= 2 values of n_c (n_k - [c = k]) / (m - 1);
    alpha = 1 - (n - 1) sum o_ck d_ck / sum n_c n_k d_ck with n_c = sum_k o_ck, and d the
    squared distance of the level: nominal [c != k], interval (c - k)^2 on the ranks 1..5,
    ordinal (sum of n_g for g from c to k - (n_c + n_k) / 2)^2 (Krippendorff 2011).
    """
    table = np.asarray(counts, dtype=float)
    m = table.sum(axis=1)
    table, m = table[m >= 2], m[m >= 2]
    if len(table) == 0:
        return math.nan
    weighted = table / (m - 1.0)[:, None]
    coincidence = weighted.T @ table - np.diag(weighted.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    if (n_c > 0).sum() < 2:
        return math.nan
    delta = _distance(n_c, level)
    expected = (np.outer(n_c, n_c) * delta).sum()
    return float(1.0 - (n - 1.0) * (coincidence * delta).sum() / expected)


def _distance(n_c: np.ndarray, level: str) -> np.ndarray:
    values = np.arange(len(n_c), dtype=float)
    if level == "nominal":
        return 1.0 - np.eye(len(n_c))
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level != "ordinal":
        raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', not {level!r}")
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
    low = np.minimum.outer(values, values).astype(int)
    high = np.maximum.outer(values, values).astype(int)
    between = cumulative[high + 1] - cumulative[low]
    distances: np.ndarray = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    return distances


# --------------------------------------------------------------------------- agreement rates


def inter_human_agreement(judgments: pd.DataFrame, *, column: str = "winner") -> AgreementRate:
    """Mean over items with >= 2 human verdicts of the share of agreeing judge pairs.

    This is Fleiss' observed agreement P-bar on a / tie / b (two ties agree; a tie and a
    win do not). ``n`` is the number of items counted.
    """
    table = _count_table(_verdicts(judgments, "human", column)).to_numpy(dtype=float)
    table = table[table.sum(axis=1) >= 2] if len(table) else table
    if len(table) == 0:
        return AgreementRate(math.nan, 0)
    per_item = table.sum(axis=1)
    observed = ((table**2).sum(axis=1) - per_item) / (per_item * (per_item - 1))
    return AgreementRate(float(observed.mean()), len(table))


def majority(
    judgments: pd.DataFrame,
    kind: str | None = "human",
    *,
    column: str = "winner",
    min_verdicts: int = 1,
) -> pd.Series:
    """Per item, the strict plurality of a / tie / b among verdicts of ``kind``.

    None when the largest count is shared (e.g. 2 a, 2 b, 1 tie; or 1 a and 1 b), so an
    item never gets a majority by an arbitrary tie-break, and when the item has fewer than
    ``min_verdicts`` verdicts of that kind. Indexed by item.
    """
    table = _count_table(_verdicts(judgments, kind, column))
    plural = _plurality(table)["winner"]
    plural[table.sum(axis=1) < min_verdicts] = None
    return plural.rename("majority")


def _units(judgments: pd.DataFrame, items: pd.Index) -> pd.Series:
    """The resampling unit of each item: its cluster, else its context, else the item."""
    for column in ("cluster", "context"):
        if column in judgments.columns:
            return judgments.drop_duplicates("item").set_index("item")[column].reindex(items)
    return pd.Series(items, index=items)


def _bootstrap_rate(
    matches: pd.Series, units: pd.Series, n_boot: int, seed: int, alpha: float
) -> tuple[float, float]:
    """Percentile interval of a match rate (mean over cases), resampling units."""
    if n_boot <= 0 or len(matches) == 0:
        return math.nan, math.nan
    grouped = matches.astype(float).groupby(units.to_numpy())
    hits, counts = grouped.sum().to_numpy(), grouped.count().to_numpy(dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(hits), (n_boot, len(hits)))
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = hits[picks].sum(axis=1) / counts[picks].sum(axis=1)
    low, high = np.nanpercentile(rates, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def human_llm_agreement(
    judgments: pd.DataFrame,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    ambiguous: bool = False,
    ties: bool = True,
    min_human: int = 2,
) -> AgreementRate:
    """Share of items where the LLM-ensemble majority matches the human majority (paper 9.9).

    Counted over items having both a human majority (a strict plurality of at least
    ``min_human`` human verdicts) and an LLM strict-plurality majority (every LLM verdict a
    vote, both orders of a swapped pair included); see :func:`majority`. ``ties=True``: a tie
    is a category, so a "tie" majority must be matched by "tie"; ``ties=False`` (MT-Bench's
    "without tie"): only items where neither majority is a tie. ``ambiguous=True`` keeps only
    items whose human majority is not clear, i.e. holds less than ``CLEAR_MAJORITY`` of the
    human verdicts (3 of 5). The interval is a percentile bootstrap resampling clusters.
    """
    table = _count_table(_verdicts(judgments, "human"))
    humans = _plurality(table)[table.sum(axis=1) >= min_human]
    llms = majority(judgments, "llm")
    both = humans.join(llms, how="inner").dropna(subset=["winner", "majority"])
    if ambiguous:
        both = both[both["share"] < CLEAR_MAJORITY]
    if not ties:
        both = both[(both["winner"] != "tie") & (both["majority"] != "tie")]
    if both.empty:
        return AgreementRate(math.nan, 0)
    matches = pd.Series(both["winner"].to_numpy() == both["majority"].to_numpy(), index=both.index)
    low, high = _bootstrap_rate(matches, _units(judgments, both.index), n_boot, seed, alpha)
    return AgreementRate(float(matches.mean()), len(matches), low, high)


def llm_judge_human_agreement(
    judgments: pd.DataFrame, *, ties: bool = True, min_human: int = 2
) -> dict[str, AgreementRate]:
    """Per LLM judge: over its verdicts on items with a human majority, the share matching it.

    Every verdict counts (a judge's two orders are two verdicts, so a pair it judged
    inconsistently scores a half). ``ties=False`` leaves out verdicts and majorities that are
    ties. ``n`` counts verdicts. The per-judge counterpart of :func:`human_llm_agreement`.
    """
    humans = majority(judgments, "human", min_verdicts=min_human).dropna()
    votes = _verdicts(judgments, "llm")
    votes = votes[votes["item"].isin(humans.index)]
    if not ties:
        votes = votes[(votes["value"] != "tie") & (votes["item"].map(humans) != "tie")]
    same = votes["value"].to_numpy(dtype=object) == votes["item"].map(humans).to_numpy(dtype=object)
    rates = pd.Series(same, index=votes.index).groupby(votes["judge"].to_numpy())
    return {
        str(judge): AgreementRate(float(group.mean()), len(group))
        for judge, group in sorted(rates, key=lambda kv: str(kv[0]))
    }


def _llm_counts(judgments: pd.DataFrame, by: str) -> pd.DataFrame:
    """(item, judge or family) x a / tie / b counts of LLM verdicts."""
    rows = judgments[(judgments["judge_kind"] == "llm") & judgments["winner"].notna()]
    if by not in rows.columns:
        return pd.DataFrame(columns=CATEGORIES)
    rows = _one_per_vote(rows[rows[by].notna()])
    counts = rows.groupby(["item", by, "winner"]).size().unstack("winner", fill_value=0)
    return counts.reindex(columns=CATEGORIES, fill_value=0)


def _pair_agreement(left: np.ndarray, right: np.ndarray, ties: bool) -> np.ndarray:
    """Per item, the share of (left vote, right vote) pairs that agree (counts: items x a/tie/b).

    Without ties, only pairs where neither vote is a tie count (NaN when there is none).
    """
    if not ties:
        left, right = left[:, [0, 2]], right[:, [0, 2]]
    with np.errstate(invalid="ignore", divide="ignore"):
        cosines: np.ndarray = (left * right).sum(axis=1) / (left.sum(axis=1) * right.sum(axis=1))
        return cosines


def cross_judge_agreement(
    judgments: pd.DataFrame, *, by: str = "judge", ties: bool = True
) -> dict[str, AgreementRate]:
    """Agreement between every pair of LLM judges (``by="judge_family"``: judge families).

    For the pair "X|Y" (names sorted): over items both judged, the mean share of agreeing
    (X vote, Y vote) pairs, every vote counted (a judge's two orders are two votes; a tie only
    matches a tie). ``ties=False`` counts only pairs of votes where neither is a tie. Pairs
    that share no item are left out.
    """
    counts = _llm_counts(judgments, by)
    result: dict[str, AgreementRate] = {}
    if counts.empty:
        return result
    names = sorted(counts.index.get_level_values(by).unique(), key=str)
    per = {name: counts.xs(name, level=by) for name in names}
    for left, right in itertools.combinations(names, 2):
        items = per[left].index.intersection(per[right].index)
        if not len(items):
            continue
        shares = _pair_agreement(
            per[left].loc[items].to_numpy(float), per[right].loc[items].to_numpy(float), ties
        )
        shares = shares[~np.isnan(shares)]
        if len(shares):
            result[f"{left}|{right}"] = AgreementRate(float(shares.mean()), len(shares))
    return result


def three_way_agreement(judgments: pd.DataFrame, *, by: str = "judge") -> AgreementRate:
    """Share of items with verdicts from >= 3 LLM judges (or families) on which every vote
    agrees (a judge's two orders included)."""
    counts = _llm_counts(judgments, by)
    if counts.empty:
        return AgreementRate(math.nan, 0)
    judges = counts.groupby(level="item").size()
    totals = counts.groupby(level="item").sum()[judges >= 3]
    if totals.empty:
        return AgreementRate(math.nan, 0)
    unanimous = (totals > 0).sum(axis=1) == 1
    return AgreementRate(float(unanimous.mean()), len(totals))


def two_sided_half_p(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Exact two-sided binomial test p-values against 1/2, vectorised: the distribution is
    symmetric, so p = min(1, 2 min(P(X <= k), P(X >= k))) (scipy's binomtest, one at a time)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    tail = np.minimum(binom.cdf(k, n, 0.5), binom.sf(k - 1, n, 0.5))
    return np.minimum(1.0, 2.0 * tail)


def position_bias(judgments: pd.DataFrame, *, kind: str | None = None) -> pd.DataFrame:
    """Per judge: how often a non-tie verdict chose the reply shown on the left.

    Counts verdicts with a known ``shown_left`` and a winner of a or b (ties carry no
    side). Columns: judge_kind, n, left (count), left_share and the two-sided exact
    binomial test p-value against 1/2. Indexed by judge.
    """
    rows = judgments if kind in (None, "all") else judgments[judgments["judge_kind"] == kind]
    if "shown_left" not in rows.columns:
        rows = rows.iloc[0:0].assign(shown_left=None)
    rows = rows[rows["shown_left"].isin(["a", "b"]) & rows["winner"].isin(["a", "b"])]
    chose_left = (rows["winner"] == rows["shown_left"]).astype(int)
    grouped = chose_left.groupby(rows["judge"])
    frame = pd.DataFrame({"n": grouped.size(), "left": grouped.sum()})
    frame["left_share"] = frame["left"] / frame["n"]
    frame["p_value"] = two_sided_half_p(frame["left"].to_numpy(), frame["n"].to_numpy())
    kinds = rows.drop_duplicates("judge").set_index("judge")["judge_kind"]
    frame.insert(0, "judge_kind", kinds.reindex(frame.index))
    frame.index.name = "judge"
    return frame


# --------------------------------------------------------------------------- summary


def agreement_summary(
    judgments: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0, min_human: int = 2
) -> dict[str, Any]:
    """Every agreement statistic of this module in one JSON-serialisable dict (NaN -> None).

    Keys: ``fleiss_kappa`` (human, overall verdict), ``fleiss_kappa_axes`` ({axis: kappa}
    for the axis columns present), ``krippendorff_alpha`` (human, ordinal 5-point),
    ``inter_human_agreement`` and ``inter_human_n``, ``human_llm_agreement``,
    ``human_llm_agreement_no_ties`` and ``human_llm_agreement_ambiguous`` ({rate, ci_low,
    ci_high, n}), ``llm_judge_human_agreement`` ({judge: rate}, see
    :func:`llm_judge_human_agreement`), ``cross_judge_agreement`` and
    ``cross_judge_agreement_no_ties`` ({"X|Y": rate}) with ``cross_judge_n``,
    ``three_way_agreement`` and ``three_way_n``, ``position_bias`` ({judge: left share}),
    ``human_majority_min_verdicts``.
    """
    axes = [axis for axis in AXES if f"axis_{axis}" in judgments.columns]
    inter_human = inter_human_agreement(judgments)
    cross = cross_judge_agreement(judgments)
    cross_no_ties = cross_judge_agreement(judgments, ties=False)
    three_way = three_way_agreement(judgments)
    bias = position_bias(judgments)
    rate = partial(human_llm_agreement, judgments, n_boot=n_boot, seed=seed, min_human=min_human)
    summary = {
        "fleiss_kappa": fleiss_kappa(judgments),
        "fleiss_kappa_axes": {a: fleiss_kappa(judgments, column=f"axis_{a}") for a in axes},
        "krippendorff_alpha": krippendorff_alpha(judgments),
        "inter_human_agreement": inter_human.rate,
        "inter_human_n": inter_human.n,
        "human_llm_agreement": asdict(rate()),
        "human_llm_agreement_no_ties": asdict(rate(ties=False)),
        "human_llm_agreement_ambiguous": asdict(rate(ambiguous=True)),
        "llm_judge_human_agreement": {
            judge: r.rate
            for judge, r in llm_judge_human_agreement(judgments, min_human=min_human).items()
        },
        "cross_judge_agreement": {pair: r.rate for pair, r in cross.items()},
        "cross_judge_agreement_no_ties": {pair: r.rate for pair, r in cross_no_ties.items()},
        "cross_judge_n": {pair: r.n for pair, r in cross.items()},
        "three_way_agreement": three_way.rate,
        "three_way_n": three_way.n,
        "position_bias": bias["left_share"].to_dict(),
        "human_majority_min_verdicts": min_human,
    }
    plain: dict[str, Any] = _nan_to_none(summary)
    return plain
