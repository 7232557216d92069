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

Conventions shared by every function here: a verdict category is one of a / tie / b
(a tie is its own category, never half of something); null verdicts are ignored; a judge
counts once per item (if a judge has several rows for an item, the last row is used).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

import krippendorff
import numpy as np
import pandas as pd
from scipy.stats import binomtest
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


def _verdicts(judgments: pd.DataFrame, kind: str | None, column: str = "winner") -> pd.DataFrame:
    """Non-null verdicts of one judge kind (None = all), one per (item, judge)."""
    rows = judgments if kind in (None, "all") else judgments[judgments["judge_kind"] == kind]
    if column not in rows.columns:
        return pd.DataFrame(columns=["item", "judge", "value"])
    rows = rows[rows[column].notna()]
    rows = rows.drop_duplicates(["item", "judge"], keep="last")
    return pd.DataFrame(
        {
            "item": rows["item"].to_numpy(),
            "judge": rows["judge"].to_numpy(),
            "value": rows[column].to_numpy(dtype=object),
        }
    )


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
    winner = pd.Series(np.where(strict, top, None), index=table.index, dtype=object)
    share = pd.Series(ordered[:, -1] / counts.sum(axis=1), index=table.index)
    return pd.DataFrame({"winner": winner, "share": share})


def _nan_to_none(value):
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

    Counts the verdicts of judges of ``kind`` (None: all judges) per item; items with
    fewer than two verdicts are dropped; unequal numbers of raters per item are handled
    by the varying-raters formula (see :func:`fleiss_kappa_table`). NaN with no items.
    """
    verdicts = _verdicts(judgments, kind, column)
    if verdicts.empty:
        return math.nan
    return fleiss_kappa_table(_count_table(verdicts))


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

    Verdicts are mapped by :func:`five_point_scale`; the reliability data are judges x
    items with missing cells. Ordinal by default (ties sit in the middle of the scale).
    NaN when fewer than two items have two or more verdicts.
    """
    rows = judgments if kind in (None, "all") else judgments[judgments["judge_kind"] == kind]
    rows = rows.assign(scale=five_point_scale(rows)).dropna(subset=["scale"])
    rows = rows.drop_duplicates(["item", "judge"], keep="last")
    matrix = rows.pivot(index="judge", columns="item", values="scale")
    pairable = (matrix.notna().sum(axis=0) >= 2).sum()
    if pairable == 0 or rows["scale"].nunique() < 2:
        return math.nan
    return float(
        krippendorff.alpha(
            reliability_data=matrix.to_numpy(dtype=float),
            value_domain=[1.0, 2.0, 3.0, 4.0, 5.0],
            level_of_measurement=level,
        )
    )


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
    judgments: pd.DataFrame, kind: str | None = "human", *, column: str = "winner"
) -> pd.Series:
    """Per item, the strict plurality of a / tie / b among verdicts of ``kind``.

    None when the largest count is shared (e.g. 2 a, 2 b, 1 tie; or 1 a and 1 b), so an
    item never gets a majority by an arbitrary tie-break. Indexed by item.
    """
    verdicts = _verdicts(judgments, kind, column)
    return _plurality(_count_table(verdicts))["winner"].rename("majority")


def _bootstrap_rate(
    matches: pd.Series, units: pd.Series, n_boot: int, seed: int, alpha: float
) -> tuple[float, float]:
    """Percentile interval of a match rate, resampling units (contexts or items)."""
    if n_boot <= 0 or len(matches) == 0:
        return math.nan, math.nan
    grouped = matches.astype(float).groupby(units.to_numpy())
    hits, counts = grouped.sum().to_numpy(), grouped.count().to_numpy(dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(len(hits), np.full(len(hits), 1.0 / len(hits)), size=n_boot)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = (draws @ hits) / (draws @ counts)
    low, high = np.nanpercentile(rates, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def human_llm_agreement(
    judgments: pd.DataFrame,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    ambiguous: bool = False,
) -> AgreementRate:
    """Share of items where the LLM-ensemble majority matches the human majority (paper 9.9).

    Counted over items having both a human and an LLM strict-plurality majority (see
    :func:`majority`; a tie is a category, so a "tie" majority must be matched by "tie").
    ``ambiguous=True`` keeps only items whose human majority is not clear, i.e. holds less
    than ``CLEAR_MAJORITY`` of the human verdicts (3 of 5). The interval is a percentile
    bootstrap resampling contexts when a ``context`` column is present, else items.
    """
    humans = _plurality(_count_table(_verdicts(judgments, "human")))
    llms = majority(judgments, "llm")
    both = humans.join(llms, how="inner").dropna(subset=["winner", "majority"])
    if ambiguous:
        both = both[both["share"] < CLEAR_MAJORITY]
    if both.empty:
        return AgreementRate(math.nan, 0)
    matches = pd.Series(both["winner"].to_numpy() == both["majority"].to_numpy(), index=both.index)
    units = pd.Series(both.index, index=both.index)
    if "context" in judgments.columns:
        context_of = judgments.drop_duplicates("item").set_index("item")["context"]
        units = context_of.reindex(both.index)
    low, high = _bootstrap_rate(matches, units, n_boot, seed, alpha)
    return AgreementRate(float(matches.mean()), len(matches), low, high)


def llm_judge_human_agreement(judgments: pd.DataFrame) -> dict[str, AgreementRate]:
    """Per LLM judge: share of items with a human majority where its winner matches it.

    The per-judge counterpart of :func:`human_llm_agreement` (paper 4.4 reports the average
    over judges, 78.7%, and names the judges that agree most and least with humans).
    """
    humans = majority(judgments, "human").dropna()
    votes = _llm_votes(judgments, "judge")
    result: dict[str, AgreementRate] = {}
    for judge in sorted(votes.columns, key=str):
        both = pd.concat([votes[judge], humans], axis=1, join="inner").dropna()
        if len(both):
            same = (both.iloc[:, 0] == both.iloc[:, 1]).mean()
            result[str(judge)] = AgreementRate(float(same), len(both))
    return result


def _llm_votes(judgments: pd.DataFrame, by: str) -> pd.DataFrame:
    """Items x LLM judges (or judge families) table of winners; a family votes by plurality."""
    rows = judgments[(judgments["judge_kind"] == "llm") & judgments["winner"].notna()]
    rows = rows.drop_duplicates(["item", "judge"], keep="last")
    if rows.empty:
        return pd.DataFrame()
    if by == "judge":
        return rows.pivot(index="item", columns="judge", values="winner")
    counts = rows.groupby(["item", by, "winner"]).size().unstack("winner", fill_value=0)
    plural = _plurality(counts.reindex(columns=CATEGORIES, fill_value=0))["winner"]
    return plural.unstack(by)


def cross_judge_agreement(
    judgments: pd.DataFrame, *, by: str = "judge"
) -> dict[str, AgreementRate]:
    """Agreement between every pair of LLM judges (``by="judge_family"``: judge families).

    For the pair "X|Y" (names sorted): over items both judged, the share of identical
    winners (a / tie / b; tie only matches tie). Pairs that share no item are left out.
    """
    votes = _llm_votes(judgments, by)
    result: dict[str, AgreementRate] = {}
    for left, right in itertools.combinations(sorted(votes.columns, key=str), 2):
        both = votes[[left, right]].dropna()
        if len(both):
            same = (both[left] == both[right]).mean()
            result[f"{left}|{right}"] = AgreementRate(float(same), len(both))
    return result


def three_way_agreement(judgments: pd.DataFrame, *, by: str = "judge") -> AgreementRate:
    """Share of items with verdicts from >= 3 LLM judges (or families) on which all agree."""
    votes = _llm_votes(judgments, by)
    if votes.empty:
        return AgreementRate(math.nan, 0)
    judged = votes.notna().sum(axis=1)
    votes = votes[judged >= 3]
    if votes.empty:
        return AgreementRate(math.nan, 0)
    # Unanimous: every present verdict equals the row's first present one (vectorised nunique).
    values = votes.to_numpy(dtype=object)
    present = votes.notna().to_numpy()
    first = values[np.arange(len(values)), present.argmax(axis=1)][:, None]
    unanimous = ((values == first) | ~present).all(axis=1)
    return AgreementRate(float(unanimous.mean()), len(votes))


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
    frame["p_value"] = [
        binomtest(int(k), int(n), 0.5).pvalue
        for k, n in zip(frame["left"], frame["n"], strict=True)
    ]
    kinds = rows.drop_duplicates("judge").set_index("judge")["judge_kind"]
    frame.insert(0, "judge_kind", kinds.reindex(frame.index))
    frame.index.name = "judge"
    return frame


# --------------------------------------------------------------------------- summary


def agreement_summary(judgments: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> dict:
    """Every agreement statistic of this module in one JSON-serialisable dict (NaN -> None).

    Keys: ``fleiss_kappa`` (human, overall verdict), ``fleiss_kappa_axes`` ({axis: kappa}
    for the axis columns present), ``krippendorff_alpha`` (human, ordinal 5-point),
    ``inter_human_agreement`` and ``inter_human_n``, ``human_llm_agreement`` and
    ``human_llm_agreement_ambiguous`` ({rate, ci_low, ci_high, n}),
    ``llm_judge_human_agreement`` ({judge: rate}, see :func:`llm_judge_human_agreement`),
    ``cross_judge_agreement`` ({"X|Y": rate}) and ``cross_judge_n``,
    ``three_way_agreement`` and ``three_way_n``, ``position_bias`` ({judge: left share}).
    """
    axes = [axis for axis in AXES if f"axis_{axis}" in judgments.columns]
    inter_human = inter_human_agreement(judgments)
    cross = cross_judge_agreement(judgments)
    three_way = three_way_agreement(judgments)
    bias = position_bias(judgments)
    summary = {
        "fleiss_kappa": fleiss_kappa(judgments),
        "fleiss_kappa_axes": {a: fleiss_kappa(judgments, column=f"axis_{a}") for a in axes},
        "krippendorff_alpha": krippendorff_alpha(judgments),
        "inter_human_agreement": inter_human.rate,
        "inter_human_n": inter_human.n,
        "human_llm_agreement": asdict(human_llm_agreement(judgments, n_boot=n_boot, seed=seed)),
        "human_llm_agreement_ambiguous": asdict(
            human_llm_agreement(judgments, n_boot=n_boot, seed=seed, ambiguous=True)
        ),
        "llm_judge_human_agreement": {
            judge: r.rate for judge, r in llm_judge_human_agreement(judgments).items()
        },
        "cross_judge_agreement": {pair: r.rate for pair, r in cross.items()},
        "cross_judge_n": {pair: r.n for pair, r in cross.items()},
        "three_way_agreement": three_way.rate,
        "three_way_n": three_way.n,
        "position_bias": bias["left_share"].to_dict(),
    }
    return _nan_to_none(summary)
