"""Adaptive design maths: which system pair's next judgment helps the leaderboard most, which
pairs are already separated, and how many judgments a design needs. Pure numpy, no Django.

The leaderboard's uncertainty that adaptive assignment shrinks is the uncertainty of the order:
the variance of the Elo difference between each system and its neighbour on the latest board.
Under Bradley–Terry, a comparison of systems i and j adds ``w_ij d d'`` to the information
matrix (``d = e_i - e_j``, ``w_ij = v p_ij (1 - p_ij)``, ``v`` the mean verdict weight). With
``S`` the covariance of the centred log-strengths and ``C`` the neighbour contrasts, one more
judgment of (i, j) lowers ``sum_r Var(c_r' theta)`` by (Sherman–Morrison)

    gain_ij = w_ij |C' S d|^2 / (1 + w_ij d' S d).

This is the "expected reduction of the interval" rule of Chatbot Arena's active sampling
(Chiang et al. 2024, section 5), computed for the whole board instead of one pair at a time:
a comparison between two systems that are far apart tells little (p near 0 or 1), and one
between two systems already pinned down by many other comparisons tells little as well.

`pair_weights` plans the next ``batch`` judgments greedily (each pick updates ``S`` by a rank-one
step) and returns how many each pair got: the assignment engine then draws pairs with these
weights, so the judgments that arrive before the next refit follow the plan instead of all
going to the single best pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

ELO_SCALE = 400.0 / math.log(10.0)
#: Information (in comparisons) that keeps the covariance finite before any judgment.
PRIOR_PRECISION = 1e-2
#: Every open pair keeps this share of the plan's weight, so none is starved between refits.
WEIGHT_FLOOR = 0.02


def win_probability(theta: np.ndarray) -> np.ndarray:
    """Pr(i beats j) under Bradley–Terry, a K x K matrix."""
    result: np.ndarray = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    return result


def comparison_information(theta: np.ndarray, verdict_weight: float = 1.0) -> np.ndarray:
    """Fisher information of one verdict on each pair: v p (1 - p) (zero on the diagonal)."""
    p = win_probability(np.asarray(theta, dtype=float))
    info = verdict_weight * p * (1.0 - p)
    np.fill_diagonal(info, 0.0)
    return info


def covariance(counts: np.ndarray, info: np.ndarray, prior: float = PRIOR_PRECISION) -> np.ndarray:
    """Covariance of the centred log-strengths given ``counts[i, j]`` verdicts per pair.

    Returns ``inv(L + prior I + J/K)`` (``J`` all ones): for a contrast ``d`` (``d'1 = 0``)
    ``d' S d`` is the variance of ``d' theta``, and rank-one updates keep that property.
    """
    k = len(counts)
    weights = np.asarray(counts, dtype=float) * info
    laplacian = np.diag(weights.sum(axis=1)) - weights
    return np.linalg.inv(laplacian + prior * np.eye(k) + np.ones((k, k)) / k)


def neighbour_contrasts(theta: np.ndarray) -> np.ndarray:
    """K x (K-1): column r is e_(r) - e_(r+1) for the systems in board order (best first)."""
    order = np.argsort(-np.asarray(theta, dtype=float), kind="stable")
    k = len(order)
    contrasts = np.zeros((k, max(k - 1, 0)))
    for r in range(k - 1):
        contrasts[order[r], r] = 1.0
        contrasts[order[r + 1], r] = -1.0
    return contrasts


def _pair_quadratic(matrix: np.ndarray) -> np.ndarray:
    """(e_i - e_j)' M (e_i - e_j) for every pair."""
    diag = np.diag(matrix)
    result: np.ndarray = diag[:, None] + diag[None, :] - matrix - matrix.T
    return result


def pair_gains(cov: np.ndarray, info: np.ndarray, contrasts: np.ndarray) -> np.ndarray:
    """Reduction of the summed neighbour-difference variance from one more verdict per pair."""
    projected = cov @ contrasts
    gain = info * _pair_quadratic(projected @ projected.T) / (1.0 + info * _pair_quadratic(cov))
    np.fill_diagonal(gain, 0.0)
    return np.asarray(gain)


def pair_weights(
    theta: np.ndarray,
    counts: np.ndarray,
    *,
    batch: int,
    open_pairs: np.ndarray | None = None,
    verdict_weight: float = 1.0,
    floor: float = WEIGHT_FLOOR,
) -> np.ndarray:
    """Sampling weight of each system pair for the next ``batch`` judgments (sums to 1).

    ``theta``: log-strengths of the latest fit; ``counts[i, j]``: verdicts so far (symmetric);
    ``open_pairs``: pairs that can still be served (default: all). The plan is greedy: each of
    the ``batch`` picks takes the open pair of largest `pair_gains` and updates the covariance.
    A floor share of the weight is spread over every open pair.
    """
    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    allowed = np.ones((k, k), bool) if open_pairs is None else np.asarray(open_pairs, bool)
    allowed = np.triu(allowed & ~np.eye(k, dtype=bool))
    if k < 2 or not allowed.any():
        return np.zeros((k, k))
    info = comparison_information(theta, verdict_weight)
    cov = covariance(counts, info)
    contrasts = neighbour_contrasts(theta)
    planned = np.zeros((k, k))
    for _ in range(max(batch, 1)):
        gain = np.where(allowed, pair_gains(cov, info, contrasts), -np.inf)
        i, j = np.unravel_index(int(np.argmax(gain)), gain.shape)
        d = np.zeros(k)
        d[i], d[j] = 1.0, -1.0
        sd = cov @ d
        cov -= info[i, j] * np.outer(sd, sd) / (1.0 + info[i, j] * (d @ sd))
        planned[i, j] += 1.0
    weights = (1.0 - floor) * planned / planned.sum() + floor * allowed / allowed.sum()
    result: np.ndarray = weights + weights.T
    return result


# --------------------------------------------------------------------------- stopping rule


@dataclass(frozen=True)
class PairStatus:
    """One system pair on the latest board: its Elo difference, the half-width of that
    difference's interval, whether it is separated, and (if not) the judgments of this pair
    it would still need to be, at the current difference (None: a tie cannot be separated)."""

    a: int
    b: int
    difference: float
    half_width: float
    separated: bool
    judgments_needed: int | None


def pair_statuses(
    theta: np.ndarray,
    counts: np.ndarray,
    *,
    alpha: float = 0.05,
    verdict_weight: float = 1.0,
    cov: np.ndarray | None = None,
    min_difference_elo: float = 1.0,
) -> list[PairStatus]:
    """Every system pair (a better than or level with b): separated at level 1 - alpha when
    ``|difference| > z * sd``; an unseparated pair needs ``m`` more direct verdicts with
    ``1 / (1 / sd^2 + m w) = (difference / z)^2`` (its other evidence kept as it is). ``cov``
    (Elo^2) defaults to the analytic covariance of ``counts`` at ``theta``."""
    theta = np.asarray(theta, dtype=float)
    z = float(stats.norm.ppf(1.0 - alpha / 2.0))
    info = comparison_information(theta, verdict_weight)
    if cov is None:
        cov = ELO_SCALE**2 * covariance(counts, info, prior=1e-6)
    variance = np.maximum(_pair_quadratic(cov), 1e-12)
    elo = ELO_SCALE * theta
    statuses = []
    for a, b in zip(*np.triu_indices(len(theta), 1), strict=True):
        if elo[b] > elo[a]:
            a, b = b, a
        diff, sd = float(elo[a] - elo[b]), float(math.sqrt(variance[a, b]))
        separated = diff > z * sd
        needed = None
        if separated:
            needed = 0
        elif diff >= min_difference_elo:
            wanted_precision = (z / diff) ** 2 - 1.0 / sd**2
            needed = math.ceil(wanted_precision * ELO_SCALE**2 / info[a, b])
        statuses.append(PairStatus(int(a), int(b), diff, z * sd, separated, needed))
    return statuses


# --------------------------------------------------------------------------- planner


def mean_half_width(
    theta: np.ndarray, counts: np.ndarray, *, alpha: float = 0.05, verdict_weight: float = 1.0
) -> float:
    """Expected mean half-width (Elo) of the systems' intervals for ``counts`` verdicts per pair
    (the Fisher interval of the centred Elo, as the fit computes it)."""
    k = len(theta)
    cov = covariance(counts, comparison_information(theta, verdict_weight), prior=1e-6)
    variance = np.clip(np.diag(cov) - 1.0 / k, 0.0, None)
    z = float(stats.norm.ppf(1.0 - alpha / 2.0))
    return float(z * ELO_SCALE * np.sqrt(variance).mean())


def judgments_for_half_width(
    theta: np.ndarray,
    design: np.ndarray,
    target: float,
    *,
    alpha: float = 0.05,
    verdict_weight: float = 1.0,
) -> int:
    """Judgments a design needs for a mean half-width of ``target`` Elo.

    ``design[i, j]``: the design's share of judgments on each pair (any scale). The variance of
    a fixed design falls as 1 / N, so N = N1 (h1 / target)^2 with h1 the half-width at N1.
    """
    design = np.asarray(design, dtype=float)
    total = design[np.triu_indices(len(design), 1)].sum()
    if total <= 0 or target <= 0:
        raise ValueError("a design with pairs and a positive half-width are needed")
    unit = design / total * 1000.0
    width = mean_half_width(theta, unit, alpha=alpha, verdict_weight=verdict_weight)
    return math.ceil(1000.0 * (width / target) ** 2)


def optimal_design(
    theta: np.ndarray,
    *,
    criterion: str = "neighbours",
    verdict_weight: float = 1.0,
    iterations: int = 500,
    contrasts: np.ndarray | None = None,
) -> np.ndarray:
    """The best fixed design if ``theta`` were the true strengths: the share of judgments on each
    system pair (symmetric, the upper triangle sums to 1) that minimises the summed variance of
    the neighbouring differences (``criterion="neighbours"``) or of the centred strengths
    (``"systems"``): an A-optimal design, found by the multiplicative algorithm of Silvey,
    Titterington and Torsney (1978), which converges for this convex criterion.

    A benchmark reads it as the bound no assignment rule can beat: a rule that must estimate
    the strengths as it goes does worse. ``contrasts`` (K x P) replaces the criterion's own
    (`ranking.goals` passes a goal's pairs scaled by their gaps).
    """
    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    upper = np.triu_indices(k, 1)
    d = np.zeros((len(upper[0]), k))
    d[np.arange(len(upper[0])), upper[0]] = 1.0
    d[np.arange(len(upper[0])), upper[1]] = -1.0
    w = comparison_information(theta, verdict_weight)[upper]
    m = _contrasts(theta, criterion) if contrasts is None else np.asarray(contrasts, float)
    share = np.full(len(w), 1.0 / len(w))
    centre = np.ones((k, k)) / k
    for _ in range(iterations):
        cov = np.linalg.inv((d.T * (share * w)) @ d + centre)
        spread = cov @ m @ m.T @ cov
        gradient = w * np.einsum("ti,ij,tj->t", d, spread, d)
        share = share * gradient / float(share @ gradient)
    design = np.zeros((k, k))
    design[upper] = share
    result: np.ndarray = design + design.T
    return result


def design_criterion(
    theta: np.ndarray,
    design: np.ndarray,
    *,
    criterion: str = "neighbours",
    verdict_weight: float = 1.0,
) -> float:
    """Summed variance (log-strength units) per judgment of ``design`` (shares as in
    `optimal_design`): the variance with N judgments is this over N, so two designs' judgments
    for the same precision are in the ratio of their criteria."""
    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    design = np.asarray(design, dtype=float)
    shares = design / design[np.triu_indices(k, 1)].sum()
    cov = covariance(shares, comparison_information(theta, verdict_weight), prior=1e-9)
    m = _contrasts(theta, criterion)
    return float(np.trace(m.T @ cov @ m))


def _contrasts(theta: np.ndarray, criterion: str) -> np.ndarray:
    """The contrasts whose summed variance a criterion counts: the neighbouring differences on
    the board, or each system's centred strength."""
    if criterion == "neighbours":
        return neighbour_contrasts(theta)
    if criterion == "systems":
        k = len(theta)
        return np.eye(k) - 1.0 / k
    raise ValueError(f"unknown criterion {criterion!r}")


# --------------------------------------------------------------------------- from a fit


def fit_inputs(
    comparisons: pd.DataFrame, table: pd.DataFrame, systems: list[str]
) -> tuple[np.ndarray, np.ndarray, float]:
    """(theta, counts, mean verdict weight) over ``systems`` from a fit's comparisons and its
    result table (`ranking.bradley_terry.fit`); a system without comparisons gets theta 0."""
    index = {name: i for i, name in enumerate(systems)}
    theta = np.array(
        [float(table["theta"].get(name, 0.0)) if "theta" in table else 0.0 for name in systems]
    )
    counts = np.zeros((len(systems), len(systems)))
    if len(comparisons):
        a = comparisons["system_a"].astype(str).map(index)
        b = comparisons["system_b"].astype(str).map(index)
        known = a.notna() & b.notna()
        np.add.at(counts, (a[known].astype(int), b[known].astype(int)), 1.0)
    counts = counts + counts.T
    weight = comparisons["weight"].mean() if "weight" in comparisons and len(comparisons) else 1.0
    return theta, counts, float(weight)
