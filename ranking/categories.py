"""Boards by category: the leaderboard, win rates, agreement and strategy tables of each value of
a context field (``emotion_type``, ``problem_type`` or a metadata key). No Django import.

Each category is fitted on its own (point estimates with Fisher intervals: a quick look, as the
regular/adversarial split). A category is *small* when some system has fewer than
``MIN_PER_SYSTEM`` comparisons in it: near even odds each comparison carries a quarter unit of
information on a strength difference, so n comparisons give a standard error of about
2 / sqrt(n) in theta, 347 / sqrt(n) Elo, and a 95% interval of about ±680 / sqrt(n) Elo. Below 50
comparisons that is wider than ±96 Elo, the whole spread of a typical board: such a cell's
ranking says little, and the board warns.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import pandas as pd

from . import agreement, board, report
from .verdicts import VerdictRule

MIN_PER_SYSTEM = 50
NO_CATEGORY = "(none)"
THRESHOLD_NOTE = (
    f"A category is flagged when a system has fewer than {MIN_PER_SYSTEM} comparisons in it: "
    "with n comparisons a system's 95% interval is about ±680/√n Elo (near even odds each "
    f"comparison carries a quarter unit of information), so below {MIN_PER_SYSTEM} it is wider "
    "than ±96 Elo, about the spread of a whole board."
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
) -> dict[str, Any]:
    """``{"by": {value: board}, "by_warnings": [...], "by_threshold": {...}}``, categories
    largest first. ``categories``: context id -> value; ``judgments``: the board's counted
    verdicts; ``everyone``: every judge's (agreement reads them; default ``judgments``)."""
    everyone = judgments if everyone is None else everyone
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
        cell["agreement"] = _agreement(everyone[everyone_value == value], rule)
        cell["strategies"] = _strategies(completions, contexts, aliases)
        smallest = min((row["n"] for row in cell["systems"]), default=0)
        cell["smallest_system_n"] = smallest
        cell["too_few"] = smallest < min_per_system
        if cell["too_few"]:
            warnings.append(
                f"{value}: {cell['n_comparisons']} comparisons, the least-compared system has "
                f"{smallest} (fewer than {min_per_system}): its Elo is too uncertain to rank"
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
    quick = dict(params, ci="fisher")
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
    table_rows = board.system_rows(fitted.table, systems)
    report.add_axes(table_rows, rows)
    return {
        "n_comparisons": len(comparisons),
        "n_judgments": len(rows),
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
