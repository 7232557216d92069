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
  centred on the well-connected systems or the anchor), "fisher" or "paper" (SE = sqrt(1/n)).
- ``anchor``: a system fixed at Elo 1500, or None (the paper's mean-centred Elo).
- ``best_human``: "cross_fit" or "in_sample" (see `ranking.humans`).
- ``combined``: on the "all judges" board, "by_source" (humans and LLM judges share the
  weight as the study's verdict rule says) or "by_count" (every verdict alike).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, cast

import pandas as pd

from . import bradley_terry, humans, report, study_quality, verdicts

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
    },
}
PRESET_NOTES = {
    "default": "HEART studio's defaults: strengths normalised to each judge's scale, ties half "
    "a win, 95% intervals from 1,000 bootstrap resamples of source conversations, the best "
    "human cross-fitted, humans and LLM judges weighed equally on the combined board.",
    "paper": "The paper's choices (9.8): raw strengths (1-5) as weights, ties left out (its "
    "judges could not tie), the asymptotic interval with SE = sqrt(1/n) on the log-strength "
    "scale, the best human chosen in-sample, every verdict weighed alike.",
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


def system_rows(table: pd.DataFrame, systems: pd.DataFrame) -> list[dict[str, Any]]:
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
    return rows


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
    """Elo on regular and on adversarial contexts (point estimates, Fisher intervals)."""
    split: dict[str, Any] = {}
    quick = dict(params, ci="fisher")
    for subset, judgments in frames.items():
        if judgments.empty:
            split[subset] = {"n_comparisons": 0, "systems": []}
            continue
        comparisons = _comparisons(judgments, quick, rule, judges="all")
        table = fit_board(comparisons, quick)[0].table
        split[subset] = {
            "n_comparisons": len(comparisons),
            "systems": [
                {
                    "system": str(name),
                    "elo": number(row["elo"], 1),
                    "ci_low": number(row["ci_low"], 1),
                    "ci_high": number(row["ci_high"], 1),
                    "weighted_win_rate": number(row["win_rate"], 4),
                    "n": int(row["n"]),
                }
                for name, row in table.iterrows()
            ],
        }
    return split


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
    the contract fields (``n_comparisons``, ``systems``) plus the human rows and sections."""
    comparisons = _comparisons(judgments, params, rule, judges=judges)
    anchor, notes = _anchor(params.get("anchor"), comparisons)
    fitted, fit_warnings = fit_board(comparisons, params, anchor=anchor)
    rows = system_rows(fitted.table, systems)
    derived = human_rows(comparisons, systems, fitted, params, anchor, notes)
    result = {
        "n_comparisons": len(comparisons),
        "n_judgments": len(judgments),
        "params": dict(params, verdicts=rule.as_dict()),
        "preset_note": PRESET_NOTES.get(params.get("preset", ""), ""),
        "anchor": anchor,
        "interval": _interval_note(params, fitted),
        "warnings": notes + fit_warnings,
        "systems": rows,
        "human_rows": derived,
        # Each system's bootstrap Elo, summarised for the study's grade (ranking.study_quality).
        "bootstrap_moments": study_quality.draw_moments(fitted.draws),
    }
    result.update(
        report.analysis_sections(
            judgments=judgments,
            comparisons=comparisons,
            systems=systems,
            completions=completions,
            leaderboard=rows,
            params=params,
            split=split_section(split, params, rule) if split is not None else None,
            theta=fitted.table["theta"],
            aliases=aliases,
        )
    )
    return result


def _anchor(anchor: str | None, comparisons: pd.DataFrame) -> tuple[str | None, list[str]]:
    if not anchor:
        return None, []
    present = set(comparisons["system_a"]) | set(comparisons["system_b"])
    if anchor in present:
        return anchor, []
    return None, [
        f"the anchor {anchor!r} has no comparisons here: Elo is centred on the mean instead"
    ]


def _interval_note(params: dict[str, Any], fitted: bradley_terry.Fit) -> dict[str, Any]:
    """What the interval means, for the page and the JSON."""
    level = round(100 * (1 - params["alpha"]))
    note = {"method": params["ci"], "level": level, "unit": fitted.unit}
    if params["ci"] == "bootstrap":
        note["rounds"] = params["bootstrap_rounds"]
        note["centred_on"] = fitted.reference
        errors = fitted.table["ci_mc_error"].dropna()
        note["mc_error_max"] = number(errors.max(), 2) if len(errors) else None
    return note
