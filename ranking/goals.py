"""Adaptive sampling for a stated goal: which system pairs the next judgments should go to when
the study admin wants to learn one thing, and how many judgments each design needs for it.
Pure numpy, no Django.

A goal is a set of system pairs whose order must be known at the study's confidence:

- ``best``: the leader against every other system (the best system identified);
- ``top_k``: each of the ``k`` leaders against each system outside them (the top k as a set);
- ``anchor``: every system against the anchor (better or worse than it);
- ``order``: each system against its neighbour on the board (the whole order).

The rule is LUCB-style successive elimination on the Fisher intervals of the latest fit: a goal
pair whose difference is already outside its interval is settled and drops out (only the
floor share keeps it served); the open ones are the contrasts to sharpen, each weighted by one
over its squared difference (a close race needs more judgments than a clear one). The next
``batch`` judgments are planned greedily, as `ranking.adaptive.pair_weights` does for the whole
board: each pick is the pair whose next judgment lowers ``sum_c Var(c' theta) / gap_c^2`` most
(Sherman–Morrison), so the leaders meet their closest contenders directly and far-away systems
are left alone. When every goal pair is settled the plan keeps confirming the goal's pairs.

The planner (`judgments_needed`) predicts the judgments a fixed design needs for every goal
pair to be separated: ``N = max_c z^2 v_c / gap_c^2`` with ``v_c`` the variance of contrast c
per judgment of the design. For the adaptive design it uses the best fixed design for the goal
if the strengths were those given (`goal_design`): an adaptive rule that learns the strengths as
it goes does somewhat worse (benchmarks/bench_adaptive_goal.py measures both).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .adaptive import (
    ELO_SCALE,
    WEIGHT_FLOOR,
    _pair_quadratic,
    comparison_information,
    covariance,
)

GOALS = ("best", "top_k", "anchor", "order")
#: A goal pair's difference is never taken as smaller than this share of its standard error
#: when weighing it (an estimate of 0 would otherwise take every judgment).
MIN_GAP_SD = 0.5
#: The greedy plan takes at most this many steps; with a larger batch each step stands for
#: several judgments (so a plan of 2,000 costs what one of 200 does).
MAX_PICKS = 200
#: The planner's best design for a goal is searched for up to this many systems (its cost grows
#: as the cube of the systems; a refit of 60 systems spends about a second on it).
MAX_PLAN_SYSTEMS = 60


@dataclass(frozen=True)
class Goal:
    """What the study wants to learn: ``kind`` one of `GOALS`; ``k`` the size of the top for
    ``top_k``; ``anchor`` the anchor system's index for ``anchor``."""

    kind: str = "order"
    k: int = 1
    anchor: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in GOALS:
            raise ValueError(f"unknown goal {self.kind!r}; choose from {', '.join(GOALS)}")
        if self.kind == "top_k" and self.k < 1:
            raise ValueError("top_k needs k >= 1")
        if self.kind == "anchor" and self.anchor is None:
            raise ValueError("the anchor goal needs an anchor system")

    def top(self) -> int:
        return 1 if self.kind == "best" else self.k


def goal_pairs(theta: np.ndarray, goal: Goal) -> list[tuple[int, int]]:
    """The system pairs (i, j) whose order the goal needs, i ahead of j on ``theta``."""
    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    order = [int(i) for i in np.argsort(-theta, kind="stable")]
    if k < 2:
        return []
    if goal.kind in ("best", "top_k"):
        top = min(goal.top(), k - 1)
        return [(i, j) for i in order[:top] for j in order[top:]]
    if goal.kind == "anchor":
        a = int(goal.anchor or 0)
        return [(a, j) if theta[a] >= theta[j] else (j, a) for j in order if j != a]
    return list(zip(order[:-1], order[1:], strict=True))


def critical_value(alpha: float, n_pairs: int) -> float:
    """Two-sided z for a goal of ``n_pairs`` statements made together at level 1 - alpha
    (Bonferroni: each pair at alpha / n_pairs), so "identified at 95 %" holds for the goal as
    a whole, not for each pair alone."""
    return float(stats.norm.ppf(1.0 - alpha / (2.0 * max(n_pairs, 1))))


@dataclass(frozen=True)
class GoalStatus:
    """The goal on one fit: its pairs, which are settled, and whether all are."""

    pairs: list[tuple[int, int]]
    settled: list[bool]
    z: float

    @property
    def reached(self) -> bool:
        return bool(self.pairs) and all(self.settled)


def goal_status(
    theta: np.ndarray, cov: np.ndarray, goal: Goal, *, alpha: float = 0.05
) -> GoalStatus:
    """Which goal pairs are separated at the goal's simultaneous level. ``cov``: covariance of
    the log-strengths (any centring: only differences are read)."""
    theta = np.asarray(theta, dtype=float)
    pairs = goal_pairs(theta, goal)
    z = critical_value(alpha, len(pairs))
    variance = np.maximum(_pair_quadratic(np.asarray(cov, dtype=float)), 0.0)
    settled = [bool(theta[i] - theta[j] > z * math.sqrt(variance[i, j])) for i, j in pairs]
    return GoalStatus(pairs, settled, z)


def _contrast_matrix(k: int, pairs: list[tuple[int, int]], gaps: np.ndarray) -> np.ndarray:
    """K x P: column p is (e_i - e_j) / gap_p for the goal's pair p."""
    m = np.zeros((k, len(pairs)))
    for p, (i, j) in enumerate(pairs):
        m[i, p], m[j, p] = 1.0 / gaps[p], -1.0 / gaps[p]
    return m


def goal_pair_weights(
    theta: np.ndarray,
    counts: np.ndarray,
    goal: Goal,
    *,
    batch: int,
    alpha: float = 0.05,
    open_pairs: np.ndarray | None = None,
    verdict_weight: float = 1.0,
    floor: float = WEIGHT_FLOOR,
) -> np.ndarray:
    """Sampling weight of each system pair for the next ``batch`` judgments under ``goal``
    (symmetric; the upper triangle sums to 1), from the latest fit's ``theta`` and the
    verdicts so far per pair ``counts`` (the same inputs as `ranking.adaptive.pair_weights`)."""
    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    allowed = np.ones((k, k), bool) if open_pairs is None else np.asarray(open_pairs, bool)
    allowed = np.triu(allowed & ~np.eye(k, dtype=bool))
    if k < 2 or not allowed.any():
        return np.zeros((k, k))
    info = comparison_information(theta, verdict_weight)
    cov = covariance(counts, info)
    status = goal_status(theta, cov, goal, alpha=alpha)
    pairs = [p for p, done in zip(status.pairs, status.settled, strict=True) if not done]
    pairs = pairs or status.pairs
    sd = np.sqrt(np.maximum(_pair_quadratic(cov), 1e-12))
    gaps = np.array([max(theta[i] - theta[j], MIN_GAP_SD * sd[i, j]) for i, j in pairs])
    contrasts = _contrast_matrix(k, pairs, gaps)
    picks = max(min(batch, MAX_PICKS), 1)
    unit = info * max(batch, 1) / picks  # one pick stands for batch / picks judgments
    planned = np.zeros((k, k))
    for _ in range(picks):
        projected = cov @ contrasts
        gain = unit * _pair_quadratic(projected @ projected.T) / (1.0 + unit * _pair_quadratic(cov))
        gain = np.where(allowed, gain, -np.inf)
        i, j = np.unravel_index(int(np.argmax(gain)), gain.shape)
        d = np.zeros(k)
        d[i], d[j] = 1.0, -1.0
        step = cov @ d
        cov -= unit[i, j] * np.outer(step, step) / (1.0 + unit[i, j] * (d @ step))
        planned[i, j] += 1.0
    weights = (1.0 - floor) * planned / planned.sum() + floor * allowed / allowed.sum()
    result: np.ndarray = weights + weights.T
    return result


# --------------------------------------------------------------------------- planner


def uniform_design(k: int) -> np.ndarray:
    """Every system pair alike (the engine without adaptive assignment)."""
    design = np.ones((k, k)) - np.eye(k)
    return design / (k * (k - 1) / 2)


def goal_design(
    theta: np.ndarray,
    goal: Goal,
    *,
    verdict_weight: float = 1.0,
    rounds: int = 5,
    iterations: int = 100,
) -> np.ndarray:
    """The best fixed design for ``goal`` if ``theta`` were the true strengths: the share of
    judgments per system pair that makes the goal pair hardest to separate as easy as it can.

    The design judges the goal's own pairs only (a comparison through a third system tells
    less than a direct one, and leaving them out keeps this fast for many systems): an
    A-optimal design for the goal's contrasts scaled by their gaps, found by the multiplicative
    algorithm (Silvey, Titterington and Torsney 1978, with the square-root step that converges
    for A-optimality), and re-weighted a few rounds towards the pairs that still need the most
    (a minimax design approached from the A-optimal one)."""
    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    pairs = goal_pairs(theta, goal)
    first = np.array([i for i, _ in pairs])
    second = np.array([j for _, j in pairs])
    gaps = np.maximum(theta[first] - theta[second], 1e-3)
    w = comparison_information(theta, verdict_weight)[first, second]
    share = np.full(len(pairs), 1.0 / len(pairs))
    emphasis = np.ones(len(pairs))
    centre = np.ones((k, k)) / k + 1e-9 * np.eye(k)  # finite while a share tends to 0
    for _ in range(rounds):
        contrasts = _contrast_matrix(k, pairs, gaps / np.sqrt(emphasis))
        for _ in range(iterations):
            cov = np.linalg.inv(_laplacian(k, first, second, share * w) + centre)
            projected = cov @ contrasts
            spread = projected @ projected.T
            gradient = w * (
                spread[first, first] + spread[second, second] - 2.0 * spread[first, second]
            )
            # The square root (Fellman; Yu 2010) makes the A-optimal iteration converge; with
            # the plain gradient it swings between two designs on a goal whose pairs form a tree.
            step = share * np.sqrt(gradient)
            share = np.maximum(step / step.sum(), 1e-12)
        design = np.zeros((k, k))
        design[first, second] = share
        design = design + design.T
        need = _needs(theta, design, pairs, gaps, verdict_weight)
        emphasis *= need / need.max()
    return design


def _laplacian(k: int, first: np.ndarray, second: np.ndarray, weights: np.ndarray) -> np.ndarray:
    matrix = np.zeros((k, k))
    np.add.at(matrix, (first, second), -weights)
    np.add.at(matrix, (second, first), -weights)
    matrix[np.diag_indices(k)] = -matrix.sum(axis=1)
    return matrix


def _needs(
    theta: np.ndarray,
    design: np.ndarray,
    pairs: list[tuple[int, int]],
    gaps: np.ndarray,
    verdict_weight: float,
) -> np.ndarray:
    """Per goal pair: its variance per judgment of ``design`` over its squared gap."""
    k = len(theta)
    shares = np.asarray(design, dtype=float)
    shares = shares / shares[np.triu_indices(k, 1)].sum()
    cov = covariance(shares, comparison_information(theta, verdict_weight), prior=1e-9)
    variance = _pair_quadratic(cov)
    needs: np.ndarray = np.array([variance[i, j] for i, j in pairs]) / gaps**2
    return needs


def judgments_needed(
    theta: np.ndarray,
    design: np.ndarray,
    goal: Goal,
    *,
    alpha: float = 0.05,
    verdict_weight: float = 1.0,
    tie_rate: float = 0.0,
    min_difference_elo: float = 1.0,
) -> int | None:
    """Judgments ``design`` needs for every goal pair to be separated at the goal's
    simultaneous level, if ``theta`` are the strengths; None when a goal pair is a tie (less
    than ``min_difference_elo`` apart: no number of judgments separates it). ``tie_rate``:
    the share of tied verdicts; counted as half a win each, ties pull the fitted differences
    towards 0 by about that share, so the gaps to separate are read that much smaller."""
    theta = np.asarray(theta, dtype=float)
    pairs = goal_pairs(theta, goal)
    if not pairs:
        return None
    gaps = np.array([theta[i] - theta[j] for i, j in pairs])
    if gaps.min() * ELO_SCALE < min_difference_elo:
        return None
    z = critical_value(alpha, len(pairs))
    needs = _needs(theta, design, pairs, gaps * (1.0 - tie_rate), verdict_weight)
    return math.ceil(z**2 * float(needs.max()))


@dataclass(frozen=True)
class GoalPlan:
    """The planner's reading for a goal: judgments the uniform and the adaptive design need
    (None: a goal pair is a tie) and the saving."""

    goal: Goal
    uniform: int | None
    adaptive: int | None

    @property
    def saving(self) -> float | None:
        if not self.uniform or self.adaptive is None:
            return None
        return 1.0 - self.adaptive / self.uniform


def goal_plan(
    theta: np.ndarray,
    goal: Goal,
    *,
    alpha: float = 0.05,
    verdict_weight: float = 1.0,
    tie_rate: float = 0.0,
) -> GoalPlan:
    """Judgments each design needs for ``goal`` at ``theta`` (the planner's two numbers; the
    adaptive one is None above `MAX_PLAN_SYSTEMS` systems)."""
    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    if k < 2:
        return GoalPlan(goal, None, None)
    options = {"alpha": alpha, "verdict_weight": verdict_weight, "tie_rate": tie_rate}
    uniform = judgments_needed(theta, uniform_design(k), goal, **options)
    if uniform is None or k > MAX_PLAN_SYSTEMS:
        return GoalPlan(goal, uniform, None)
    design = goal_design(theta, goal, verdict_weight=verdict_weight)
    adaptive = judgments_needed(theta, design, goal, **options)
    # Uniform assignment is one of the designs the search could choose: where the search ends
    # a little above it (a few systems, nearly equal strengths), uniform is the best found.
    if adaptive is not None and adaptive > uniform:
        adaptive = uniform
    return GoalPlan(goal, uniform, adaptive)
