"""The analysis sections of a leaderboard result, from the loaded frames (no Django import).

Glue between the DataFrames `ranking.selectors` loads and the pure maths in
`ranking.analysis` / `ranking.agreement`; everything returned is plain JSON.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from completions.families import canonical_families, canonical_family

from . import agreement, analysis, bradley_terry, factors

AXES = analysis.AXES
#: The tests whose p-values are corrected together (Benjamini–Hochberg, paper 9.12).
CORRELATIONS = [
    ("elo", "log10_ttft_ms"),
    ("elo", "external_score"),
    ("win_rate", "external_score"),
]


def _num(value: Any, digits: int = 4) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else round(value, digits)


def system_attributes(systems: pd.DataFrame, completions: pd.DataFrame) -> pd.DataFrame:
    """Per system: kind, family, TTFT (its own, else its completions' median) and score."""
    frame = systems.copy()
    if not completions.empty:
        median = (
            pd.to_numeric(completions["ttft_ms"], errors="coerce")
            .groupby(completions["system"])
            .median()
        )
        frame["ttft_ms"] = pd.to_numeric(frame["ttft_ms"], errors="coerce").fillna(
            median.reindex(frame.index)
        )
    frame["ttft_ms"] = pd.to_numeric(frame["ttft_ms"], errors="coerce")
    frame["external_score"] = pd.to_numeric(frame["external_score"], errors="coerce")
    return frame


def family_label(kind: str, family: str, system: str, aliases: dict[str, Any] | None = None) -> str:
    """Strategy-analysis group: all human writers together, models by canonical family
    (Figure 6; "openai" and "gpt" are one family, see completions.families)."""
    if kind in ("human", "dataset"):
        return kind
    return canonical_family(family, aliases) or system


def add_axes(leaderboard: list[dict[str, Any]], judgments: pd.DataFrame) -> pd.DataFrame:
    """Per-axis and overall win rates (unweighted, ties half) written into each row.

    `win_rate` becomes the raw share of comparisons won, as the paper's "overall win
    rate"; the fit's strength-weighted share stays as `weighted_win_rate`.
    """
    if judgments.empty:
        return pd.DataFrame(columns=[*AXES, "overall"])
    rates = analysis.axis_win_rates(judgments)
    for row in leaderboard:
        if row["system"] in rates.index:
            found = rates.loc[row["system"]]
            row["axes"] = {axis: _num(found.get(axis)) for axis in AXES if axis in rates}
            row["weighted_win_rate"] = row["win_rate"]
            row["win_rate"] = _num(found["overall"])
    return rates


def predicted_matrix(theta: pd.Series, order: list[str]) -> list[list[float | None]]:
    """predicted[i][j]: the Bradley–Terry probability that i beats j (a tie counting half),
    sigmoid(theta_i - theta_j), from the fitted strengths; None on the diagonal."""
    values = theta.reindex(order).to_numpy(dtype=float)
    with np.errstate(over="ignore"):
        probability = 1.0 / (1.0 + np.exp(values[None, :] - values[:, None]))
    np.fill_diagonal(probability, np.nan)
    return [[_num(v) for v in row] for row in probability]


def win_matrix(comparisons: pd.DataFrame, order: list[str]) -> dict[str, Any]:
    """rates[i][j]: share of i-vs-j comparisons that i won (ties half, unweighted)."""
    index = {name: i for i, name in enumerate(order)}
    k = len(order)
    wins, counts = np.zeros((k, k)), np.zeros((k, k))
    a = comparisons["system_a"].map(index).to_numpy(dtype=int)
    b = comparisons["system_b"].map(index).to_numpy(dtype=int)
    winner = comparisons["winner"].to_numpy(dtype=object)
    score_a = np.select([winner == "a", winner == "tie"], [1.0, 0.5], default=0.0)
    np.add.at(wins, (a, b), score_a)
    np.add.at(wins, (b, a), 1.0 - score_a)
    np.add.at(counts, (a, b), 1.0)
    np.add.at(counts, (b, a), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(counts > 0, wins / counts, np.nan)
    return {
        "systems": order,
        "rates": [[_num(v) for v in row] for row in rates],
        "n": counts.astype(int).tolist(),
    }


def head_to_head(comparisons: pd.DataFrame, attributes: pd.DataFrame) -> dict[str, Any]:
    """Human-vs-model shares overall and per model system (paper 4.5)."""
    kinds = attributes["kind"]
    kind_a = comparisons["system_a"].map(kinds)
    kind_b = comparisons["system_b"].map(kinds)
    mixed = comparisons[
        ((kind_a == "model") & (kind_b == "human")) | ((kind_a == "human") & (kind_b == "model"))
    ]
    overall = analysis.head_to_head_shares(mixed, kinds)
    per_model = {}
    for name, rows in mixed.groupby(
        np.where(kind_a[mixed.index] == "model", mixed["system_a"], mixed["system_b"])
    ):
        per_model[str(name)] = _shares(analysis.head_to_head_shares(rows, kinds))
    return {"overall": _shares(overall), "per_model": per_model}


def _shares(shares: dict[str, Any]) -> dict[str, Any]:
    return {key: int(value) if key == "n" else _num(value) for key, value in shares.items()}


def strategy_section(
    completions: pd.DataFrame, aliases: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Strategy usage per family with SD, range and entropy (Figure 6, paper 4.8).

    One taxonomy per table, never mixed: the paper's 15 strategies (9.10) over the completions
    labelled with them; completions whose labels all come from another taxonomy (ESConv's own
    8 strategies on its original replies, for instance) go to a separate ``other`` table.
    """
    labels = _strategy_labels(completions, aliases)
    paper = labels["taxonomy"] == "paper"
    section = _usage_table(labels[paper], analysis.STRATEGIES)
    section["taxonomy"] = "HEART 15 strategies (paper 9.10)"
    other = labels[~paper]
    if not other.empty and other["strategy"].notna().any():
        names = sorted(other["strategy"].dropna().unique())
        section["other"] = dict(
            _usage_table(other, names),
            taxonomy="another taxonomy (e.g. ESConv's own strategy labels), kept apart",
        )
    else:
        section["other"] = None
    return section


def _usage_table(labels: pd.DataFrame, strategies: list[str]) -> dict[str, Any]:
    if labels.empty or labels["strategy"].isna().all():
        return {"families": [], "strategies": [], "usage": [], "spread": {}}
    usage, spread = analysis.strategy_usage(labels, strategies)
    usage = usage.loc[usage.sum(axis=1) > 0]
    usage = usage.loc[usage.mean(axis=1).sort_values(ascending=False).index]
    return {
        "families": [str(f) for f in usage.columns],
        "strategies": [str(s) for s in usage.index],
        "usage": [[_num(v, 2) for v in row] for row in usage.to_numpy()],
        "spread": {
            str(family): {key: _num(value, 3) for key, value in row.items()}
            for family, row in spread.iterrows()
        },
    }


def _strategy_labels(
    completions: pd.DataFrame, aliases: dict[str, Any] | None = None
) -> pd.DataFrame:
    """One row per (completion, strategy) with the completion's taxonomy: "paper" when any of
    its labels is one of the 15 (or it has none), else "other"."""
    known = set(analysis.STRATEGIES)
    families = canonical_families(completions["family"].fillna("").unique(), aliases)
    rows: list[dict[str, Any]] = []
    for item in completions.itertuples(index=False):
        if not isinstance(item.strategies, list):
            continue  # not labelled at all: left out of the denominators too
        if item.kind in ("human", "dataset"):
            family = item.kind
        else:
            family = families.get(item.family or "", "") or item.system
        names = [str(s) for s in item.strategies if s]
        taxonomy = "paper" if not names or known & set(names) else "other"
        if taxonomy == "paper":
            names = [n for n in names if n in known]
        rows.extend(
            {
                "family": family,
                "completion": item.completion,
                "strategy": name,
                "taxonomy": taxonomy,
            }
            for name in names or [None]
        )
    return pd.DataFrame(rows, columns=["family", "completion", "strategy", "taxonomy"])


def correlation_section(
    leaderboard: list[dict[str, Any]], attributes: pd.DataFrame, alpha: float
) -> list[dict[str, Any]]:
    """Elo / win rate vs log TTFT and vs external score; BH across the whole family."""
    if not leaderboard:
        return []
    frame = pd.DataFrame(leaderboard).set_index("system")[["elo", "win_rate"]]
    frame = frame.join(attributes[["ttft_ms", "external_score"]], how="left")
    with np.errstate(divide="ignore", invalid="ignore"):
        frame["log10_ttft_ms"] = np.log10(frame["ttft_ms"].where(frame["ttft_ms"] > 0))
    tests = []
    for y, x in CORRELATIONS:
        stats = analysis.correlation(frame[x].astype(float), frame[y].astype(float))
        tests.append({"x": x, "y": y, **stats})
    pvalues = [t[key] for t in tests for key in ("pearson_p", "spearman_p")]
    adjusted = analysis.benjamini_hochberg(pvalues, alpha=alpha)["p_adjusted"].to_numpy()
    for i, test in enumerate(tests):
        test["pearson_p_bh"] = adjusted[2 * i]
        test["spearman_p_bh"] = adjusted[2 * i + 1]
    return [{key: _stat(key, v) for key, v in t.items()} for t in tests]


def _stat(key: str, value: Any) -> Any:
    """Statistics to 4 decimals; p-values to 4 significant digits (a tiny p stays > 0)."""
    if not isinstance(value, float):
        return value
    if "_p" in key and _num(value) is not None:
        return float(f"{value:.4g}")
    return _num(value)


def analysis_sections(
    *,
    judgments: pd.DataFrame,
    comparisons: pd.DataFrame,
    systems: pd.DataFrame,
    completions: pd.DataFrame,
    leaderboard: list[dict[str, Any]],
    params: dict[str, Any],
    split: dict[str, Any] | None,
    theta: pd.Series | None = None,
    aliases: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything the leaderboard page shows beside the Elo table."""
    attributes = system_attributes(systems, completions)
    add_axes(leaderboard, judgments)
    for row in leaderboard:
        if row["system"] in attributes.index:
            row["ttft_ms"] = _num(attributes.loc[row["system"], "ttft_ms"], 1)
            row["external_score"] = _num(attributes.loc[row["system"], "external_score"], 3)
    order = [row["system"] for row in leaderboard]
    matrix: dict[str, Any] = {"systems": [], "rates": [], "n": [], "predicted": []}
    if order:
        matrix = win_matrix(comparisons, order)
        matrix["predicted"] = predicted_matrix(theta, order) if theta is not None else None
    sections: dict[str, Any] = {
        "win_matrix": matrix,
        "head_to_head": head_to_head(comparisons, attributes),
        "strategies": strategy_section(completions, aliases),
        "correlations": correlation_section(leaderboard, attributes, params["alpha"]),
    }
    sections["factors"] = factors.factor_structure(judgments) if len(judgments) else None
    sections["axis_fits"] = axis_fits(judgments, order, params)
    if split is not None:
        sections["split"] = split
    return sections


def safe_agreement(
    judgments: pd.DataFrame,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    min_human: int = 2,
    aliases: dict[str, Any] | None = None,
    raw: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """agreement.agreement_summary on the loaded (counted) frame, strengths as floats; the
    position bias from ``raw`` (every verdict as judged, with the order shown) when given."""
    frame = judgments.assign(
        strength=pd.to_numeric(judgments["strength"], errors="coerce").astype(float),
        strength_max=pd.to_numeric(judgments["strength_max"], errors="coerce").astype(float),
    )
    if frame.empty:
        return {
            "fleiss_kappa": None,
            "krippendorff_alpha": None,
            "inter_human_agreement": None,
            "human_llm_agreement": {"rate": None, "ci_low": None, "ci_high": None, "n": 0},
            "human_llm_agreement_no_ties": {"rate": None, "ci_low": None, "ci_high": None, "n": 0},
            "cross_judge_agreement": {},
            "position_bias": {},
            "human_majority_min_verdicts": min_human,
        }
    summary = agreement.agreement_summary(frame, n_boot=n_boot, seed=seed, min_human=min_human)
    summary.update(_agreement_extras(frame, min_human=min_human, aliases=aliases))
    if raw is not None:
        summary["position_bias"] = agreement.position_bias(raw)["left_share"].to_dict()
    return summary


def _agreement_extras(
    frame: pd.DataFrame, *, min_human: int, aliases: dict[str, Any] | None
) -> dict[str, Any]:
    """Paper 4.4 beside the summary: agreement between judge families (GPT-Claude...; family
    names through the alias table, so "openai" and "gpt" are one family) and each LLM judge's
    agreement with the human majority, every verdict counted (no interval: a quick look)."""
    llm = frame[frame["judge_family"].notna() & (frame["judge_kind"] == "llm")]
    families = canonical_families(llm["judge_family"].unique(), aliases)
    llm = llm.assign(judge_family=llm["judge_family"].map(families))
    by_family = agreement.cross_judge_agreement(llm, by="judge_family")
    by_family_no_ties = agreement.cross_judge_agreement(llm, by="judge_family", ties=False)
    by_judge = agreement.llm_judge_human_agreement(frame, min_human=min_human)
    return {
        "cross_family_agreement": {pair: _num(r.rate) for pair, r in by_family.items()},
        "cross_family_agreement_no_ties": {
            pair: _num(r.rate) for pair, r in by_family_no_ties.items()
        },
        "cross_family_n": {pair: int(r.n) for pair, r in by_family.items()},
        "human_llm_agreement_by_judge": {
            judge: {"rate": _num(r.rate), "n": int(r.n)} for judge, r in by_judge.items()
        },
    }


def axis_fits(judgments: pd.DataFrame, order: list[str], params: dict[str, Any]) -> dict[str, Any]:
    """Figure 4 as the paper means it: a Bradley–Terry fit per HEART axis from the axis marks
    (unweighted: a mark has no strength scale), with the leaderboard's CI method, and each
    system's percentile among the systems on that axis.

    Returns ``{"axes": [...], "systems": [{"system", "axes": {axis: {"elo", "ci_low",
    "ci_high", "n", "percentile"}}}], "notes": {axis: why there is no fit}}`` in `order`.
    """
    fits, notes = {}, {}
    for axis in AXES:
        comparisons = analysis.axis_comparisons(judgments, axis)
        if params.get("ties") == "drop":  # the paper preset: ties left out here too
            comparisons = comparisons[comparisons["winner"] != "tie"]
        if len(comparisons) == 0:
            notes[axis] = "no judgment marked this axis"
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", bradley_terry.BradleyTerryWarning)
            table = bradley_terry.fit(
                comparisons,
                ci=params["ci"],
                bootstrap_rounds=params["bootstrap_rounds"],
                seed=params["seed"],
                alpha=params["alpha"],
            )
        if caught:
            notes[axis] = "; ".join(str(w.message) for w in caught)
        table["percentile"] = analysis.percentile_ranks(table["elo"])
        fits[axis] = table
    rows = []
    for name in order:
        cells = {}
        for axis, table in fits.items():
            if name in table.index:
                row = table.loc[name]
                assert isinstance(row, pd.Series)  # the fit has one row per system
                cells[axis] = {
                    "elo": _num(row["elo"], 1),
                    "ci_low": _num(row["ci_low"], 1),
                    "ci_high": _num(row["ci_high"], 1),
                    "n": int(row["n"]),
                    "percentile": _num(row["percentile"], 1),
                }
        # `cells` lines up with `axes` for tables and plots; `axes` is keyed for lookups.
        rows.append({"system": name, "axes": cells, "cells": [cells.get(a) for a in fits]})
    return {"axes": list(fits), "systems": rows, "notes": notes}
