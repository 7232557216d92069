"""Boards by category: the leaderboard, win rates, agreement and strategy tables of each value of
a context field (``emotion_type``, ``problem_type`` or a metadata key). No Django import.

Each category is fitted on its own (point estimates with robust intervals, `board.quick_params`:
a quick look, as the regular/adversarial split). A system with fewer than
``board.MIN_COMPARISONS`` comparisons in a category, or whose estimate there only the prior
holds (it always won or always lost), is shown as "too few judgments" with its count, never
with a prior-held Elo; a category with fewer than two systems left is ``too_few`` as a whole.
Near even odds each comparison carries a quarter unit of information on a strength difference,
so n comparisons give a 95% interval of about ±680 / sqrt(n) Elo: ±152 at 20.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import pandas as pd

from . import agreement, board, bradley_terry, report
from .limits import MIN_COMPARISONS
from .verdicts import VerdictRule

MIN_PER_SYSTEM = MIN_COMPARISONS
NO_CATEGORY = "(none)"
THRESHOLD_NOTE = (
    f"A system with fewer than {MIN_PER_SYSTEM} comparisons in a category is shown as too few "
    "judgments, with its count, and no Elo: with n comparisons a 95% interval is about "
    f"±680/√n Elo (near even odds each comparison carries a quarter unit of information), "
    f"±152 at {MIN_PER_SYSTEM}. A category with fewer than two systems above it has no board."
)


def category_boards(
    judgments: pd.DataFrame,
    *,
    categories: dict[Any, Any],
    systems: pd.DataFrame,
    completions: pd.DataFrame,
    params: dict[str, Any],
    rule: VerdictRule,
    judges: str = "all",
    everyone: pd.DataFrame | None = None,
    aliases: dict[str, Any] | None = None,
    min_per_system: int = MIN_PER_SYSTEM,
    shared: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """``{"by": {value: board}, "by_warnings": [...], "by_threshold": {...}}``, categories
    largest first. ``categories``: context id -> value; ``judgments``: the board's counted
    verdicts; ``everyone``: every judge's (agreement reads them; default ``judgments``).

    ``shared``: a dict kept by the caller across the boards of one refit. What does not depend
    on the board's judges (the agreement of every judge, the strategy use of the completions)
    is computed once per category and context set and read back from it by the next board.
    """
    everyone = judgments if everyone is None else everyone
    shared = {} if shared is None else shared
    value_of = _values(judgments, categories)
    everyone_value = _values(everyone, categories)
    order = value_of.value_counts().index
    by: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    for value in order:
        rows = judgments[value_of == value]
        contexts = set(rows["context"])
        cell = _board(rows, systems, params, rule, judges)
        cell["n_contexts"] = len(contexts)
        if ("agreement", value) not in shared:
            shared["agreement", value] = _agreement(everyone[everyone_value == value], rule)
        cell["agreement"] = shared["agreement", value]
        strategies_key = ("strategies", frozenset(contexts))
        if strategies_key not in shared:
            shared[strategies_key] = _strategies(completions, contexts, aliases)
        cell["strategies"] = shared[strategies_key]
        smallest = min((row["n"] for row in cell["systems"]), default=0)
        cell["smallest_system_n"] = smallest
        ranked = [row for row in cell["systems"] if not row["too_few"]]
        cell["too_few"] = len(ranked) < 2
        hidden = len(cell["systems"]) - len(ranked)
        if cell["too_few"]:
            warnings.append(
                f"{value}: {cell['n_comparisons']} comparisons, too few judgments for a board "
                f"(fewer than two systems with {min_per_system} comparisons)"
            )
        elif hidden:
            warnings.append(
                f"{value}: {hidden} system{'s' if hidden > 1 else ''} with too few judgments "
                f"(fewer than {min_per_system} comparisons, or always winning or losing) shown "
                "without an Elo"
            )
        by[str(value)] = cell
    return {
        "by": by,
        "by_warnings": warnings,
        "by_threshold": {"min_per_system": min_per_system, "note": THRESHOLD_NOTE},
    }


def _values(judgments: pd.DataFrame, categories: dict[str, Any]) -> pd.Series:
    return judgments["context"].map(categories).fillna(NO_CATEGORY).astype(str)


def _board(
    rows: pd.DataFrame,
    systems: pd.DataFrame,
    params: dict[str, Any],
    rule: VerdictRule,
    judges: str,
) -> dict[str, Any]:
    quick = board.quick_params(params)
    comparisons = board.comparisons_from_judgments(
        rows,
        weights=params["weights"],
        ties=params["ties"],
        rule=rule,
        combined=params.get("combined", "by_count") if judges == "all" else "by_count",
    )
    if len(comparisons) == 0:
        return {"n_comparisons": 0, "n_judgments": len(rows), "systems": [], "warnings": []}
    fitted, fit_warnings = board.fit_board(comparisons, quick)
    table_rows = board.system_rows(
        fitted.table,
        systems,
        min_n=board.min_rows(params),
        unbounded=bradley_terry.unbounded_systems(comparisons),
    )
    report.add_axes(table_rows, rows[rows["winner"] != "tie"] if quick["ties"] == "drop" else rows)
    return {
        "n_comparisons": len(comparisons),
        "n_judgments": len(rows),
        "interval": board.interval_note(quick, fitted, comparisons),
        "systems": table_rows,
        "warnings": fit_warnings,
    }


def _agreement(rows: pd.DataFrame, rule: VerdictRule) -> dict[str, Any]:
    """The headline agreement figures of one category (a 200-round interval: a quick look)."""
    if rows.empty:
        return {"fleiss_kappa": None, "inter_human_agreement": None, "human_llm_agreement": None}
    frame = rows.assign(
        strength=pd.to_numeric(rows["strength"], errors="coerce").astype(float),
        strength_max=pd.to_numeric(rows["strength_max"], errors="coerce").astype(float),
    )
    human_llm = agreement.human_llm_agreement(
        frame, n_boot=200, seed=0, min_human=rule.human_min_verdicts
    )
    inter = agreement.inter_human_agreement(frame)
    return {
        "fleiss_kappa": _clean(agreement.fleiss_kappa(frame)),
        "inter_human_agreement": _clean(inter.rate),
        "inter_human_n": inter.n,
        "human_llm_agreement": {k: _clean(v) for k, v in asdict(human_llm).items()},
    }


def _strategies(
    completions: pd.DataFrame, contexts: set[Any], aliases: dict[str, Any] | None
) -> dict[str, Any] | None:
    if "context" not in completions.columns:
        return None
    return report.strategy_section(completions[completions["context"].isin(contexts)], aliases)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value
