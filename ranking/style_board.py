"""The style-controlled board and the judges' length-bias audit, from loaded frames (no Django
import). `ranking.services` adds them to a leaderboard when the study (or the command) names
style features; the maths is `ranking.style`.
"""

from __future__ import annotations

import math
import warnings
import weakref
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from . import board, bradley_terry, style
from .bradley_terry import BradleyTerryWarning
from .verdicts import VerdictRule

#: A judge needs this many comparisons (with known texts) for its own length coefficient.
AUDIT_MIN_COMPARISONS = 30
STYLE_NOTE = (
    "Each system's Elo if its replies had the same style as its opponents' (Chatbot Arena's "
    "style control): Bradley–Terry fitted jointly with one covariate per feature, the "
    "normalised difference (a − b)/(a + b) of the two replies' counts (0 when both are 0) "
    "divided by its root mean square, so a coefficient is the change in log-odds of winning "
    "per standard deviation of that difference. A positive coefficient means judges prefer the "
    "reply with more of it."
)
ARENA_NOTE = (
    "Each system's Elo under LMArena's recipe (arena-rank's ContextualBradleyTerry defaults): "
    "the normalised differences (a − b)/(a + b) centred and standardised, each comparison "
    "weighed by the inverse of its system pair's count (at least 50), and the coefficients "
    "shrunk by a ridge of 1 against the mean log-likelihood. Centring makes which reply is "
    "stored first act as an intercept; the HEART recipe does not centre."
)


def with_covariates(
    comparisons: pd.DataFrame, pair_texts: pd.DataFrame, names: list[str]
) -> tuple[pd.DataFrame, list[str], dict[str, str]]:
    """``comparisons`` (carrying ``item``, the pair) with one covariate column per usable
    feature; the features used and why the others were left out."""
    # Each pair's texts are counted once per load of the study (every board and the judges'
    # audit of a refit read the same counts), then spread to the comparisons' rows.
    items, row_of = np.unique(comparisons["item"].to_numpy(), return_inverse=True)
    texts = pair_texts.reindex(items)
    counts = {}
    for side in ("a", "b"):
        per_item = pair_feature_counts(pair_texts, side).reindex(items)[names]
        counts[side] = pd.DataFrame(per_item.to_numpy()[row_of], columns=per_item.columns)
        counts[side].index = comparisons.index
    covariates, dropped = style.covariates(counts["a"], counts["b"])
    unknown = texts["text_a"].isna().to_numpy()[row_of] | texts["text_b"].isna().to_numpy()[row_of]
    if unknown.all():
        return comparisons, [], {n: "no comparison has both texts" for n in names}
    used = [n for n in names if n in covariates.columns]
    return comparisons.assign(**{n: covariates[n].to_numpy() for n in used}), used, dropped


#: Feature counts of the pairs' texts, per loaded frame (by identity, held weakly): the boards
#: and audits of one refit read the same frame and count its texts once.
_COUNTED: dict[int, tuple[weakref.ref[pd.DataFrame], dict[str, pd.DataFrame]]] = {}


def pair_feature_counts(pair_texts: pd.DataFrame, side: str) -> pd.DataFrame:
    """Every style feature counted in each pair's reply ``side`` ("a" or "b"), once per
    loaded frame."""
    entry = _COUNTED.get(id(pair_texts))
    if entry is None or entry[0]() is not pair_texts:
        for key in [k for k, (ref, _) in _COUNTED.items() if ref() is None]:
            del _COUNTED[key]
        entry = (weakref.ref(pair_texts), {})
        _COUNTED[id(pair_texts)] = entry
    counted = entry[1]
    if side not in counted:
        counted[side] = style.text_features(pair_texts[f"text_{side}"])
    return counted[side]


def coefficient_rows(coefficients: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """The contract's ``style``: per feature {coef, se, ci_low, ci_high, elo_per_sd, label}."""
    return {
        str(name): {
            "coef": board.number(row["coef"], 4),
            "se": board.number(row["se"], 4),
            "ci_low": board.number(row["ci_low"], 4),
            "ci_high": board.number(row["ci_high"], 4),
            "elo_per_sd": board.number(row["elo_per_sd"], 1),
            "label": style.FEATURES[str(name)].label,
        }
        for name, row in coefficients.iterrows()
    }


def style_section(
    judgments: pd.DataFrame,
    *,
    pair_texts: pd.DataFrame,
    names: list[str],
    systems: pd.DataFrame,
    params: dict[str, Any],
    rule: VerdictRule,
    judges: str,
    anchor: str | None,
) -> dict[str, Any]:
    """``{"style": coefficients, "style_control": {features, dropped, systems, interval, note,
    warnings}}`` for the counted ``judgments`` of one board."""
    comparisons = board.comparisons_from_judgments(
        judgments,
        weights=params["weights"],
        ties=params["ties"],
        rule=rule,
        combined=params.get("combined", "by_count") if judges == "all" else "by_count",
    )
    comparisons, used, dropped = with_covariates(comparisons, pair_texts, names)
    notes = [f"{n} is left out: {why}" for n, why in dropped.items()]
    if params["ties"] == "davidson":
        notes.append("ties count as half a win here (Davidson's tie model has no covariates)")
    if len(comparisons) == 0:
        return {"style": {}, "style_control": None}
    ci = params["ci"] if params["ci"] in ("bootstrap", "sandwich", "fisher") else "sandwich"
    recipe = params.get("style_recipe") or "heart"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BradleyTerryWarning)
        fitted = style.fit(
            comparisons,
            used,
            ci=ci,
            bootstrap_rounds=params["bootstrap_rounds"],
            seed=params["seed"],
            alpha=params["alpha"],
            anchor=anchor,
            recipe=recipe,
        )
    notes += [str(w.message) for w in caught]
    level = round(100 * (1 - params["alpha"]))
    interval: dict[str, Any] = {
        "method": ci,
        "level": level,
        "nominal_level": level,
        "unit": fitted.unit,
        "min_comparisons": board.min_rows(params),
    }
    if ci == "bootstrap":
        interval.update(rounds=params["bootstrap_rounds"], centred_on=fitted.reference)
    interval["label"] = board.interval_label(interval)
    unbounded = bradley_terry.unbounded_systems(comparisons)
    return {
        "style": coefficient_rows(fitted.coefficients),
        "style_control": {
            "features": used,
            "requested": names,
            "dropped": dropped,
            "systems": board.system_rows(
                fitted.table, systems, min_n=board.min_rows(params), unbounded=unbounded
            ),
            "interval": interval,
            "recipe": recipe,
            "note": STYLE_NOTE if recipe == "heart" else ARENA_NOTE,
            "warnings": notes,
        },
    }


# --------------------------------------------------------------------------- judges' audit


def length_audit(
    judgments: pd.DataFrame,
    *,
    pair_texts: pd.DataFrame,
    params: dict[str, Any],
    alpha: float = 0.05,
) -> dict[str, Any] | None:
    """Per LLM judge, its length coefficient (log-odds per SD of the normalised length
    difference, systems controlled) beside the human raters' pooled one, and the difference
    with its interval: does this judge prefer the longer reply more than humans do?

    Every verdict weighs alike here, and the covariate is standardised once over all the
    judgments, so every judge's coefficient is on the same scale. The difference's interval
    treats the judge's and the humans' estimates as independent (they rest on different
    verdicts), each from its observed information.
    """
    if judgments.empty or "item" not in judgments.columns:
        return None
    comparisons = board.comparisons_from_judgments(judgments, weights="none", ties="half")
    comparisons, used, _ = with_covariates(comparisons, pair_texts, ["length"])
    if not used:
        return None
    z = stats.norm.ppf(1.0 - alpha / 2.0)
    humans = _length_coef(comparisons[comparisons["judge_kind"] == "human"], z)
    rows = []
    llm = comparisons[comparisons["judge_kind"] == "llm"]
    for judge, rows_of_judge in llm.groupby(llm["judge"].astype(str), observed=True):
        coef = _length_coef(rows_of_judge, z)
        if coef is None:
            continue
        row = {"judge": judge, **coef}
        if humans is not None:
            diff = coef["coef"] - humans["coef"]
            se = math.hypot(coef["se"], humans["se"])
            row.update(diff=diff, diff_ci_low=diff - z * se, diff_ci_high=diff + z * se)
            row["reading"] = _reading(row)
        rows.append(row)
    rounded = [{k: _round(v) for k, v in row.items()} for row in rows]
    return {
        "humans": None if humans is None else {k: _round(v) for k, v in humans.items()},
        "judges": rounded,
        "level": round(100 * (1 - alpha)),
        "min_comparisons": AUDIT_MIN_COMPARISONS,
    }


def _length_coef(comparisons: pd.DataFrame, z: float) -> dict[str, Any] | None:
    if len(comparisons) < AUDIT_MIN_COMPARISONS:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BradleyTerryWarning)
        fitted = style.fit(comparisons, ["length"], ci="fisher")
    coef, se = (float(v) for v in fitted.coefficients[["coef", "se"]].to_numpy()[0])
    if not np.isfinite(se):
        return None
    return {
        "coef": coef,
        "se": se,
        "ci_low": coef - z * se,
        "ci_high": coef + z * se,
        "n": len(comparisons),
    }


def _reading(row: dict[str, Any]) -> str:
    if row["diff_ci_low"] > 0:
        return "prefers the longer reply more than humans do"
    if row["diff_ci_high"] < 0:
        return "prefers the longer reply less than humans do"
    return "no clear difference from humans"


def _round(value: Any) -> Any:
    return board.number(value, 4) if isinstance(value, float) else value


UNCONTROLLED_KEYS = ("elo", "ci_low", "ci_high", "rank_low", "rank_high", "se")


def attach_uncontrolled(result: dict[str, Any]) -> dict[str, Any]:
    """Give every style-controlled row its system's plain (uncontrolled) Elo, interval and ranks
    under ``uncontrolled``, its ``elo_change`` and its axes win rates: the two boards side by
    side."""
    section = result.get("style_control")
    if not section:
        return result
    plain = {row["system"]: row for row in result.get("systems", [])}
    for row in section["systems"]:
        before = plain.get(row["system"], {})
        row["uncontrolled"] = {key: before.get(key) for key in UNCONTROLLED_KEYS}
        row["axes"] = before.get("axes", {})
        if row["elo"] is not None and before.get("elo") is not None:
            row["elo_change"] = round(row["elo"] - before["elo"], 1)
        else:
            row["elo_change"] = None
    return result


def controlled_view(result: dict[str, Any]) -> dict[str, Any]:
    """A leaderboard result with the style-controlled rows (each carrying its uncontrolled Elo,
    see :func:`attach_uncontrolled`) as ``systems``; the plain rows move to
    ``uncontrolled_systems``. Unchanged when the result has no style-controlled board."""
    section = result.get("style_control")
    if not section:
        return result
    return dict(result, systems=section["systems"], uncontrolled_systems=result.get("systems", []))
