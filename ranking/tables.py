"""The leaderboard page's tables as rows, for CSV downloads (no Django import)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from typing import Any

from completions.csv_safe import safe_row

AXES = ("H", "E", "A", "R", "T")


def leaderboard_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    yield [
        "rank",
        "system",
        "kind",
        "family",
        "elo",
        "ci_low",
        "ci_high",
        "rank_low",
        "rank_high",
        "win_rate",
        "weighted_win_rate",
        "n",
        *[f"win_rate_{axis}" for axis in AXES],
        "ttft_ms",
        "external_score",
    ]
    for rank, row in enumerate(result.get("systems", []), start=1):
        yield [
            rank,
            row["system"],
            row.get("kind"),
            row.get("family"),
            row["elo"],
            row["ci_low"],
            row["ci_high"],
            row.get("rank_low"),
            row.get("rank_high"),
            row["win_rate"],
            row.get("weighted_win_rate"),
            row["n"],
            *[row["axes"].get(axis) for axis in AXES],
            row.get("ttft_ms"),
            row.get("external_score"),
        ]


def human_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    """The derived human rows (Best human, Average human) with what each one means."""
    yield ["system", "elo", "ci_low", "ci_high", "win_rate", "n", "note"]
    for row in result.get("human_rows", []):
        yield [
            row["system"],
            row["elo"],
            row["ci_low"],
            row["ci_high"],
            row["win_rate"],
            row["n"],
            row.get("note"),
        ]


def win_matrix_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    """Every ordered pair of systems: the observed win rate (ties half) with its count, and
    the Bradley–Terry predicted probability (also for pairs never compared)."""
    matrix = result.get("win_matrix") or {"systems": [], "rates": [], "n": []}
    predicted = matrix.get("predicted")
    yield ["system", "opponent", "win_rate", "n", "predicted"]
    for i, name in enumerate(matrix["systems"]):
        for j, opponent in enumerate(matrix["systems"]):
            if i != j and (matrix["n"][i][j] or predicted):
                yield [
                    name,
                    opponent,
                    matrix["rates"][i][j],
                    matrix["n"][i][j],
                    predicted[i][j] if predicted else None,
                ]


def head_to_head_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    section = result.get("head_to_head") or {}
    yield ["model", "model_preferred", "human_preferred", "tie", "n"]
    overall = section.get("overall") or {}
    if overall:
        yield [
            "(all models)",
            overall.get("model_preferred"),
            overall.get("human_preferred"),
            overall.get("tie"),
            overall.get("n"),
        ]
    for name, shares in (section.get("per_model") or {}).items():
        yield [
            name,
            shares["model_preferred"],
            shares["human_preferred"],
            shares["tie"],
            shares["n"],
        ]


def strategy_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    section = result.get("strategies") or {}
    families = section.get("families", [])
    yield ["strategy", *families]
    for name, usage in zip(section.get("strategies", []), section.get("usage", []), strict=True):
        yield [name, *usage]
    spread = section.get("spread") or {}
    for stat in ("completions", "sd", "range", "entropy", "mean_unique", "coverage"):
        yield [f"({stat})", *[spread.get(family, {}).get(stat) for family in families]]


def split_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    yield ["subset", "system", "elo", "ci_low", "ci_high", "weighted_win_rate", "n"]
    for subset, section in (result.get("split") or {}).items():
        for row in section["systems"]:
            yield [
                subset,
                row["system"],
                row["elo"],
                row["ci_low"],
                row["ci_high"],
                row["weighted_win_rate"],
                row["n"],
            ]


def correlation_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    columns = [
        "y",
        "x",
        "n",
        "pearson_r",
        "pearson_p",
        "pearson_p_bh",
        "spearman_rho",
        "spearman_p",
        "spearman_p_bh",
    ]
    yield columns
    for test in result.get("correlations", []):
        yield [test.get(column) for column in columns]


def agreement_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    summary = result.get("agreement") or {}
    yield ["statistic", "value", "ci_low", "ci_high", "n"]
    counts = {"inter_human_agreement": "inter_human_n", "three_way_agreement": "three_way_n"}
    for key in (
        "fleiss_kappa",
        "krippendorff_alpha",
        "inter_human_agreement",
        "three_way_agreement",
    ):
        yield [key, summary.get(key), None, None, summary.get(counts.get(key, ""))]
    for key in (
        "human_llm_agreement",
        "human_llm_agreement_no_ties",
        "human_llm_agreement_ambiguous",
    ):
        rate = summary.get(key) or {}
        yield [key, rate.get("rate"), rate.get("ci_low"), rate.get("ci_high"), rate.get("n")]
    n_cross = summary.get("cross_judge_n") or {}
    for pair, rate in (summary.get("cross_judge_agreement") or {}).items():
        yield [f"cross_judge:{pair}", rate, None, None, n_cross.get(pair)]
    for pair, rate in (summary.get("cross_judge_agreement_no_ties") or {}).items():
        yield [f"cross_judge_no_ties:{pair}", rate, None, None, None]
    n_family = summary.get("cross_family_n") or {}
    for pair, rate in (summary.get("cross_family_agreement") or {}).items():
        yield [f"cross_family:{pair}", rate, None, None, n_family.get(pair)]
    for judge, rate in (summary.get("human_llm_agreement_by_judge") or {}).items():
        yield [f"human_llm_by_judge:{judge}", rate["rate"], None, None, rate["n"]]
    for judge, share in (summary.get("position_bias") or {}).items():
        yield [f"position_bias:{judge}", share, None, None, None]


def factor_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    summary = result.get("factors") or {}
    yield ["statistic", "value"]
    for key in ("n_responses", "explained_by_first", "cronbach_alpha", "correlation_with_overall"):
        yield [key, summary.get(key)]
    for axis, loading in (summary.get("loadings") or {}).items():
        yield [f"loading_{axis}", loading]
    for i, value in enumerate(summary.get("eigenvalues") or [], start=1):
        yield [f"eigenvalue_{i}", value]


def style_control_rows(result: dict[str, Any]) -> Iterable[list[Any]]:
    """The style-controlled board beside the plain one, then each feature's coefficient."""
    yield [
        "system",
        "elo_controlled",
        "ci_low_controlled",
        "ci_high_controlled",
        "rank_low_controlled",
        "rank_high_controlled",
        "elo",
        "ci_low",
        "ci_high",
        "elo_change",
    ]
    section = result.get("style_control") or {}
    for row in section.get("systems", []):
        plain = row.get("uncontrolled") or {}
        yield [
            row["system"],
            row["elo"],
            row["ci_low"],
            row["ci_high"],
            row.get("rank_low"),
            row.get("rank_high"),
            plain.get("elo"),
            plain.get("ci_low"),
            plain.get("ci_high"),
            row.get("elo_change"),
        ]
    for name, coef in (result.get("style") or {}).items():
        yield [f"coefficient:{name}", coef["coef"], coef["ci_low"], coef["ci_high"]]


TABLES: dict[str, Callable[[dict[str, Any]], Iterable[list[Any]]]] = {
    "leaderboard": leaderboard_rows,
    "human-rows": human_rows,
    "win-matrix": win_matrix_rows,
    "head-to-head": head_to_head_rows,
    "strategies": strategy_rows,
    "split": split_rows,
    "correlations": correlation_rows,
    "agreement": agreement_rows,
    "factors": factor_rows,
    "style-control": style_control_rows,
}


def to_csv(name: str, result: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in TABLES[name](result):
        writer.writerow(safe_row("" if value is None else value for value in row))
    return buffer.getvalue()
