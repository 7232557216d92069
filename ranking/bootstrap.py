"""Clustered bootstrap of Bradley–Terry fits, at any study size (paper 9.12). No Django import.

What is resampled: *clusters* when the comparisons carry a ``cluster`` column (the platform
passes the source conversation of each context, so the two contexts cut from one ESConv
dialogue and an adversarial variant travel with their source); else dialogue ``context``;
else single comparisons. Comparisons sharing a (pair, outcome, weight) are interchangeable,
so without clusters they are pooled and drawn with their multiplicity (an exact multinomial
draw); past ``MAX_UNITS`` such pools the comparisons are dealt at random into ``MAX_UNITS``
equal batches and the batches are resampled, which has the same mean and covariance as
resampling single comparisons (the multinomial's) at a fraction of the cost.

How: every unit (cluster, pool or batch) is a sparse row of weights over the columns
(unordered pair, outcome). A block of rounds draws unit counts, and one sparse product gives
each round's column totals; nothing grows with (columns)^2 or with rounds x comparisons. The
half-tie likelihood depends on the data only through the pair totals and each system's score,
so each round is fitted from those by a batched Newton solver warm-started at the full fit.

Centring: every round is read on the scale of the point estimate through a *reference set*:
the named anchor alone (Elo fixed at 1500), else the well-connected systems (those seen in at
least half as many clusters as the median system). A sparsely measured system whose estimate
swings wildly in some rounds then moves only its own interval, never everyone else's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import linalg, sparse

#: Past this many distinct (pair, outcome, weight) pools, unclustered comparisons are resampled
#: in this many random batches of equal size.
MAX_UNITS = 10_000
#: A percentile interval resting on fewer clusters than this is flagged: with so few units the
#: bootstrap distribution is lumpy and too narrow.
MIN_CLUSTERS = 20
#: Floats per working array of the batched solver (rounds x K x K): 8 MB.
BLOCK_FLOATS = 1_000_000
#: Rounds drawn and aggregated at a time (bounds the rounds x columns working set).
DRAW_BLOCK = 32
#: Newton steps up to this size (in theta) are taken without a line search (see newton_half).
SAFE_STEP = 0.1
#: A round has converged when no theta moves by more than this (0.002 Elo).
TOLERANCE = 1e-5
#: Up to this many systems the solver keeps inverse Hessians, beyond it Cholesky factors.
SMALL_K = 64
#: Well-connected systems: seen in at least this share of the median system's clusters.
CONNECTED_SHARE = 0.5

ELO_SCALE = 400.0 / math.log(10.0)
ELO_BASE = 1500.0


@dataclass
class Design:
    """The data of a bootstrap: per resampling unit, sparse rows of summed weights.

    Pair ``p`` is (``lo[p]``, ``hi[p]``) with ``lo < hi``; ``outcomes`` (units x 3P) holds in
    column ``3 p + o`` the weight of the unit's comparisons of pair ``p`` with outcome ``o``:
    0 when the lower-index system won, 1 when the higher one did, 2 for a tie.
    """

    k: int
    lo: np.ndarray
    hi: np.ndarray
    outcomes: sparse.csr_matrix
    sizes: np.ndarray  # draw weight of each unit (its multiplicity; 1 for clusters and batches)
    clusters: np.ndarray  # per system, the number of units it appears in
    unit_kind: str  # "clusters", "comparisons" or "batches"

    @property
    def n_units(self) -> int:
        return len(self.sizes)

    @cached_property
    def by_column(self) -> sparse.csr_matrix:
        """``outcomes`` transposed, as rows (3P x units)."""
        return self.outcomes.T.tocsr()


def design(
    a: np.ndarray,
    b: np.ndarray,
    outcome: np.ndarray,
    weight: np.ndarray,
    k: int,
    *,
    clusters: np.ndarray | None = None,
    seed: int = 0,
) -> Design:
    """The bootstrap design of encoded comparisons (system codes 0..k-1; outcome 0 when a won,
    1 when b won, 2 for a tie; weights). ``clusters``: a cluster label per comparison, or None
    to resample comparisons (see the module doc).
    """
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    # Outcome seen from the lower-index system: a win by `a` is a win by `lo` when a < b.
    rel = np.where(outcome == 2, 2, np.where((outcome == 0) == (a < b), 0, 1))
    pair, pairs = pd.factorize(lo.astype(np.int64) * k + hi)
    pairs = np.asarray(pairs, dtype=np.int64)
    unit, sizes, kind = resampling_units(pair * 3 + rel, weight, clusters, seed)
    n_units = len(sizes)
    # A pool of interchangeable comparisons is drawn with its multiplicity: its row is one of them.
    w = weight / sizes[unit] if kind == "comparisons" else weight
    return Design(
        k=k,
        lo=(pairs // k).astype(np.intp),
        hi=(pairs % k).astype(np.intp),
        outcomes=sparse.csr_matrix((w, (unit, pair * 3 + rel)), shape=(n_units, 3 * len(pairs))),
        sizes=sizes,
        clusters=_units_per_system(unit, a, b, k, n_units),
        unit_kind=kind,
    )


def resampling_units(
    column: np.ndarray, weight: np.ndarray, clusters: np.ndarray | None, seed: int
) -> tuple[np.ndarray, np.ndarray, str]:
    """Resampling unit of each comparison, each unit's draw weight, and the kind of unit.

    ``column``: what makes comparisons interchangeable besides their weight (a code per
    comparison); ignored when ``clusters`` are given."""
    if clusters is not None:
        unit, n = _codes(clusters)
        return unit, np.ones(n), "clusters"
    pools, uniques = pd.MultiIndex.from_arrays([column, weight]).factorize()
    if len(uniques) <= MAX_UNITS:
        return pools, np.bincount(pools, minlength=len(uniques)).astype(float), "comparisons"
    rng = np.random.default_rng([seed, 7])
    return rng.permutation(len(column)) % MAX_UNITS, np.ones(MAX_UNITS), "batches"


def _codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), len(uniques)


def _units_per_system(
    unit: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, n_units: int
) -> np.ndarray:
    ones = np.ones(2 * len(unit), dtype=np.int8)
    seen = sparse.csc_matrix(
        (ones, (np.concatenate([unit, unit]), np.concatenate([a, b]))), shape=(n_units, k)
    )
    seen.sum_duplicates()  # one entry per (unit, system) seen
    return np.diff(seen.indptr)


# --------------------------------------------------------------------------- resampling


def draw_counts(sizes: np.ndarray, rounds: int, seed: int, block: int) -> Iterator[np.ndarray]:
    """Unit counts of each round, ``block`` rounds at a time (rounds x units), for units of
    draw weights ``sizes``. The same seed and units give the same rounds, whichever model is
    fitted to them."""
    rng = np.random.default_rng(seed)
    n = len(sizes)
    total = int(sizes.sum())
    uniform = bool(np.all(sizes == 1.0))
    for start in range(0, rounds, block):
        size = min(block, rounds - start)
        if uniform:
            picks = rng.integers(0, n, (size, n)) + (np.arange(size) * n)[:, None]
            yield np.bincount(picks.ravel(), minlength=size * n).reshape(size, n)
        else:
            yield rng.multinomial(total, sizes / total, size=size)


def outcome_totals(design: Design, counts: np.ndarray) -> np.ndarray:
    """Each round's (pair, outcome) weights, columns x rounds (3P x rounds), from unit counts."""
    # A sparse-times-dense product, linear in the nonzeros; with the columns as CSR rows each
    # output row is summed in cache.
    return np.asarray(design.by_column @ np.ascontiguousarray(counts.T, dtype=float))


@dataclass(frozen=True)
class Pairs:
    """The compared pairs (``lo[p] < hi[p]``) of K systems, with their incidence matrices
    (K x P, sparse): ``signed`` has +1 at (lo, p) and -1 at (hi, p), ``unsigned`` +1 at both."""

    lo: np.ndarray
    hi: np.ndarray
    k: int
    signed: sparse.csr_matrix
    unsigned: sparse.csr_matrix

    @classmethod
    def of(cls, lo: np.ndarray, hi: np.ndarray, k: int) -> Pairs:
        p = np.arange(len(lo))
        rows, columns = np.concatenate([lo, hi]), np.concatenate([p, p])
        signs = np.concatenate([np.ones(len(lo)), -np.ones(len(lo))])
        shape = (k, len(lo))
        return cls(
            lo=lo,
            hi=hi,
            k=k,
            signed=sparse.csr_matrix((signs, (rows, columns)), shape=shape),
            unsigned=sparse.csr_matrix((np.abs(signs), (rows, columns)), shape=shape),
        )


def half_statistics(pairs: Pairs, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair totals T (P x rounds) and centred scores s_i - t_i / 2 (rounds x K) of each round,
    from its (pair, outcome) weights (3P x rounds).

    The half-tie likelihood depends on the data only through these: T[p] is the weight of
    pair p's comparisons, s_i the weight system i won (ties half) and t_i the weight of all
    its comparisons.
    """
    c = columns.reshape(-1, 3, columns.shape[1])
    total = c.sum(axis=1)
    lead = 0.5 * (c[:, 0] - c[:, 1])  # the lower-index system's score minus half
    return total, np.asarray(pairs.signed @ lead).T


# --------------------------------------------------------------------------- solver


def _half_loss(
    theta: np.ndarray, pairs: Pairs, total: np.ndarray, score: np.ndarray, prior: float
) -> np.ndarray:
    """Penalised negative log-likelihood of each round (theta: rounds x K; total: P x rounds).

    sum over pairs of T log(2 cosh(d / 2)) - sum_i theta_i (s_i - t_i / 2) + prior |theta|^2 / 2,
    with d = theta_lo - theta_hi and t_i the total weight of system i's comparisons: the
    half-tie log-likelihood rewritten with log sigmoid(x) = x / 2 - log(2 cosh(x / 2)).
    """
    t = theta.T
    d = 0.5 * (t[pairs.lo] - t[pairs.hi])
    fit = (total * np.logaddexp(d, -d)).sum(axis=0)
    loss: np.ndarray = fit - (theta * score).sum(axis=1) + 0.5 * prior * (theta**2).sum(axis=1)
    return loss


def newton_half(
    pairs: Pairs,
    total: np.ndarray,
    score: np.ndarray,
    theta0: np.ndarray,
    prior: float,
    *,
    tol: float = TOLERANCE,
    max_iter: int = 60,
) -> np.ndarray:
    """Batched Newton for the half-tie model: theta (rounds x K) from pair totals (P x rounds)
    and centred scores s_i - t_i / 2 (rounds x K), every round started at ``theta0``.

    Each round factors its Hessian once and keeps it while its steps shrink fast (a chord
    step costs one gradient); a round whose step stops shrinking ten-fold refactors. A step
    moving no theta by more than ``SAFE_STEP`` is taken whole: no pairwise difference then
    changes by more than 2 SAFE_STEP, so the logistic curvature changes by less than a factor
    e^(2 SAFE_STEP) and the step cannot overshoot; larger steps are backtracked until the
    penalised likelihood improves. Stops once every round's step is below ``tol``.
    """
    rounds, k = score.shape
    lo, hi = pairs.lo, pairs.hi
    theta = np.array(np.broadcast_to(theta0, (rounds, k)), dtype=float)
    factors = np.empty((rounds, k, k))
    last = np.full(rounds, np.inf)  # each round's previous step size
    stale = np.ones(rounds, dtype=bool)  # rounds whose factor must be (re)computed
    active = np.arange(rounds)
    for _ in range(max_iter):
        th = theta[active]
        tot = total if len(active) == rounds else total[:, active]
        t = th.T
        half_tanh = 0.5 * np.tanh(0.5 * (t[lo] - t[hi]))  # p_lo - 1/2, P x active
        grad = np.asarray(pairs.signed @ (tot * half_tanh)).T - score[active] + prior * th
        grad += th.sum(axis=1, keepdims=True) / k
        renew = stale[active]
        if renew.any():
            curvature = tot[:, renew] * (0.25 - half_tanh[:, renew] ** 2)  # T p (1 - p)
            factors[active[renew]] = _factor(_hessian(curvature, pairs, prior))
        step = -_solve(factors[active], grad)
        size = np.max(np.abs(step), axis=1)
        big = size > SAFE_STEP
        if big.any():
            scale = _backtrack(th[big], step[big], pairs, tot[:, big], score[active[big]], prior)
            step[big] *= scale[:, None]
            size = np.max(np.abs(step), axis=1)
        theta[active] = th + step
        # A chord step that did not shrink the step ten-fold: refactor next time.
        stale[active] = big | (size > 0.1 * last[active])
        last[active] = size
        active = active[size >= tol]
        if not len(active):
            break
    return theta


def _factor(hess: np.ndarray) -> np.ndarray:
    """What a chord step reuses: the inverse for small K (one batched call, no Python loop
    per round), the Cholesky factor for large K (a third of the cost of an inverse)."""
    if hess.shape[-1] <= SMALL_K:
        return np.linalg.inv(hess)
    return np.linalg.cholesky(hess)


def _solve(factors: np.ndarray, grad: np.ndarray) -> np.ndarray:
    if factors.shape[-1] <= SMALL_K:
        step: np.ndarray = np.einsum("rij,rj->ri", factors, grad)
        return step
    step = linalg.cho_solve((factors, True), grad[..., None])[..., 0]
    return step


def _hessian(curvature: np.ndarray, pairs: Pairs, prior: float) -> np.ndarray:
    """Penalised Hessians (rounds x K x K) from each pair's T p (1 - p) (P x rounds), plus 1/K
    everywhere: that fixes the free common shift of theta without biasing any difference."""
    k = pairs.k
    hess = np.full((curvature.shape[1], k, k), 1.0 / k)
    hess[:, pairs.lo, pairs.hi] -= curvature.T
    hess[:, pairs.hi, pairs.lo] -= curvature.T
    diagonal = np.arange(k)
    hess[:, diagonal, diagonal] += np.asarray(pairs.unsigned @ curvature).T + prior
    return hess


def _backtrack(
    theta: np.ndarray,
    step: np.ndarray,
    pairs: Pairs,
    total: np.ndarray,
    score: np.ndarray,
    prior: float,
) -> np.ndarray:
    """Per round, the step scale (1, 1/2, 1/4 ...) whose penalised loss is no worse."""
    loss = _half_loss(theta, pairs, total, score, prior)
    scale = np.ones(len(theta))
    for _ in range(40):
        trial = _half_loss(theta + scale[:, None] * step, pairs, total, score, prior)
        worse = trial > loss + 1e-12 * np.abs(loss)
        if not worse.any():
            break
        scale = np.where(worse, scale / 2.0, scale)
    return scale


def bootstrap_thetas(
    design: Design,
    theta_hat: np.ndarray,
    *,
    rounds: int,
    seed: int,
    prior: float,
    davidson_fit: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """Theta of each round (rounds x K). ``davidson_fit(wins, ties, theta0) -> theta`` fits a
    round under Davidson's tie model; None fits the half-tie model (batched)."""
    k = design.k
    pairs = Pairs.of(design.lo, design.hi, k)
    solver_block = max(1, BLOCK_FLOATS // (k * k))
    out = np.empty((rounds, k))
    start = 0
    for counts in draw_counts(design.sizes, rounds, seed, DRAW_BLOCK):
        columns = outcome_totals(design, counts)
        if davidson_fit is None:
            total, score = half_statistics(pairs, columns)
            for s in range(0, len(counts), solver_block):
                part = slice(s, min(s + solver_block, len(counts)))
                out[start + part.start : start + part.stop] = newton_half(
                    pairs, total[:, part], score[part], theta_hat, prior
                )
        else:
            for r in range(len(counts)):
                wins, ties = win_tie_matrices(design, columns[:, r])
                out[start + r] = davidson_fit(wins, ties, theta_hat)
        start += len(counts)
    return out


def win_tie_matrices(design: Design, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Strict wins (i beat j) and symmetric ties, K x K, from one round's columns."""
    c = columns.reshape(-1, 3)
    wins = np.zeros((design.k, design.k))
    ties = np.zeros((design.k, design.k))
    wins[design.lo, design.hi] = c[:, 0]
    wins[design.hi, design.lo] = c[:, 1]
    ties[design.lo, design.hi] = c[:, 2]
    ties[design.hi, design.lo] = c[:, 2]
    return wins, ties


# --------------------------------------------------------------------------- reading rounds


def reference_systems(clusters: np.ndarray) -> np.ndarray:
    """Boolean mask of the well-connected systems (see the module doc); all if too few."""
    if len(clusters) == 0:
        return np.zeros(0, dtype=bool)
    mask = clusters >= CONNECTED_SHARE * np.median(clusters)
    return mask if mask.sum() >= 2 else np.ones(len(clusters), dtype=bool)


def point_elo(theta: np.ndarray, anchor: int | None = None) -> np.ndarray:
    """Elo of the point estimate: 400 (theta - mean theta) / ln 10 + 1500 (paper 9.8), or with
    an anchor, 400 (theta - theta_anchor) / ln 10 + 1500 (the anchor sits at 1500)."""
    theta = np.asarray(theta, dtype=float)
    ref = theta[..., anchor, None] if anchor is not None else theta.mean(axis=-1, keepdims=True)
    elo: np.ndarray = ELO_SCALE * (theta - ref) + ELO_BASE
    return elo


def round_elos(
    thetas: np.ndarray,
    theta_hat: np.ndarray,
    *,
    reference: np.ndarray,
    anchor: int | None = None,
) -> np.ndarray:
    """Each round's Elo on the point estimate's scale, centred on the reference set.

    Round r: Elo_i = 400 / ln 10 (theta_i - mean_ref theta) + the point estimate's mean Elo of
    the reference set; with an anchor, 400 / ln 10 (theta_i - theta_anchor) + 1500.
    """
    if anchor is not None:
        return point_elo(thetas, anchor)
    offset = point_elo(theta_hat)[reference].mean()
    elos: np.ndarray = ELO_SCALE * (thetas - thetas[:, reference].mean(axis=1, keepdims=True))
    elos += offset
    return elos


def percentile_interval(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    low, high = np.percentile(draws, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    return low, high


def monte_carlo_error(draws: np.ndarray, alpha: float) -> np.ndarray:
    """Monte Carlo standard error of the interval's bounds (the larger of the two), per column.

    A sample quantile q_p of B draws has standard error about sqrt(p (1 - p) / B) / f(q_p);
    the density is read off the draws themselves: (q_{p+d} - q_{p-d}) / (2 d) with
    d = sqrt(p (1 - p) / B), so the error is (q_{p+d} - q_{p-d}) / 2.
    """
    b = len(draws)
    errors = []
    for p in (alpha / 2, 1 - alpha / 2):
        d = math.sqrt(p * (1 - p) / b)
        lo, hi = np.percentile(draws, [100 * max(p - d, 0.0), 100 * min(p + d, 1.0)], axis=0)
        errors.append((hi - lo) / 2.0)
    error: np.ndarray = np.maximum(*errors)
    return error


def rank_intervals(ci_low: np.ndarray, ci_high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank interval of each system from the intervals (Chatbot Arena's "rank (UB)").

    ``rank_low`` (the best place it can claim) = 1 + the number of systems whose lower bound
    is above its upper bound; ``rank_high`` (the worst) = the number of systems whose upper
    bound is not below its lower bound (itself included). Rank 1 is the best.
    """
    low = np.asarray(ci_low, dtype=float)
    high = np.asarray(ci_high, dtype=float)
    above = (low[None, :] > high[:, None]).sum(axis=1)
    not_below = (high[None, :] >= low[:, None]).sum(axis=1)
    return 1 + above, not_below
