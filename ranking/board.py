"""One leaderboard from loaded frames: the comparisons, the fit, the human rows and every
section beside them. Pure pandas/numpy (no Django import): `ranking.services` loads the
frames and stores the result; tests and benchmarks call :func:`board` directly.

The choices a board makes, each a parameter (see :data:`PRESETS`):

- ``weights``: "normalized" (a verdict weighs 1 + (s - 1) / (s_max - 1), so a human's
  "slightly"/"significantly" and an LLM's 1..5 both map onto 1..2), "raw" (the strength
  itself) or "none".
- ``ties``: "half" (a tie is half a win to each side), "davidson" (Davidson's tie model) or
  "drop" (ties left out, as in the paper's primary analysis, whose judges could not tie).
- ``ci``: "bootstrap" (percentile interval over resampled source conversations, each round
  centred on the well-connected systems or the anchor), "sandwich" (robust, as arena-rank),
  "fisher" or "paper" (SE = sqrt(1/n)). Every board names its interval (``interval``); an
  asymptotic formula that does not cover its nominal level on the board's own design (the
  paper's, see `ranking.coverage`) is shown with the coverage it measured, not as a 95 % CI.
- rows: a system with fewer than ``MIN_COMPARISONS`` comparisons, or whose estimate only the
  prior keeps finite (it always won or always lost), is ``too_few``: its count, no Elo, no
  interval, never a prior-held number.
- ``anchor``: a system fixed at Elo 1500, or None (the paper's mean-centred Elo).
- ``best_human``: "cross_fit" or "in_sample" (see `ranking.humans`).
- ``combined``: on the "all judges" board, "by_source" (humans and LLM judges share the
  weight as the study's verdict rule says) or "by_count" (every verdict alike).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, cast

import numpy as np
import pandas as pd

from . import bootstrap, bradley_terry, coverage, humans, report, study_quality, verdicts
from .limits import MIN_COMPARISONS, MIN_SOURCE_JUDGMENTS

PRESETS: dict[str, dict[str, Any]] = {
    "default": {
        "preset": "default",
        "ci": "bootstrap",
        "ties": "half",
        "weights": "normalized",
        "bootstrap_rounds": 1000,
        "seed": 0,
        "alpha": 0.05,
        "anchor": None,
        "best_human": "cross_fit",
        "combined": "by_source",
        "min_comparisons": MIN_COMPARISONS,
        "min_source_judgments": MIN_SOURCE_JUDGMENTS,
    },
    "paper": {
        "preset": "paper",
        "ci": "paper",
        "ties": "drop",
        "weights": "raw",
        "bootstrap_rounds": 1000,
        "seed": 0,
        "alpha": 0.05,
        "anchor": None,
        "best_human": "in_sample",
        "combined": "by_count",
        "min_comparisons": MIN_COMPARISONS,
        "min_source_judgments": MIN_SOURCE_JUDGMENTS,
    },
}
PRESET_NOTES = {
    "default": "HEART studio's defaults: strengths normalised to each judge's scale, ties half "
    "a win for humans and LLM judges alike, 95% intervals from 1,000 bootstrap resamples of "
    "source conversations, the best human cross-fitted, humans and LLM judges weighed by "
    "source on the combined board.",
    "paper": "The paper's choices (9.8): raw strengths (1-5) as weights; ties left out (the "
    "paper's LLM judges could not tie; human ties are left out too, and counted below); the "
    "asymptotic interval with SE = sqrt(1/n) on the log-strength scale, which is not a 95% "
    "interval (its measured coverage is stated); the best human chosen in-sample; every "
    "verdict weighed alike.",
}
#: Replicates of the simulation that measures an asymptotic formula's coverage on a board.
COVERAGE_REPLICATES = 100
#: Methods validated by the coverage simulation in the tests (within 3 points of 95 %).
VALIDATED = ("bootstrap", "sandwich")
METHOD_LABELS = {
    "bootstrap": "bootstrap percentile interval",
    "sandwich": "robust (sandwich) interval",
    "fisher": "Fisher (observed information) interval",
    "paper": "the paper's interval, ±1.96·√(1/n) on the log-strength scale",
}


def params_resolve(preset: str = "default", **overrides: Any) -> dict[str, Any]:
    """A preset's parameters with ``overrides`` (None values ignored) on top."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {sorted(PRESETS)}")
    params = dict(PRESETS[preset])
    params.update({key: value for key, value in overrides.items() if value is not None})
    return params


# --------------------------------------------------------------------------- comparisons


def comparisons_from_judgments(
    judgments: pd.DataFrame,
    *,
    weights: bradley_terry.StrengthWeights,
    ties: str = "half",
    rule: verdicts.VerdictRule | None = None,
    combined: str = "by_count",
) -> pd.DataFrame:
    """The Bradley–Terry input: one weighted comparison per counted verdict.

    Carries ``context``, ``cluster`` (the source conversation, for the bootstrap), ``item``,
    ``judge`` and ``judge_kind`` where the judgments have them.
    """
    if ties == "drop":
        judgments = judgments[judgments["winner"] != "tie"]
    weight = bradley_terry.strength_weight(
        pd.to_numeric(judgments["strength"], errors="coerce").astype(float),
        pd.to_numeric(judgments["strength_max"], errors="coerce").astype(float),
        weights,
        winner=judgments["winner"],
    )
    if "rater_weight" in judgments.columns:  # the study's rater weights (ranking.raters)
        weight = weight * judgments["rater_weight"].to_numpy(dtype=float)
    if combined == "by_source" and rule is not None:
        weight = weight * verdicts.source_factors(judgments["judge_kind"], weight, rule)
    # `.array` keeps each column's dtype: categories stay integer codes, never per-row strings.
    frame = pd.DataFrame(
        {
            "system_a": judgments["system_a"].array,
            "system_b": judgments["system_b"].array,
            "winner": judgments["winner"].array,
            "weight": weight,
        }
    )
    for column in ("context", "cluster", "item", "judge", "judge_kind"):
        if column in judgments.columns:
            frame[column] = judgments[column].array
    return frame


def fit_board(
    comparisons: pd.DataFrame, params: dict[str, Any], *, anchor: str | None = None
) -> tuple[bradley_terry.Fit, list[str]]:
    """Fit, collecting the model's warnings (disconnected graph, a system that always wins,
    too few clusters)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bradley_terry.BradleyTerryWarning)
        result = bradley_terry.fit_detailed(
            comparisons,
            ties="half" if params["ties"] == "drop" else params["ties"],
            ci=params["ci"],
            bootstrap_rounds=params["bootstrap_rounds"],
            seed=params["seed"],
            alpha=params["alpha"],
            anchor=anchor,
        )
    messages = [
        str(w.message) for w in caught if issubclass(w.category, bradley_terry.BradleyTerryWarning)
    ]
    return result, messages


# --------------------------------------------------------------------------- rows


def number(value: Any, digits: int) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else round(value, digits)


def system_rows(
    table: pd.DataFrame,
    systems: pd.DataFrame,
    *,
    min_n: float = 0,
    unbounded: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The table's rows as JSON; a row with fewer than ``min_n`` comparisons or named in
    ``unbounded`` (no finite estimate) is ``too_few``: its count, no Elo, no interval, no rank,
    after the others (whose rank ranges are read among themselves)."""
    rows: list[dict[str, Any]] = []
    for name, row in table.iterrows():
        # The table's index holds system names, as does systems'.
        info = systems.loc[cast(str, name)] if name in systems.index else None
        clusters = row.get("clusters")
        rows.append(
            {
                "system": str(name),
                "kind": None if info is None else info["kind"],
                "family": None if info is None else (info["family"] or None),
                "elo": number(row["elo"], 1),
                "ci_low": number(row["ci_low"], 1),
                "ci_high": number(row["ci_high"], 1),
                "se": number(row["se"], 2),
                "win_rate": number(row["win_rate"], 4),
                "n": int(row["n"]),
                "rank_low": int(row["rank_low"]),
                "rank_high": int(row["rank_high"]),
                "clusters": None if pd.isna(clusters) else int(clusters),
                "ci_mc_error": number(row.get("ci_mc_error"), 2),
                "axes": {},
            }
        )
    return mark_too_few(rows, min_n=min_n, unbounded=unbounded or {})


TOO_FEW_KEYS = ("elo", "ci_low", "ci_high", "se", "rank_low", "rank_high", "ci_mc_error")


def mark_too_few(
    rows: list[dict[str, Any]], *, min_n: float, unbounded: dict[str, str]
) -> list[dict[str, Any]]:
    """Blank the rows the data cannot place (see :func:`system_rows`), move them last and
    re-read the others' rank ranges among themselves."""
    shown, hidden = [], []
    for row in rows:
        reason = None
        if row["n"] < min_n:
            reason = (
                f"{row['n']} comparisons, fewer than the {int(min_n)} a row needs"
                if math.isfinite(min_n)
                else "not shown on this board"
            )
        elif row["system"] in unbounded:
            reason = unbounded[row["system"]]
        row["too_few"] = reason is not None
        if reason is None:
            shown.append(row)
            continue
        row.update({key: None for key in TOO_FEW_KEYS}, too_few_reason=reason)
        hidden.append(row)
    if hidden and shown and all(r["ci_low"] is not None for r in shown):
        low, high = bootstrap_ranks([r["ci_low"] for r in shown], [r["ci_high"] for r in shown])
        for row, best, worst in zip(shown, low, high, strict=True):
            row["rank_low"], row["rank_high"] = int(best), int(worst)
    return shown + hidden


def bootstrap_ranks(low: list[float], high: list[float]) -> tuple[np.ndarray, np.ndarray]:
    return bootstrap.rank_intervals(np.asarray(low, dtype=float), np.asarray(high, dtype=float))


def human_rows(
    comparisons: pd.DataFrame,
    systems: pd.DataFrame,
    fitted: bradley_terry.Fit,
    params: dict[str, Any],
    anchor: str | None,
    notes: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The "Best human (per context)" and "Average human" rows (see `ranking.humans`); why a
    row is missing goes to ``notes``."""
    notes = notes if notes is not None else []
    table = fitted.table
    kinds = systems["kind"] if not systems.empty else pd.Series(dtype=object)
    writers = [s for s in table.index if kinds.get(s) == "human"]
    if not writers:
        return []
    rows = []
    best_anchor = anchor if anchor not in writers else None
    best = humans.best_human_row(
        comparisons,
        writers,
        table,
        lambda derived: fit_board(derived, params, anchor=best_anchor)[0].table,
        reference=fitted.reference,
        cross_fit=params.get("best_human") == "cross_fit",
    )
    if best is not None:
        rows.append(best)
    elif params.get("best_human") == "cross_fit":
        notes.append(
            f"{humans.BEST} is left out: choosing a writer on one half of the verdicts and "
            "scoring it on the other needs two judges on the writers' pairs"
        )
    weights = humans.contexts_per_writer(comparisons, writers)
    average = humans.average_human_row(
        table,
        weights,
        draws=fitted.draws,
        covariance=fitted.covariance,
        alpha=params["alpha"],
        ci=params["ci"],
    )
    if average is not None:
        rows.append(average)
    for row in rows:
        row["kind"] = "derived"
        for key, digits in (("elo", 1), ("ci_low", 1), ("ci_high", 1), ("se", 2)):
            row[key] = number(row[key], digits)
        row["win_rate"] = number(row["win_rate"], 4)
    return rows


def split_section(
    frames: dict[str, pd.DataFrame], params: dict[str, Any], rule: verdicts.VerdictRule
) -> dict[str, Any]:
    """Elo on regular and on adversarial contexts (point estimates, robust intervals; a system
    with too few comparisons there has none)."""
    split: dict[str, Any] = {}
    quick = quick_params(params)
    for subset, judgments in frames.items():
        if judgments.empty:
            split[subset] = {"n_comparisons": 0, "systems": []}
            continue
        comparisons = _comparisons(judgments, quick, rule, judges="all")
        table = fit_board(comparisons, quick)[0].table
        rows = system_rows(
            table,
            pd.DataFrame(columns=["kind", "family"]),
            min_n=min_rows(params),
            unbounded=bradley_terry.unbounded_systems(comparisons),
        )
        keys = ("system", "elo", "ci_low", "ci_high", "n", "too_few")
        split[subset] = {
            "n_comparisons": len(comparisons),
            "interval": interval_note(quick, bradley_terry.Fit(table), comparisons),
            "systems": [
                dict({key: row[key] for key in keys}, weighted_win_rate=row["win_rate"])
                for row in rows
            ],
        }
    return split


def min_rows(params: dict[str, Any]) -> int:
    """The comparisons a row needs on this board (``MIN_COMPARISONS`` unless the caller set
    another, e.g. `leaderboard --min-comparisons`)."""
    return int(params.get("min_comparisons", MIN_COMPARISONS))


def quick_params(params: dict[str, Any]) -> dict[str, Any]:
    """A board fitted beside the main one (a category, a cohort, a context subset): the same
    choices with an analytic interval, robust (sandwich) when ties count half."""
    return dict(params, ci="sandwich" if params["ties"] in ("half", "drop") else "fisher")


def _comparisons(
    judgments: pd.DataFrame, params: dict[str, Any], rule: verdicts.VerdictRule, *, judges: str
) -> pd.DataFrame:
    return comparisons_from_judgments(
        judgments,
        weights=params["weights"],
        ties=params["ties"],
        rule=rule,
        combined=params.get("combined", "by_count") if judges == "all" else "by_count",
    )


# --------------------------------------------------------------------------- the board


def board(
    judgments: pd.DataFrame,
    *,
    systems: pd.DataFrame,
    completions: pd.DataFrame,
    params: dict[str, Any],
    rule: verdicts.VerdictRule,
    judges: str = "all",
    split: dict[str, pd.DataFrame] | None = None,
    aliases: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The leaderboard of counted ``judgments`` (already filtered by judge kind and contexts):
    the contract fields (``n_comparisons``, ``systems``, ``interval``, ``counts``) plus the
    human rows and sections."""
    comparisons = _comparisons(judgments, params, rule, judges=judges)
    anchor, notes = _anchor(params.get("anchor"), comparisons)
    counts = source_counts(judgments, comparisons, params, rule, judges=judges)
    counts["label"] = judges_label(counts)
    short = combined_short(counts) if judges == "all" else None
    if short:
        notes.append(short)
        fitted = bradley_terry.Fit(_counts_table(comparisons))
        fit_warnings: list[str] = []
        rows = system_rows(fitted.table, systems, min_n=math.inf)
        derived: list[dict[str, Any]] = []
    else:
        fitted, fit_warnings = fit_board(comparisons, params, anchor=anchor)
        unbounded = bradley_terry.unbounded_systems(comparisons)
        rows = system_rows(fitted.table, systems, min_n=min_rows(params), unbounded=unbounded)
        derived = human_rows(comparisons, systems, fitted, params, anchor, notes)
    result = {
        "n_comparisons": len(comparisons),
        "n_judgments": len(judgments),
        "params": dict(params, verdicts=rule.as_dict()),
        "preset_note": PRESET_NOTES.get(params.get("preset", ""), ""),
        "anchor": anchor,
        "interval": interval_note(params, fitted, comparisons),
        "counts": counts,
        "ties": ties_note(judgments, params),
        "too_few": bool(short),
        "warnings": notes + fit_warnings,
        "systems": rows,
        "human_rows": derived,
        # Each system's bootstrap Elo, summarised for the study's grade (ranking.study_quality).
        "bootstrap_moments": study_quality.draw_moments(fitted.draws),
    }
    # Win rates, axes and factors read the verdicts the fit counts: with ties left out, the
    # row's n and its win rate rest on the same comparisons.
    fitted_judgments = (
        judgments[judgments["winner"] != "tie"] if params["ties"] == "drop" else judgments
    )
    result.update(
        report.analysis_sections(
            judgments=fitted_judgments,
            comparisons=comparisons,
            systems=systems,
            completions=completions,
            leaderboard=rows,
            params=params,
            split=split_section(split, params, rule) if split is not None else None,
            theta=None if short else fitted.table["theta"],
            aliases=aliases,
        )
    )
    return result


def _counts_table(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Each system's comparisons, without a fit (a board that is not shown)."""
    names = pd.concat([comparisons["system_a"].astype(str), comparisons["system_b"].astype(str)])
    n = names.value_counts()
    table = pd.DataFrame(index=pd.Index(n.index, name="system"))
    for column in bradley_terry.OUTPUT_COLUMNS:
        table[column] = np.nan
    table["n"] = n.astype(int)
    table["rank_low"] = table["rank_high"] = 0
    return table


# --------------------------------------------------------------------------- what a board says


def source_counts(
    judgments: pd.DataFrame,
    comparisons: pd.DataFrame,
    params: dict[str, Any],
    rule: verdicts.VerdictRule,
    *,
    judges: str,
) -> dict[str, Any]:
    """The contract's ``counts``: which judges the board counts and how they are weighed:
    ``human`` and ``llm`` (counted judgments of each), ``weights`` (``scheme`` "by_source" or
    "by_count", each source's share of the board's weight, and the weight one verdict of each
    source carries against one of the other), and the combined board's ``minimum``."""
    kinds = comparisons["judge_kind"].astype(str) if "judge_kind" in comparisons else None
    n = {
        kind: int((judgments["judge_kind"] == kind).sum()) if len(judgments) else 0
        for kind in ("human", "llm")
    }
    by_source = judges == "all" and params.get("combined") == "by_source"
    by_source = by_source and rule.human_share is not None
    share: dict[str, float | None] = {"human": None, "llm": None}
    total = float(comparisons["weight"].sum()) if len(comparisons) else 0.0
    if kinds is not None and total > 0:
        for kind in share:
            share[kind] = round(float(comparisons["weight"][kinds == kind].sum()) / total, 4)
    per_verdict = None
    if share["human"] and share["llm"] and n["human"] and n["llm"]:
        ratio = (share["human"] / n["human"]) / (share["llm"] / n["llm"])
        per_verdict = round(ratio, 2)
    return {
        "human": n["human"],
        "llm": n["llm"],
        "judges": judges,
        "weights": {
            "scheme": "by_source" if by_source else "by_count",
            "human_share": share["human"],
            "llm_share": share["llm"],
            "human_verdict_vs_llm_verdict": per_verdict,
            "strengths": params["weights"],
        },
        "minimum_per_source": (
            int(params.get("min_source_judgments", MIN_SOURCE_JUDGMENTS))
            if judges == "all"
            else None
        ),
    }


def judges_label(counts: dict[str, Any]) -> str:
    """Which judges a board counts and how they are weighed, in one sentence."""
    weights = counts.get("weights") or {}
    parts = []
    for kind, label in (("human", "human"), ("llm", "LLM")):
        if counts.get(kind):
            share = weights.get(f"{kind}_share")
            weight = f" ({round(100 * share)}% of the weight)" if share is not None else ""
            parts.append(f"{counts[kind]:,} {label} judgments{weight}")
    text = " and ".join(parts) or "no judgments"
    if counts.get("human") and counts.get("llm"):
        ratio = weights.get("human_verdict_vs_llm_verdict")
        if weights.get("scheme") == "by_source":
            text += f", weighed by source: one human verdict weighs {ratio}× one LLM verdict"
        else:
            text += ", every verdict weighed alike (by its strength)"
    return text


def combined_short(counts: dict[str, Any]) -> str | None:
    """Why a combined board is not shown (a source that judged, but less than the minimum)."""
    minimum = counts.get("minimum_per_source") or MIN_SOURCE_JUDGMENTS
    short = [
        f"{label} {counts[kind]}"
        for kind, label in (("human", "human judgments"), ("llm", "LLM judgments"))
        if 0 < counts[kind] < minimum
    ]
    if not short or not (counts["human"] and counts["llm"]):
        return None
    return (
        f"too few judgments for a combined board: {' and '.join(short)}, fewer than the "
        f"{minimum} each source needs before humans and LLM judges are shown "
        "together; read the human and the LLM boards apart"
    )


def ties_note(judgments: pd.DataFrame, params: dict[str, Any]) -> dict[str, Any]:
    """What is done with ties, for humans and LLM judges separately, with their counts."""
    handling = {
        "half": "counted as half a win to each side",
        "davidson": "fitted as their own outcome (Davidson's model)",
        "drop": "left out of the fit",
    }[params["ties"]]
    note: dict[str, Any] = {"handling": params["ties"]}
    for kind in ("human", "llm"):
        mine = judgments[judgments["judge_kind"] == kind] if len(judgments) else judgments
        n_ties = int((mine["winner"] == "tie").sum()) if len(mine) else 0
        note[kind] = {"ties": n_ties, "of": len(mine), "what": handling if n_ties else None}
    return note


def interval_note(
    params: dict[str, Any], fitted: bradley_terry.Fit, comparisons: pd.DataFrame
) -> dict[str, Any]:
    """The contract's ``interval``: ``method``, ``level`` (the coverage the product vouches
    for, in percent; null when the method does not reach it), ``nominal_level``, ``unit`` (what
    the bootstrap resamples), ``label`` in words, ``min_comparisons`` a row needs, and for an
    asymptotic formula its ``coverage`` measured on this board's design."""
    nominal = round(100 * (1 - params["alpha"]))
    method = params["ci"]
    note: dict[str, Any] = {
        "method": method,
        "level": nominal if method else None,
        "nominal_level": nominal,
        "unit": fitted.unit,
        "min_comparisons": min_rows(params),
    }
    if method == "bootstrap":
        note["rounds"] = params["bootstrap_rounds"]
        note["centred_on"] = fitted.reference
        errors = fitted.table["ci_mc_error"].dropna()
        note["mc_error_max"] = number(errors.max(), 2) if len(errors) else None
    if method in ("fisher", "paper") and len(fitted.table) and fitted.table["theta"].notna().all():
        measured = coverage.formula_coverage(
            comparisons,
            fitted.table["theta"],
            ci=method,
            alpha=params["alpha"],
            replicates=COVERAGE_REPLICATES,
            seed=params.get("seed", 0),
            min_n=min_rows(params),
        )
        rate = measured.rate
        note["coverage"] = {
            "rate": number(rate, 3),
            "intervals": measured.intervals,
            "replicates": COVERAGE_REPLICATES,
            "what": "share of simulated intervals holding the truth, on this board's design "
            "with its fitted strengths as the truth",
        }
        if not coverage.acceptable(rate, 1 - params["alpha"]):
            note["level"] = None
    note["label"] = interval_label(note)
    return note


def interval_label(note: dict[str, Any]) -> str:
    """The interval in words: "95% bootstrap percentile interval (1000 resamples of source
    conversations)", or for a formula that misses its level what it covered."""
    method = note.get("method")
    if not method:
        return "no interval"
    name = METHOD_LABELS.get(method, method)
    if note.get("level") is None:
        measured = (note.get("coverage") or {}).get("rate")
        covered = f"{round(100 * measured)}%" if measured is not None else "unknown"
        return (
            f"{name}: not a {note['nominal_level']}% interval (it covered {covered} of the "
            "truth in simulation on this board's design)"
        )
    label = f"{note['level']}% {name}"
    if method == "bootstrap":
        unit = {"clusters": "source conversations", "batches": "batches of comparisons"}.get(
            note.get("unit") or "", "comparisons"
        )
        label += f" ({note.get('rounds')} resamples of {unit})"
    elif method == "sandwich":
        label += " (every comparison its own unit, as LMArena's arena-rank)"
    return label


def _anchor(anchor: str | None, comparisons: pd.DataFrame) -> tuple[str | None, list[str]]:
    if not anchor:
        return None, []
    present = set(comparisons["system_a"]) | set(comparisons["system_b"])
    if anchor in present:
        return anchor, []
    return None, [
        f"the anchor {anchor!r} has no comparisons here: Elo is centred on the mean instead"
    ]
