"""Raters, judges and the study measured: loads what the pure modules need, and stores their
sections in the snapshots a refit writes (the pages read them there, never fitting).

- ``rater_quality`` (`ranking.raters`): every rater who judged a real pair, excluded ones too
  (the raters page shows them beside the quality checks), and each cohort's summary.
- ``judge_audit`` (`ranking.judge_audit`): the evaluator table of LLM judges and human cohorts.
- ``study_quality`` (`ranking.study_quality`): separability, agreement with confidence and the
  pair-rank Brier score between boards (LLM judges against humans, cohort against cohort), the
  split-half reliability and what the study's target separability needs.

A refit (``ranking.services.snapshot_refit_study``) calls :func:`measures_attach` once its
boards are stored; the commands call the ``*_compute`` functions directly.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Count, Sum

from annotation.models import Judgment, Rater
from completions.families import canonical_families
from completions.models import Study

from . import board, bradley_terry, judge_audit, raters, study_quality
from .models import LeaderboardSnapshot
from .selectors import (
    JUDGMENT_COLUMNS,
    JUDGMENT_TYPES,
    VERDICTS,
    completion_words,
    values_frame,
)

logger = logging.getLogger(__name__)

SECTIONS = ("rater_quality", "judge_audit", "study_quality")
#: The boards compared with confidence: (board, reference, label).
BOARD_PAIRS = [("llm", "human", "LLM judges against human raters")]
#: A cohort board is graded only with this many comparisons.
COHORT_MIN_COMPARISONS = 30


# --------------------------------------------------------------------------- raters


def rater_judgments_frame(study: Study) -> pd.DataFrame:
    """Every human verdict on a real pair, excluded raters' included (one query)."""
    columns = [c for c in JUDGMENT_COLUMNS if c not in ("kind_a", "kind_b")]
    rows = (
        Judgment.objects.filter(
            study=study, pair__isnull=False, quality_check=False, judge_kind="human"
        )
        .order_by("id")
        .values_list(*[JUDGMENT_COLUMNS[c] for c in columns])
    )
    frame = values_frame(rows, {c: JUDGMENT_TYPES[c] for c in columns})
    frame["shown_left"] = frame["shown_left"].replace("", None)
    for column in ("winner", "shown_left"):
        frame[column] = frame[column].astype(pd.CategoricalDtype(VERDICTS))
    return frame


def rater_cohorts(study: Study) -> dict[str, str]:
    return dict(Rater.objects.filter(study=study).values_list("pseudonym", "cohort"))


def rater_quality_frame(study: Study, *, data: Any = None) -> pd.DataFrame:
    """Per rater (pseudonym): cohort, verdicts, reliability, position bias, outlier test. The
    verdicts are those of a loaded study (``data``) when given, else read here."""
    verdicts = getattr(data, "rater_verdicts", None)
    if verdicts is None:
        verdicts = rater_judgments_frame(study)
    return raters.rater_quality(verdicts, rater_cohorts(study))


def weighted_judgments(
    judgments: pd.DataFrame, *, data: Any, study: Study, mode: str
) -> pd.DataFrame:
    """``judgments`` with the rater weights of ``mode`` applied: a ``rater_weight`` column
    ("reliability"), or without the outliers' verdicts ("no-outliers"); as they are for
    "none". The rater model is fitted once per loaded study (kept on ``data``)."""
    if mode == "none" or judgments.empty:
        return judgments
    if getattr(data, "rater_quality", None) is None:
        data.rater_quality = rater_quality_frame(study, data=data)
    factor = raters.judgment_weights(judgments, data.rater_quality, mode)
    if factor is None:
        return judgments
    if mode == "no-outliers":
        return judgments[factor.to_numpy() > 0]
    return judgments.assign(rater_weight=factor.to_numpy())


def rater_quality_compute(study: Study, *, quality: pd.DataFrame | None = None) -> dict[str, Any]:
    """The ``rater_quality`` section (and `rater_quality --format json`)."""
    quality = rater_quality_frame(study) if quality is None else quality
    excluded = dict(
        Rater.objects.filter(study=study).values_list("pseudonym", "exclusion_override")
    )
    flagged = dict(Rater.objects.filter(study=study).values_list("pseudonym", "flagged"))
    rows = []
    for name, row in quality.iterrows():
        override = excluded.get(str(name))
        rows.append(
            {
                "rater": str(name),
                "cohort": row["cohort"] if isinstance(row["cohort"], str) else None,
                "n": int(row["n"]),
                "reliability": board.number(row["reliability"], 3),
                "position_bias": board.number(row["position_bias"], 3),
                "outlier": bool(row["outlier"]),
                "left_rate": board.number(row["left_rate"], 3),
                "p_value": board.number(row["p_value"], 4),
                "excluded": bool(flagged.get(str(name)) if override is None else override),
            }
        )
    cohorts = [
        {
            "cohort": str(label),
            "raters": int(row["raters"]),
            "n": int(row["n"]),
            "reliability": board.number(row["reliability"], 3),
            "position_bias": board.number(row["position_bias"], 3),
            "outliers": int(row["outliers"]),
        }
        for label, row in raters.cohort_summary(quality).iterrows()
    ]
    result: dict[str, Any] = plain(
        {"study": study.slug, "model": MODEL_NOTE, "raters": rows, "cohorts": cohorts}
    )
    return result


MODEL_NOTE = {
    "name": "noisy Bradley-Terry (crowd-BT)",
    "items": "replies (one per context and system)",
    "reliability": "probability that the rater judges on quality rather than at random",
    "position_bias": "probability of picking the left reply when not judging on quality "
    "(0.5: no side preferred)",
    "outlier": "Chatbot Arena's sequential test: Fisher's combination of per-verdict p-values "
    f"at {', '.join(str(c) for c in raters.CHECKPOINTS)} verdicts, level "
    f"{raters.OUTLIER_ALPHA} with a Bonferroni correction over the looks",
}


# --------------------------------------------------------------------------- judges


def judge_costs(study: Study) -> pd.DataFrame:
    """Per LLM judge (endpoint name): done judge units, their cost (USD) and latency (ms)."""
    from llm.models import Unit, UnitStatus

    rows = (
        Unit.objects.filter(run__study=study, run__kind="judge", status=UnitStatus.DONE)
        .values("endpoint__name")
        .annotate(verdicts=Count("id"), cost=Sum("cost"), latency_ms=Sum("latency_ms"))
    )
    frame = pd.DataFrame.from_records(
        [
            (r["endpoint__name"], r["verdicts"], r["cost"] or 0.0, r["latency_ms"] or 0.0)
            for r in rows
        ],
        columns=["judge", "verdicts", "cost", "latency_ms"],
    )
    return frame.set_index("judge")


def judgment_cohorts(study: Study, judgments: pd.DataFrame) -> pd.Series:
    """Per judgment of ``judgments`` (its index kept): its rater's cohort (missing for a
    judgment without a rater); the frame's own ``cohort`` column when it has one."""
    if "cohort" in judgments.columns:
        return judgments["cohort"]
    ids = judgments["id"]
    rows = (
        Judgment.objects.filter(study=study, rater__isnull=False)
        .order_by()
        .values_list("id", "rater__cohort")
    )
    by_id = values_frame(rows, {"id": "int", "cohort": "text"})
    return ids.map(pd.Series(by_id["cohort"].to_numpy(dtype=object), index=by_id["id"]))


def reply_lengths(pair_texts: pd.DataFrame) -> pd.DataFrame:
    """Per pair (item), the two replies' lengths in words (NaN when a text is unknown)."""

    def words(texts: pd.Series) -> pd.Series:
        return texts.map(lambda t: len(t.split()) if isinstance(t, str) else None).astype(float)

    return pd.DataFrame(
        {"words_a": words(pair_texts["text_a"]), "words_b": words(pair_texts["text_b"])}
    )


def item_lengths(judgments: pd.DataFrame, words: pd.DataFrame) -> pd.DataFrame:
    """Per pair (item) of ``judgments``, its two replies' lengths in words (NaN when a text is
    unknown), from ``words`` per context and system: a reply is its context's completion of
    its system, so no pair or text is read for it."""
    items = judgments.drop_duplicates("item")
    names = pd.Index(pd.unique(words["system"].astype(str)))
    known = pd.Index(_reply_keys(words["context"], words["system"], names))
    counts = words["words"].to_numpy(dtype=float)

    def side(column: str) -> np.ndarray:
        at = known.get_indexer(_reply_keys(items["context"], items[column], names))
        return np.where(at >= 0, counts[at], np.nan)

    index = pd.Index(items["item"].to_numpy(), name="item")
    return pd.DataFrame({"words_a": side("system_a"), "words_b": side("system_b")}, index=index)


def _reply_keys(context: pd.Series, system: pd.Series, names: pd.Index) -> np.ndarray:
    """One integer per (context, system): a system's position in ``names`` (len(names) when
    not there). A categorical column's names are looked up once each, never per row."""
    if isinstance(system.dtype, pd.CategoricalDtype):
        found = names.get_indexer(system.cat.categories.astype(str))
        codes = np.append(found, -1)[system.cat.codes.to_numpy()]  # a missing name: -1
    else:
        codes = names.get_indexer(pd.Index(system.astype(str).to_numpy()))
    codes = np.where(codes < 0, len(names), codes)
    keys: np.ndarray = context.to_numpy(dtype=np.int64) * (len(names) + 1) + codes
    return keys


def judge_audit_compute(study: Study, *, data: Any) -> dict[str, Any]:
    """The ``judge_audit`` section (and `judge_audit --format json`)."""
    raw = data.raw if data.raw is not None else data.judgments
    # Lengths from the texts a style fit loaded, else counted per completion (never per pair).
    if data.pair_texts is not None:
        lengths = reply_lengths(data.pair_texts)
    else:
        lengths = item_lengths(raw, completion_words(study))
    systems = data.systems
    families = canonical_families(
        systems["family"].astype(object).fillna("").unique(), data.aliases
    )
    system_families = {str(s): families.get(f or "", "") for s, f in systems["family"].items()}
    judge_names = (
        raw.loc[raw["judge_kind"] == "llm", ["judge", "judge_family"]]
        .astype(object)
        .drop_duplicates()
    )
    judge_family_map = canonical_families(
        judge_names["judge_family"].fillna("").unique(), data.aliases
    )
    judge_families = {
        str(j): judge_family_map.get(f if isinstance(f, str) else "", "")
        for j, f in zip(judge_names["judge"], judge_names["judge_family"], strict=True)
    }
    rows = judge_audit.judge_audit(
        raw,
        min_human=data.rule.human_min_verdicts,
        lengths=lengths,
        system_families=system_families,
        judge_families=judge_families,
        cohorts=judgment_cohorts(study, raw),
        costs=judge_costs(study),
    )
    return {"study": study.slug, "reference": "human majority", "judges": rows}


# --------------------------------------------------------------------------- the study


def study_quality_compute(
    study: Study, *, data: Any, boards: dict[str, dict[str, Any]], params: dict[str, Any]
) -> dict[str, Any]:
    """The ``study_quality`` section from the fitted ``boards`` (judges -> leaderboard result,
    at least human and llm) and per-cohort boards fitted here on the same bootstrap recipe."""
    tables = {
        name: table for name, result in boards.items() if (table := _table(result)) is not None
    }
    moments = {name: _moments(result) for name, result in boards.items()}
    separability = {name: _separability(table) for name, table in tables.items()}
    comparisons = [(b, r, label) for b, r, label in BOARD_PAIRS if b in tables and r in tables]
    cohort_tables, cohort_moments = _cohort_boards(study, data, params)
    tables.update(cohort_tables)
    moments.update(cohort_moments)
    labels = list(cohort_tables)
    comparisons += [
        (a, b, f"cohort {a.split(':', 1)[1]} against cohort {b.split(':', 1)[1]}")
        for a in labels
        for b in labels
        if a != b
    ]
    agreement, brier = [], []
    for name, reference, label in comparisons:
        value, pairs = study_quality.agreement_with_confidence(tables[name], tables[reference])
        agreement.append(
            {"board": name, "reference": reference, "label": label, "value": value, "pairs": pairs}
        )
        score, n = study_quality.pair_rank_brier(moments[name], tables[reference]["elo"])
        brier.append(
            {"board": name, "reference": reference, "label": label, "value": score, "pairs": n}
        )
    return {
        "study": study.slug,
        "level": round(100 * (1 - params["alpha"])),
        "separability": separability,
        "agreement_with_confidence": agreement,
        "pair_rank_brier": brier,
        "split_half": {
            name: _split_half(data, study, name, params)
            for name in ("human", "llm")
            if name in boards
        },
        "separation": {
            name: {
                "factors": study_quality.separation_factors(table),
                "judgments": int(boards[name].get("n_judgments") or 0),
            }
            for name, table in tables.items()
            if name in boards
        },
    }


def _table(result: dict[str, Any]) -> pd.DataFrame | None:
    rows = [r for r in result.get("systems", []) if r.get("ci_low") is not None]
    if not rows:
        return None
    return pd.DataFrame(rows).set_index("system")[["elo", "ci_low", "ci_high"]].astype(float)


def _moments(result: dict[str, Any]) -> pd.DataFrame:
    moments = result.get("bootstrap_moments") or {}
    return pd.DataFrame.from_dict(moments, orient="index", columns=["mean", "var"]).astype(float)


def _separability(table: pd.DataFrame) -> dict[str, Any]:
    overlapping, pairs = study_quality.overlapping_pairs(
        table["ci_low"].tolist(), table["ci_high"].tolist()
    )
    value = None if pairs == 0 else 1.0 - overlapping / pairs
    return {"value": value, "separated": pairs - overlapping, "pairs": pairs, "systems": len(table)}


def _comparisons(
    data: Any, study: Study, judgments: pd.DataFrame, params: dict[str, Any]
) -> pd.DataFrame:
    weighted = weighted_judgments(
        judgments, data=data, study=study, mode=params.get("rater_weights") or "none"
    )
    return board.comparisons_from_judgments(
        weighted, weights=params["weights"], ties=params["ties"]
    )


def _split_half(data: Any, study: Study, judges: str, params: dict[str, Any]) -> dict[str, Any]:
    comparisons = _comparisons(data, study, data.select(judges=judges), params)
    if comparisons.empty:
        return {"value": None, "half_correlation": None, "splits": 0}
    encoded = bradley_terry.encode(comparisons)  # once: each half is a mask over its rows

    def fit(half: np.ndarray) -> pd.Series:
        return bradley_terry.elo_of_rows(encoded, half)

    return study_quality.split_half(comparisons, fit)


def _cohort_boards(
    study: Study, data: Any, params: dict[str, Any]
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """Each cohort's human board with the main board's bootstrap (clusters, rounds, seed)."""
    human = data.select(judges="human")
    if human.empty:
        return {}, {}
    labels = judgment_cohorts(study, human)
    tables, moments = {}, {}
    for cohort in sorted(labels.dropna().astype(str).unique()):
        comparisons = _comparisons(data, study, human[(labels == cohort).to_numpy()], params)
        if len(comparisons) < COHORT_MIN_COMPARISONS:
            continue
        fitted, _ = board.fit_board(
            comparisons, dict(params, ci="bootstrap"), anchor=params.get("anchor")
        )
        name = f"cohort:{cohort}"
        tables[name] = fitted.table[["elo", "ci_low", "ci_high"]].astype(float)
        moments[name] = pd.DataFrame.from_dict(
            study_quality.draw_moments(fitted.draws), orient="index", columns=["mean", "var"]
        )
    return tables, moments


# --------------------------------------------------------------------------- refits


def measures_attach(
    *, study: Study, data: Any, snapshots: list[LeaderboardSnapshot], params: dict[str, Any]
) -> None:
    """Store the three sections in this refit's snapshots (those that lack them: a snapshot of
    unchanged inputs keeps what it has). A failure is logged and leaves the boards as stored."""
    missing = [s for s in snapshots if any(key not in s.result for key in SECTIONS)]
    if not missing:
        return
    try:
        sections = _sections(study, data, snapshots, params)
    except Exception:
        logger.exception("measures of %s failed", study.slug)
        return
    for snapshot in missing:
        snapshot.result = dict(snapshot.result, **plain(sections))
        snapshot.save(update_fields=["result"])


def plain(value: Any) -> Any:
    """Plain JSON types only: numpy scalars become Python ones, NaN and infinities null."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        return None if not math.isfinite(float(value)) else float(value)
    return value


def _sections(
    study: Study, data: Any, snapshots: list[LeaderboardSnapshot], params: dict[str, Any]
) -> dict[str, Any]:
    boards = {s.judges: s.result for s in snapshots if s.subset == "all" and s.preset == "default"}
    if getattr(data, "rater_quality", None) is None:
        data.rater_quality = rater_quality_frame(study, data=data)
    return {
        "rater_quality": rater_quality_compute(study, quality=data.rater_quality),
        "judge_audit": judge_audit_compute(study, data=data),
        "study_quality": study_quality_compute(study, data=data, boards=boards, params=params),
    }
