"""Judges audited against the study's own humans: an evaluator table as AlpacaEval publishes
one, computed inside a study. Pure pandas/numpy, no Django.

One row per LLM judge, one for the LLM ensemble and one per human cohort. Every rate is over the
judge's verdicts as judged (an LLM judge's two orders are two verdicts); the reference is the
**human majority** of a pair: the strict plurality of a / tie / b among at least ``min_human``
human verdicts (``ranking.agreement.majority``). A cohort's own verdicts are part of that
majority, so a cohort is held out as AlpacaEval holds out a human: each of its verdicts is
compared with the majority of the *other* human verdicts on the pair.

- ``agreement`` (``agreement_ci_low``/``_high``): share of verdicts equal to the reference (a
  tie meets a tie), with a 95 % percentile interval over resampled source conversations;
  ``agreement_no_ties``: the same over non-tie verdicts on pairs whose majority is not a tie.
  The ensemble row compares the ensemble's own strict majority of every LLM vote on the pair.
- ``first_shown_rate``: share of non-tie verdicts (side shown known) for the reply shown first.
- ``flip_rate``: over pairs the judge saw in both orders, the share whose two verdicts differ.
- ``prefer_longer``: share of non-tie verdicts, on pairs whose replies differ in length (words),
  for the longer reply; ``humans_prefer_longer``: the same share among the human verdicts on
  the same pairs.
- ``self_family_rate``: on pairs where exactly one reply comes from the judge's own family
  (canonical, through the alias table), the share of non-tie verdicts for that reply.
- ``ece`` and ``brier``: calibration of the judge's vote share for reply a on a pair (ties
  half) against the human majority, on pairs whose majority is a or b: Brier = mean squared
  difference, ECE = the bin-weighted mean |mean vote share − share of majority a| over 10
  equal-width bins. For a cohort each verdict is its own vote share against the held-out
  majority.
- ``cost_per_1000``, ``seconds_per_1000``: USD and seconds of provider time per 1,000
  verdicts, from the judge runs' recorded cost and latency (None for a cohort).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .agreement import _bootstrap_rate, majority

ENSEMBLE = "LLM ensemble"
ECE_BINS = 10
CATEGORIES = ("a", "tie", "b")

ROW_FIELDS = (
    "judge",
    "kind",
    "n",
    "agreement",
    "agreement_ci_low",
    "agreement_ci_high",
    "agreement_no_ties",
    "first_shown_rate",
    "flip_rate",
    "prefer_longer",
    "humans_prefer_longer",
    "self_family_rate",
    "ece",
    "brier",
    "cost_per_1000",
    "seconds_per_1000",
)


def judge_audit(
    raw: pd.DataFrame,
    *,
    min_human: int = 2,
    lengths: pd.DataFrame | None = None,
    system_families: dict[str, str] | None = None,
    judge_families: dict[str, str] | None = None,
    cohorts: pd.Series | None = None,
    costs: pd.DataFrame | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """The evaluator table (see the module docstring).

    ``raw``: every counted verdict as judged (``item``, ``judge``, ``judge_kind``, ``winner``,
    ``shown_left``, ``system_a``, ``system_b``, optional ``cluster``); ``lengths``: per item
    ``words_a``, ``words_b``; ``cohorts``: per human verdict (raw's index) its rater's cohort;
    ``costs``: per judge ``verdicts``, ``cost``, ``latency_ms`` (sums over its done units).
    """
    frame = _prepared(raw, lengths, system_families)
    human = frame[frame["judge_kind"] == "human"]
    llm = frame[frame["judge_kind"] == "llm"]
    reference = majority(frame, "human", min_verdicts=min_human)
    rows = []
    for judge in sorted(llm["judge"].astype(str).unique()):
        verdicts = llm[llm["judge"].astype(str) == judge]
        family = (judge_families or {}).get(judge, "")
        row = _llm_row(verdicts, reference, human, family, n_boot, seed)
        rows.append(dict(row, judge=judge, kind="llm", **_cost(costs, [judge])))
    if llm["judge"].nunique() > 1:
        families = llm["judge"].astype(str).map(judge_families or {}).fillna("")
        row = _ensemble_row(llm, reference, human, families, n_boot, seed)
        names = sorted(llm["judge"].astype(str).unique())
        rows.append(dict(row, judge=ENSEMBLE, kind="llm", **_cost(costs, names)))
    if cohorts is not None and len(human):
        labels = cohorts.reindex(human.index)
        for cohort in sorted(labels.dropna().astype(str).unique()):
            row = _cohort_row(human, labels == cohort, min_human, n_boot, seed)
            rows.append(dict(row, judge=str(cohort), kind="cohort"))
    return [{key: _clean(row.get(key)) for key in ROW_FIELDS} for row in rows]


def _prepared(
    raw: pd.DataFrame, lengths: pd.DataFrame | None, system_families: dict[str, str] | None
) -> pd.DataFrame:
    frame = raw.copy()
    for column in ("winner", "shown_left", "judge_kind"):
        frame[column] = frame[column].astype(object)
    frame["longer"] = None
    if lengths is not None and len(frame):
        words = lengths.reindex(frame["item"].to_numpy())
        a, b = words["words_a"].to_numpy(dtype=float), words["words_b"].to_numpy(dtype=float)
        longer = np.full(len(frame), None, dtype=object)
        longer[a > b], longer[b > a] = "a", "b"
        frame["longer"] = longer
    families = system_families or {}
    for side in ("a", "b"):
        # Looked up once per system, not per verdict (a missing name has no family).
        codes, systems = pd.factorize(frame[f"system_{side}"].astype(object))
        looked_up = [families.get(str(system), "") for system in systems]
        frame[f"family_{side}"] = np.asarray([*looked_up, ""], dtype=object)[codes]
    return frame


# --------------------------------------------------------------------------- rows


def _llm_row(
    verdicts: pd.DataFrame,
    reference: pd.Series,
    human: pd.DataFrame,
    family: str,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    target = verdicts["item"].map(reference)
    row = _agreement(verdicts["winner"], target, _units(verdicts), n_boot, seed)
    row.update(
        n=len(verdicts),
        first_shown_rate=first_shown_rate(verdicts),
        flip_rate=flip_rate(verdicts),
        self_family_rate=self_family_rate(verdicts, pd.Series(family, index=verdicts.index)),
        **_length_rates(verdicts, human),
        **calibration(vote_share(verdicts), reference),
    )
    return row


def _ensemble_row(
    llm: pd.DataFrame,
    reference: pd.Series,
    human: pd.DataFrame,
    families: pd.Series,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    ensemble = majority(llm, "llm")
    both = ensemble.index.intersection(reference.dropna().index)
    votes = ensemble.reindex(both)
    units = _units(llm).groupby(llm["item"].to_numpy()).first().reindex(both)
    row = _agreement(votes, reference.reindex(both), units, n_boot, seed)
    row.update(
        n=len(llm),
        first_shown_rate=first_shown_rate(llm),
        flip_rate=flip_rate(llm),
        self_family_rate=self_family_rate(llm, families),
        **_length_rates(llm, human),
        **calibration(vote_share(llm), reference),
    )
    return row


def _cohort_row(
    human: pd.DataFrame, mask: pd.Series, min_human: int, n_boot: int, seed: int
) -> dict[str, Any]:
    held_out = held_out_majority(human, min_human)[mask.to_numpy()]
    verdicts = human[mask.to_numpy()]
    row = _agreement(verdicts["winner"], held_out, _units(verdicts), n_boot, seed)
    share = verdicts["winner"].map({"a": 1.0, "tie": 0.5, "b": 0.0})
    row.update(
        n=len(verdicts),
        first_shown_rate=first_shown_rate(verdicts),
        flip_rate=None,
        self_family_rate=None,
        **_length_rates(verdicts, human),
        **calibration_pairs(share.to_numpy(dtype=float), held_out.to_numpy(dtype=object)),
        cost_per_1000=None,
        seconds_per_1000=None,
    )
    return row


# --------------------------------------------------------------------------- measures


def _agreement(
    votes: pd.Series, target: pd.Series, units: pd.Series, n_boot: int, seed: int
) -> dict[str, Any]:
    votes, target = votes.astype(object), target.astype(object)
    known = target.notna() & votes.notna()
    matches = (votes[known] == target[known]).astype(float)
    low, high = _bootstrap_rate(matches, units[known], n_boot, seed, 0.05)
    decisive = known & (votes != "tie") & (target != "tie")
    return {
        "agreement": _mean(matches),
        "agreement_ci_low": low,
        "agreement_ci_high": high,
        "agreement_no_ties": _mean((votes[decisive] == target[decisive]).astype(float)),
    }


def _units(verdicts: pd.DataFrame) -> pd.Series:
    for column in ("cluster", "context", "item"):
        if column in verdicts.columns:
            return verdicts[column].astype(str)
    return pd.Series(np.arange(len(verdicts)).astype(str), index=verdicts.index)


def held_out_majority(human: pd.DataFrame, min_human: int) -> pd.Series:
    """Per human verdict (index kept): the strict plurality of the *other* human verdicts on its
    pair (at least ``min_human`` of them), or None."""
    # Counts per (pair, verdict) by integer codes: a verdict outside CATEGORIES counts nowhere.
    items, _ = pd.factorize(human["item"])
    verdict = pd.Categorical(human["winner"].astype(object), categories=list(CATEGORIES)).codes
    k, valid = len(CATEGORIES), verdict >= 0
    rows = np.flatnonzero(valid)
    counts = np.bincount(
        items[valid] * k + verdict[valid], minlength=(items.max() + 1 if len(items) else 0) * k
    ).reshape(-1, k)
    others = counts[items].astype(float)
    others[rows, verdict[valid]] -= 1  # the verdict's own vote
    ordered = np.sort(others, axis=1)
    strict = (ordered[:, -1] > ordered[:, -2]) & (others.sum(axis=1) >= max(min_human, 1))
    top = np.asarray(CATEGORIES, dtype=object)[others.argmax(axis=1)]
    top[~strict] = None
    return pd.Series(top, index=human.index).astype(object)


def first_shown_rate(verdicts: pd.DataFrame) -> float | None:
    """Share of non-tie verdicts with a known side shown that chose the reply shown first."""
    shown = verdicts["shown_left"].astype(object)
    winner = verdicts["winner"].astype(object)
    known = shown.isin(["a", "b"]) & winner.isin(["a", "b"])
    return _mean((winner[known] == shown[known]).astype(float))


def flip_rate(verdicts: pd.DataFrame) -> float | None:
    """Over (judge, pair) seen in both orders, the share whose two verdicts differ."""
    frame = verdicts[verdicts["shown_left"].astype(object).isin(["a", "b"])]
    if frame.empty:
        return None
    wide = frame.assign(
        judge=frame["judge"].astype(str),
        shown_left=frame["shown_left"].astype(object),
        winner=frame["winner"].astype(object),
    ).pivot_table(index=["judge", "item"], columns="shown_left", values="winner", aggfunc="last")
    if not {"a", "b"} <= set(wide.columns):
        return None
    both = wide.dropna(subset=["a", "b"])
    return _mean((both["a"] != both["b"]).astype(float))


def self_family_rate(verdicts: pd.DataFrame, families: pd.Series) -> float | None:
    """On pairs where exactly one reply is of the judge's family (``families``, per verdict),
    the share of non-tie verdicts for that reply."""
    family = families.astype(str).to_numpy()
    own_a = (verdicts["family_a"].to_numpy() == family) & (family != "")
    own_b = (verdicts["family_b"].to_numpy() == family) & (family != "")
    winner = verdicts["winner"].astype(object).to_numpy()
    mask = (own_a ^ own_b) & np.isin(winner, ["a", "b"])
    chose_own = np.where(own_a, winner == "a", winner == "b")
    return _mean(pd.Series(chose_own[mask].astype(float)))


def _length_rates(verdicts: pd.DataFrame, human: pd.DataFrame) -> dict[str, float | None]:
    items = verdicts.loc[verdicts["longer"].notna(), "item"].unique()
    return {
        "prefer_longer": prefer_longer(verdicts),
        "humans_prefer_longer": prefer_longer(human[human["item"].isin(items)]),
    }


def prefer_longer(verdicts: pd.DataFrame) -> float | None:
    """Share of non-tie verdicts on pairs of unequal length that chose the longer reply."""
    winner = verdicts["winner"].astype(object)
    mask = verdicts["longer"].notna() & winner.isin(["a", "b"])
    return _mean((winner[mask] == verdicts.loc[mask, "longer"]).astype(float))


def vote_share(verdicts: pd.DataFrame) -> pd.Series:
    """Per item, the share of the verdicts for reply a (a tie counts half)."""
    share = verdicts["winner"].astype(object).map({"a": 1.0, "tie": 0.5, "b": 0.0})
    return share.groupby(verdicts["item"].to_numpy()).mean()


def calibration(share: pd.Series, reference: pd.Series) -> dict[str, float | None]:
    """ECE and Brier of per-item vote shares against the human majority (items whose majority
    is a or b)."""
    target = reference.reindex(share.index)
    return calibration_pairs(share.to_numpy(dtype=float), target.to_numpy(dtype=object))


def calibration_pairs(share: np.ndarray, target: np.ndarray) -> dict[str, float | None]:
    mask = np.isin(target, ["a", "b"]) & ~np.isnan(share)
    if not mask.any():
        return {"ece": None, "brier": None}
    q, y = share[mask], (target[mask] == "a").astype(float)
    return {"ece": expected_calibration_error(q, y), "brier": float(np.mean((q - y) ** 2))}


def expected_calibration_error(q: np.ndarray, y: np.ndarray, bins: int = ECE_BINS) -> float:
    """Σ_b (n_b / N) |mean q − mean y| over ``bins`` equal-width bins of q (1.0 in the last)."""
    index = np.minimum((q * bins).astype(int), bins - 1)
    total = 0.0
    for b in np.unique(index):
        inside = index == b
        total += inside.mean() * abs(q[inside].mean() - y[inside].mean())
    return float(total)


def _cost(costs: pd.DataFrame | None, judges: list[str]) -> dict[str, float | None]:
    if costs is None or costs.empty:
        return {"cost_per_1000": None, "seconds_per_1000": None}
    rows = costs.reindex(judges).dropna(how="all")
    verdicts = float(rows["verdicts"].sum()) if len(rows) else 0.0
    if verdicts <= 0:
        return {"cost_per_1000": None, "seconds_per_1000": None}
    latency = rows["latency_ms"].sum()
    return {
        "cost_per_1000": 1000.0 * float(rows["cost"].sum()) / verdicts,
        "seconds_per_1000": float(latency) / verdicts if latency > 0 else None,
    }


def _mean(values: pd.Series) -> float | None:
    return float(values.mean()) if len(values) else None


def _clean(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        value = float(value)
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, np.integer):
        return int(value)
    return value
