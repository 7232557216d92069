"""Raters measured: a pairwise rater model with each rater's reliability and left/right bias, and a
sequential outlier test per rater. Pure numpy/scipy/pandas, no Django.

**The rater model** is the noisy Bradley–Terry model of crowd-kit's ``NoisyBradleyTerry``
(Chen et al.'s crowd-BT family): rater *w* judging reply *l* shown on the left against reply
*r* on the right either judges on quality, with probability ``reliability_w = σ(γ_w)``, and then
prefers *l* with the Bradley–Terry probability ``σ(s_l − s_r)``; or does not, and then picks the
left reply with probability ``position_bias_w = σ(q_w)``::

    Pr(left chosen) = σ(γ_w) σ(s_l − s_r) + (1 − σ(γ_w)) σ(q_w)

Items are the replies themselves (one per context and system), so a rater is measured against
what the other raters said about the same two replies. The parameters are the maximum of the
weighted log-likelihood (L-BFGS-B with the exact gradient) under weak Gaussian priors: on the
reply strengths (precision ``item_prior``: replies seen by a handful of raters stay near even),
on γ (precision ``rater_prior``: a rater with few verdicts stays near the middle instead of
at 0 or 1) and, firmer, on q (``bias_prior``: a rater who judges on quality shows no side
preference to estimate, so their bias stays near 1/2). Ties carry no choice and are left out
of the fit (the model has none); a verdict whose side shown is unknown (imported) keeps its
quality term and reads the bias term as 1/2. With no priors the log-likelihood is exactly
crowd-kit's ``_compute_log_likelihood`` (``tests/ranking/test_raters.py`` checks it, and the fit
against the maximum of crowd-kit's objective).

**The outlier test** follows Chatbot Arena's test for anomalous users (Chiang et al. 2024,
section 5): each verdict gets a p-value against the other verdicts on the same item (here the
same pair of replies), the p-values of a rater's verdicts in the order given are combined by
Fisher's method, ``M_j = −2 Σ_{i ≤ j} log p_i`` (χ² with 2j degrees of freedom for a rater who
judges like the others), and the test looks at a few fixed points ``j`` (``CHECKPOINTS``) with
a Bonferroni correction over the looks. The p-value of a verdict is the conformal rank of its
distance from the pair's mean verdict among the distances of every verdict on the pair (its own
included), so it is valid for any distribution of honest verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats
from scipy.special import expit

#: Prior precision on the reply strengths, each rater's γ and each rater's q (module docstring).
#: q has the firmer prior: a rater who judges on quality shows no side preference to estimate,
#: and without it their bias would wander anywhere in (0, 1).
ITEM_PRIOR = 1.0
RATER_PRIOR = 0.1
BIAS_PRIOR = 1.0
#: Where the fit starts each rater: mostly judging on quality, no side preferred.
START_RELIABILITY = 0.9
#: The points (verdicts judged so far) at which the outlier test looks, and its level.
CHECKPOINTS = (10, 20, 40, 80, 160)
OUTLIER_ALPHA = 0.05
#: How the 5-point verdict reads as a number (canonical orientation: positive = reply a).
_UNKNOWN_STRENGTH = 1.0

RATER_WEIGHTS = ("none", "reliability", "no-outliers")


@dataclass(frozen=True)
class RaterModel:
    """The fitted rater model: ``scores`` per item (log-strength), and per rater its
    ``reliability`` σ(γ), ``position_bias`` σ(q) (the chance of picking the left reply when not
    judging on quality; 1/2 is none) and ``choices`` (the verdicts with a choice that fitted it)."""

    scores: pd.Series
    reliability: pd.Series
    position_bias: pd.Series
    choices: pd.Series
    log_likelihood: float
    converged: bool


def negative_log_likelihood(
    x: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    rater: np.ndarray,
    y: np.ndarray,
    known: np.ndarray,
    weight: np.ndarray,
    n_items: int,
    n_raters: int,
    item_prior: float = 0.0,
    rater_prior: float = 0.0,
    bias_prior: float | None = None,
) -> tuple[float, np.ndarray]:
    """The penalised negative log-likelihood and its gradient.

    ``x`` = [s (n_items), q (n_raters), γ (n_raters)]; per verdict: the ``left`` and ``right``
    item codes, the ``rater`` code, ``y`` 1 when the left item was chosen (0 the right; a
    fraction is allowed), ``known`` whether the side shown is known, and its ``weight``.
    """
    s, q, g = x[:n_items], x[n_items : n_items + n_raters], x[n_items + n_raters :]
    quality = expit(s[left] - s[right])
    trust = expit(g[rater])
    bias = np.where(known, expit(q[rater]), 0.5)
    p = np.clip(trust * quality + (1.0 - trust) * bias, 1e-12, 1.0 - 1e-12)
    loglik = weight * (y * np.log(p) + (1.0 - y) * np.log1p(-p))
    value = -float(loglik.sum())
    bias_prior = rater_prior if bias_prior is None else bias_prior
    value += 0.5 * item_prior * float(s @ s)
    value += 0.5 * bias_prior * float(q @ q) + 0.5 * rater_prior * float(g @ g)
    d_p = weight * (y / p - (1.0 - y) / (1.0 - p))
    d_s = d_p * trust * quality * (1.0 - quality)
    grad = np.zeros_like(x)
    grad[:n_items] -= np.bincount(left, d_s, n_items) - np.bincount(right, d_s, n_items)
    d_q = d_p * (1.0 - trust) * np.where(known, bias * (1.0 - bias), 0.0)
    grad[n_items : n_items + n_raters] -= np.bincount(rater, d_q, n_raters)
    d_g = d_p * trust * (1.0 - trust) * (quality - bias)
    grad[n_items + n_raters :] -= np.bincount(rater, d_g, n_raters)
    grad[:n_items] += item_prior * s
    grad[n_items : n_items + n_raters] += bias_prior * q
    grad[n_items + n_raters :] += rater_prior * g
    return value, grad


def fit_rater_model(
    verdicts: pd.DataFrame,
    *,
    item_prior: float = ITEM_PRIOR,
    rater_prior: float = RATER_PRIOR,
    bias_prior: float = BIAS_PRIOR,
    max_iter: int = 500,
) -> RaterModel:
    """Fit the model to ``verdicts``: columns ``rater``, ``left``, ``right`` (item names),
    ``y`` (1 left chosen, 0 right chosen), optional ``known`` (side shown known, default True)
    and ``weight`` (default 1)."""
    left_codes, right_codes, items = _codes(verdicts["left"], verdicts["right"])
    rater_codes, raters = pd.factorize(verdicts["rater"], sort=True)
    n_items, n_raters = len(items), len(raters)
    known = _column(verdicts, "known", True).astype(bool)
    weight = _column(verdicts, "weight", 1.0).astype(float)
    y = verdicts["y"].to_numpy(dtype=float)
    start = np.concatenate(
        [np.zeros(n_items + n_raters), np.full(n_raters, np.log(START_RELIABILITY / 0.1))]
    )
    args = (left_codes, right_codes, rater_codes, y, known, weight, n_items, n_raters)
    result = optimize.minimize(
        negative_log_likelihood,
        start,
        args=(*args, item_prior, rater_prior, bias_prior),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "ftol": 1e-10, "gtol": 1e-6},
    )
    x = result.x
    choices = np.bincount(rater_codes, weights=weight, minlength=n_raters)
    rater_index = pd.Index(raters, name="rater")
    return RaterModel(
        scores=pd.Series(x[:n_items], index=pd.Index(items, name="item"), name="score"),
        reliability=pd.Series(expit(x[n_items + n_raters :]), index=rater_index),
        position_bias=pd.Series(expit(x[n_items : n_items + n_raters]), index=rater_index),
        choices=pd.Series(choices, index=rater_index),
        log_likelihood=-float(result.fun),
        converged=bool(result.success),
    )


def _codes(left: pd.Series, right: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    codes, items = pd.factorize(pd.concat([left, right], ignore_index=True), sort=True)
    n = len(left)
    return codes[:n], codes[n:], np.asarray(items)


def _column(frame: pd.DataFrame, name: str, default: object) -> np.ndarray:
    if name in frame.columns:
        return frame[name].to_numpy()
    return np.full(len(frame), default)


# --------------------------------------------------------------------------- study verdicts


def verdict_scores(judgments: pd.DataFrame) -> np.ndarray:
    """Each verdict on the 5-point scale, canonical orientation: +2 reply a much better, +1
    slightly, 0 about the same, −1/−2 for reply b (a winner of unknown strength reads ±1)."""
    winner = judgments["winner"].astype(object).to_numpy()
    strength = pd.to_numeric(judgments["strength"], errors="coerce").to_numpy(dtype=float)
    top = pd.to_numeric(judgments["strength_max"], errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        size = np.where(top > 1, 1.0 + (strength - 1.0) / (top - 1.0), _UNKNOWN_STRENGTH)
    size = np.where(np.isnan(size), _UNKNOWN_STRENGTH, size)
    sign = np.where(winner == "a", 1.0, np.where(winner == "b", -1.0, 0.0))
    result: np.ndarray = sign * size
    return result


def model_verdicts(judgments: pd.DataFrame) -> pd.DataFrame:
    """The rater model's input from human judgments (``judge``, ``context``, ``system_a``,
    ``system_b``, ``winner``, ``shown_left``): the choices (ties left out), each reply named by
    its context and system, left and right as shown (a and b when the side is unknown)."""
    choices = judgments[judgments["winner"].isin(["a", "b"])]
    context = choices["context"].astype(str).to_numpy()
    reply_a = np.char.add(np.char.add(context, "|"), choices["system_a"].astype(str).to_numpy())
    reply_b = np.char.add(np.char.add(context, "|"), choices["system_b"].astype(str).to_numpy())
    shown = choices["shown_left"].astype(object).to_numpy()
    b_left = shown == "b"
    winner = choices["winner"].astype(object).to_numpy()
    return pd.DataFrame(
        {
            "rater": choices["judge"].astype(str).to_numpy(),
            "left": np.where(b_left, reply_b, reply_a),
            "right": np.where(b_left, reply_a, reply_b),
            "y": np.where(b_left, winner == "b", winner == "a").astype(float),
            "known": np.isin(shown, ["a", "b"]),
        }
    )


def verdict_p_values(judgments: pd.DataFrame, *, seed: int = 0) -> pd.Series:
    """Per verdict (index kept), its randomised conformal p-value against the verdicts on the
    same pair (``item``): with ``d`` the distance of each verdict from the pair's mean verdict
    and ``n`` the pair's verdicts (its own included), ``p = (#{d_k > d} + U #{d_k = d}) / n``
    with ``U`` uniform on (0, 1]. A rater who judges like the others gets uniform p-values
    whatever the pair's spread (the draw breaks the many ties of a 5-point scale exactly; without
    it the test would be too conservative to ever reject). NaN for a pair with one verdict."""
    score = pd.Series(verdict_scores(judgments), index=judgments.index)
    item = judgments["item"].to_numpy()
    distance = (score - score.groupby(item).transform("mean")).abs().round(9)
    grouped = distance.groupby(item)
    size = grouped.transform("size")
    at_or_below = grouped.rank(method="max")
    below = grouped.rank(method="min") - 1
    equal = at_or_below - below
    above = size - at_or_below
    draw = 1.0 - np.random.default_rng(seed).random(len(score))  # uniform on (0, 1]
    p = (above + draw * equal) / size
    return p.where(size > 1)


def outlier_tests(
    judgments: pd.DataFrame,
    *,
    alpha: float = OUTLIER_ALPHA,
    checkpoints: tuple[int, ...] = CHECKPOINTS,
) -> pd.DataFrame:
    """Per rater (``judge``): ``n_tested`` verdicts with a p-value, ``p_value`` of the sequential
    test (the smallest Bonferroni-adjusted Fisher p-value over the looks reached; NaN before the
    first look) and ``outlier`` (``p_value`` below ``alpha``). Verdicts are taken in ``id``
    order (the order given)."""
    p = verdict_p_values(judgments)
    frame = pd.DataFrame({"judge": judgments["judge"].astype(str), "id": judgments["id"], "p": p})
    frame = frame.dropna(subset=["p"]).sort_values(["judge", "id"], kind="stable")
    frame["m"] = (-2.0 * np.log(frame["p"].clip(lower=1e-300))).groupby(frame["judge"]).cumsum()
    frame["j"] = frame.groupby("judge").cumcount() + 1
    looks = frame[frame["j"].isin(checkpoints)]
    adjusted = np.minimum(1.0, len(checkpoints) * stats.chi2.sf(looks["m"], 2 * looks["j"]))
    best = pd.Series(adjusted, index=looks.index).groupby(looks["judge"]).min()
    result = pd.DataFrame({"n_tested": frame.groupby("judge").size()})
    result["p_value"] = best.reindex(result.index)
    result["outlier"] = result["p_value"] < alpha
    return result


def rater_quality(judgments: pd.DataFrame, cohorts: dict[str, str] | None = None) -> pd.DataFrame:
    """Per rater of the human ``judgments``: ``cohort``, ``n`` (verdicts), ``reliability``,
    ``position_bias``, ``left_rate`` (observed share of choices for the left reply),
    ``p_value`` and ``outlier`` (:func:`outlier_tests`), sorted by rater."""
    human = (
        judgments[judgments["judge_kind"] == "human"] if "judge_kind" in judgments else judgments
    )
    columns = ["cohort", "n", "reliability", "position_bias", "left_rate", "p_value", "outlier"]
    if human.empty:
        return pd.DataFrame(columns=columns)
    judges = human["judge"].astype(str)
    result = pd.DataFrame({"n": judges.value_counts()}).sort_index()
    verdicts = model_verdicts(human)
    if len(verdicts):
        model = fit_rater_model(verdicts)
        result["reliability"] = model.reliability
        result["position_bias"] = model.position_bias
        known = verdicts[verdicts["known"]]
        left = np.where(known["y"] > 0.5, 1.0, 0.0)
        result["left_rate"] = pd.Series(left, index=known.index).groupby(known["rater"]).mean()
    tests = outlier_tests(human)
    result["p_value"] = tests["p_value"]
    result["outlier"] = tests["outlier"].reindex(result.index).fillna(False).astype(bool)
    result["cohort"] = [None if cohorts is None else cohorts.get(str(r)) for r in result.index]
    return result.reindex(columns=columns)


def cohort_summary(quality: pd.DataFrame) -> pd.DataFrame:
    """Per cohort: raters, verdicts, the verdict-weighted mean reliability and position bias,
    and the outliers."""
    if quality.empty:
        return pd.DataFrame(columns=["raters", "n", "reliability", "position_bias", "outliers"])
    frame = quality.assign(cohort=quality["cohort"].fillna("(none)"))
    weights = frame["n"].astype(float)

    def weighted(column: str) -> pd.Series:
        values = frame[column].astype(float)
        mask = values.notna()
        total = (values.where(mask, 0.0) * weights).groupby(frame["cohort"]).sum()
        return total / weights.where(mask, 0.0).groupby(frame["cohort"]).sum()

    grouped = frame.groupby("cohort")
    return pd.DataFrame(
        {
            "raters": grouped.size(),
            "n": grouped["n"].sum(),
            "reliability": weighted("reliability"),
            "position_bias": weighted("position_bias"),
            "outliers": grouped["outlier"].sum().astype(int),
        }
    )


def judgment_weights(judgments: pd.DataFrame, quality: pd.DataFrame, mode: str) -> pd.Series | None:
    """The factor each judgment's weight is multiplied by under ``mode`` ("none": None;
    "reliability": its rater's reliability; "no-outliers": 0 for a rater the outlier test
    flags, else 1). Judgments of no measured rater (LLM judges, imports) keep 1."""
    if mode not in RATER_WEIGHTS:
        raise ValueError(f"unknown rater weights {mode!r}; choose from {', '.join(RATER_WEIGHTS)}")
    if mode == "none" or quality.empty:
        return None
    if mode == "reliability":
        per_rater = quality["reliability"].astype(float)
    else:
        per_rater = (~quality["outlier"].astype(bool)).astype(float)
    human = judgments["judge_kind"].astype(object).to_numpy() == "human"
    factor = judgments["judge"].astype(str).map(per_rater).to_numpy(dtype=float)
    factor = np.where(human & ~np.isnan(factor), factor, 1.0)
    return pd.Series(factor, index=judgments.index)
