"""Bradley–Terry fits of pairwise comparisons, with Elo-style ratings (paper 9.8).

Pure numpy/pandas/scipy: no Django import. The likelihood only depends on the
aggregated weight of each (system_a, system_b, outcome) cell, so the comparisons
are aggregated once into K x K matrices and the small problem is solved by Newton's
method with the exact Hessian. The bootstrap (`ranking.bootstrap`) resamples source
conversations (paper 9.12) and fits every round from its aggregates with a batched solver.

Model ("half" ties, the paper's): Pr(i beats j) = exp(theta_i) / (exp(theta_i) + exp(theta_j));
a tie counts as half a win for each side. Model ("davidson", Davidson 1970):
Pr(i beats j) = pi_i / (pi_i + pi_j + nu sqrt(pi_i pi_j)), Pr(tie) = nu sqrt(pi_i pi_j) / (...),
with pi = exp(theta) and the tie parameter nu estimated with theta.

Elo = 400 (theta - mean theta) / ln 10 + 1500, exactly as in the paper; with an anchor,
Elo = 400 (theta - theta_anchor) / ln 10 + 1500, so adding a system never moves the others.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from . import bootstrap

ELO_SCALE = 400.0 / math.log(10.0)
ELO_BASE = 1500.0

#: Precision of the Gaussian prior N(0, 1/prior) on each theta (a ridge penalty
#: prior/2 * sum theta^2 on the log-likelihood). 1e-4 is worth a ten-thousandth of a
#: comparison: it moves well-connected estimates by far less than 0.01 Elo, yet keeps
#: theta finite when a system always wins or the comparison graph is disconnected.
DEFAULT_PRIOR = 1e-4

WINNER_CODES = {"a": 0, "b": 1, "tie": 2}
OUTPUT_COLUMNS = [
    "theta",
    "elo",
    "se",
    "ci_low",
    "ci_high",
    "n",
    "wins",
    "win_rate",
    "clusters",
    "ci_mc_error",
    "rank_low",
    "rank_high",
]

TieModel = Literal["half", "davidson"]
CiMethod = Literal["fisher", "paper", "bootstrap", "sandwich"]
CI_METHODS = ("fisher", "paper", "bootstrap", "sandwich")
StrengthWeights = Literal["none", "raw", "normalized"]


class BradleyTerryWarning(UserWarning):
    """The data do not pin down a finite maximum-likelihood estimate for some systems."""


@dataclass(frozen=True)
class Aggregate:
    """Comparisons summed into K x K matrices over the systems in ``systems``.

    ``wins[i, j]``: weight of verdicts where i beat j (with ``ties="half"`` each tie
    adds half its weight to both ``wins[i, j]`` and ``wins[j, i]``).
    ``ties[i, j]``: weight of ties between i and j (symmetric).
    ``n``: number of comparisons involving each system (unweighted rows).
    """

    systems: pd.Index
    wins: np.ndarray
    ties: np.ndarray
    n: np.ndarray


@dataclass(frozen=True)
class _Encoded:
    systems: pd.Index
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray


# --------------------------------------------------------------------------- weights


def strength_weight(
    strength: np.ndarray | pd.Series | float,
    strength_max: np.ndarray | pd.Series | float,
    scheme: StrengthWeights = "normalized",
    *,
    winner: np.ndarray | pd.Series | None = None,
) -> np.ndarray:
    """Map judge strengths to comparison weights, vectorised.

    Schemes:

    * ``"none"``: every verdict weighs 1.
    * ``"raw"``: weight = strength (the literal reading of paper 9.8, "weighted by win
      strength (1-5)"). It makes an LLM's 5 count five times a human's 1.
    * ``"normalized"`` (default): weight = 1 + (strength - 1) / (strength_max - 1), so the
      human scale's 1 "slightly" / 2 "significantly" map to 1 / 2 and an LLM's 1..5 maps
      to 1..2: both kinds of judge weigh alike.

    A null strength, a null or <= 1 strength_max (normalized only) and a tie
    (``winner == "tie"``, when given) weigh 1. Strengths are clipped to [1, strength_max].
    """
    s = np.asarray(strength, dtype=float)
    smax = np.broadcast_to(np.asarray(strength_max, dtype=float), s.shape)
    if scheme == "none":
        w = np.ones_like(s)
    elif scheme == "raw":
        w = np.where(np.isnan(s), 1.0, np.maximum(s, 1.0))
    elif scheme == "normalized":
        with np.errstate(invalid="ignore", divide="ignore"):
            clipped = np.clip(s, 1.0, smax)
            w = 1.0 + (clipped - 1.0) / (smax - 1.0)
        w = np.where(np.isnan(s) | np.isnan(smax) | (smax <= 1.0), 1.0, w)
    else:
        raise ValueError(f"unknown strength scheme {scheme!r}")
    if winner is not None:
        w = np.where(np.asarray(winner, dtype=object) == "tie", 1.0, w)
    return np.asarray(w, dtype=float)


# --------------------------------------------------------------------------- encoding


def _factorize(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    # Categorical columns already carry integer codes: reuse them (no hashing at all).
    if isinstance(column.dtype, pd.CategoricalDtype):
        return np.asarray(column.cat.codes, dtype=np.int64), pd.Index(column.cat.categories)
    codes, uniques = pd.factorize(column)
    return codes.astype(np.int64, copy=False), pd.Index(uniques)


def _encode_systems(comparisons: pd.DataFrame) -> tuple[pd.Index, np.ndarray, np.ndarray]:
    # Factorizing each column separately and merging the two small vocabularies is
    # cheaper than factorizing the concatenation of both columns (no 2N copy).
    codes_a, uniq_a = _factorize(comparisons["system_a"])
    codes_b, uniq_b = _factorize(comparisons["system_b"])
    if (codes_a < 0).any() or (codes_b < 0).any():
        raise ValueError("system_a and system_b must not be null")
    systems = uniq_a.append(uniq_b).unique()
    a = systems.get_indexer(uniq_a)[codes_a]
    b = systems.get_indexer(uniq_b)[codes_b]
    used = np.zeros(len(systems), dtype=bool)
    used[a] = True
    used[b] = True
    if not used.all():  # unused categories of a Categorical column
        remap = np.cumsum(used) - 1
        systems, a, b = systems[used], remap[a], remap[b]
    return pd.Index(systems, name="system"), a, b


def _encode_outcome(winner: pd.Series) -> np.ndarray:
    codes, uniques = _factorize(winner)
    lookup = np.array([WINNER_CODES.get(str(u), -1) for u in uniques] + [-1])
    outcome: np.ndarray = lookup[codes]  # code -1 (null) picks the trailing -1
    if (outcome < 0).any():
        bad = sorted({str(u) for u in uniques if str(u) not in WINNER_CODES} | {"null"})
        raise ValueError(f"winner must be 'a', 'b' or 'tie'; found {bad}")
    return outcome


def _encode(comparisons: pd.DataFrame) -> _Encoded:
    missing = {"system_a", "system_b", "winner"} - set(comparisons.columns)
    if missing:
        raise ValueError(f"comparisons lack columns {sorted(missing)}")
    systems, a, b = _encode_systems(comparisons)
    if (a == b).any():
        raise ValueError("a system cannot be compared with itself (system_a == system_b)")
    if "weight" in comparisons.columns:
        weight = comparisons["weight"].to_numpy(dtype=float, na_value=np.nan)
        if not np.isfinite(weight).all() or (weight < 0).any():
            raise ValueError("weight must be finite and non-negative")
    else:
        weight = np.ones(len(comparisons))
    return _Encoded(systems, a, b, _encode_outcome(comparisons["winner"]), weight)


def encode(comparisons: pd.DataFrame) -> _Encoded:
    """Comparisons as integer codes (systems, outcome 0 = a won, 1 = b won, 2 = tie) and
    weights: what :func:`interval_of` and the coverage simulation (`ranking.coverage`) read."""
    return _encode(comparisons)


def _cells(enc: _Encoded) -> np.ndarray:
    """Flat index of each comparison's (system_a, system_b, outcome) cell."""
    k = len(enc.systems)
    cells: np.ndarray = (enc.a * k + enc.b) * 3 + enc.outcome
    return cells


def _matrices_from_cells(cell_weights: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Strict-win and tie matrices from (..., K*K*3) cell weights (leading batch dims kept)."""
    c = cell_weights.reshape(*cell_weights.shape[:-1], k, k, 3)
    a_wins, b_wins, tie = c[..., 0], c[..., 1], c[..., 2]
    wins = a_wins + np.swapaxes(b_wins, -1, -2)
    ties = tie + np.swapaxes(tie, -1, -2)
    return wins, ties


def aggregate(comparisons: pd.DataFrame, *, ties: TieModel = "half") -> Aggregate:
    """Sum comparisons into win and tie matrices (see :class:`Aggregate`)."""
    enc = _encode(comparisons)
    return _aggregate_encoded(enc, ties)


def _aggregate_encoded(enc: _Encoded, ties: TieModel) -> Aggregate:
    k = len(enc.systems)
    cell_w = np.bincount(_cells(enc), weights=enc.weight, minlength=k * k * 3)
    wins, tie_m = _matrices_from_cells(cell_w, k)
    if ties == "half":
        wins = wins + tie_m / 2.0
    elif ties != "davidson":
        raise ValueError(f"ties must be 'half' or 'davidson', not {ties!r}")
    n = np.bincount(enc.a, minlength=k) + np.bincount(enc.b, minlength=k)
    return Aggregate(enc.systems, wins, tie_m, n)


# --------------------------------------------------------------------------- solvers


def elo_from_theta(theta: np.ndarray) -> np.ndarray:
    """Elo = 400 (theta - mean theta) / ln 10 + 1500 (paper 9.8); works on batches (last axis)."""
    theta = np.asarray(theta, dtype=float)
    return ELO_SCALE * (theta - theta.mean(axis=-1, keepdims=True)) + ELO_BASE


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic function


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    log_p: np.ndarray = -np.logaddexp(0.0, -x)
    return log_p


def _half_loss(theta: np.ndarray, wins: np.ndarray, prior: float) -> np.ndarray:
    """Penalised negative log-likelihood of the half-tie model; batched over leading axes."""
    diff = theta[..., :, None] - theta[..., None, :]
    nll = -(wins * _log_sigmoid(diff)).sum(axis=(-1, -2))
    loss: np.ndarray = nll + 0.5 * prior * (theta**2).sum(axis=-1)
    return loss


def _half_newton_step(theta: np.ndarray, wins: np.ndarray, prior: float) -> np.ndarray:
    """Newton step for the half-tie model, batched over leading axes of theta/wins."""
    k = theta.shape[-1]
    total = wins + np.swapaxes(wins, -1, -2)
    p = _sigmoid(theta[..., :, None] - theta[..., None, :])
    grad = (total * p).sum(axis=-1) - wins.sum(axis=-1) + prior * theta
    hess = -total * p * (1.0 - p)
    diag = -hess.sum(axis=-1) + prior
    idx = np.arange(k)
    hess[..., idx, idx] = diag
    # The likelihood is invariant to a common shift of theta; adding (1/K) 11^T to the
    # Hessian fixes that direction without biasing any difference theta_i - theta_j.
    hess += 1.0 / k
    grad = grad + theta.sum(axis=-1, keepdims=True) / k
    return -np.linalg.solve(hess, grad[..., None])[..., 0]


def _newton_half(
    wins: np.ndarray, theta0: np.ndarray, prior: float, tol: float = 1e-10, max_iter: int = 100
) -> tuple[np.ndarray, int]:
    """Damped Newton on a batch of win matrices; returns (theta, iterations)."""
    theta = np.array(theta0, dtype=float)
    loss = _half_loss(theta, wins, prior)
    for it in range(1, max_iter + 1):
        step = _half_newton_step(theta, wins, prior)
        scale = np.ones(theta.shape[:-1])
        for _ in range(30):  # backtrack only the batch members whose loss went up
            trial = theta + scale[..., None] * step
            trial_loss = _half_loss(trial, wins, prior)
            worse = trial_loss > loss + 1e-12 * np.abs(loss)
            if not worse.any():
                break
            scale = np.where(worse, scale / 2.0, scale)
        theta, loss = trial, trial_loss
        if np.max(np.abs(scale[..., None] * step)) < tol:
            return theta, it
    return theta, max_iter


def _davidson_terms(
    theta: np.ndarray, log_nu: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x = 0.5 * (theta[:, None] - theta[None, :])
    nu = math.exp(log_nu)
    denom = 2.0 * np.cosh(x) + nu
    s = 2.0 * np.sinh(x) / denom
    t = nu / denom
    c = 2.0 * np.cosh(x) / denom - s**2
    return x, denom, s, t, c


def _davidson_loss(
    theta: np.ndarray, log_nu: float, wins: np.ndarray, ties: np.ndarray, prior: float
) -> float:
    x, denom, *_ = _davidson_terms(theta, log_nu)
    # Each unordered pair appears twice in the full matrices: halve the symmetric terms.
    ll = (
        (wins * x).sum()
        + 0.5 * (ties.sum() * log_nu)
        - 0.5 * ((wins + wins.T + ties) * np.log(denom)).sum()
    )
    return float(-ll + 0.5 * prior * (theta**2).sum())


def _davidson_grad_hess(
    theta: np.ndarray, log_nu: float, wins: np.ndarray, ties: np.ndarray, prior: float
) -> tuple[np.ndarray, np.ndarray]:
    k = len(theta)
    _, _, s, t, c = _davidson_terms(theta, log_nu)
    total = wins + wins.T + ties
    np.fill_diagonal(total, 0.0)
    grad = np.empty(k + 1)
    grad[:k] = 0.5 * ((total * s).sum(axis=1) - (wins - wins.T).sum(axis=1)) + prior * theta
    grad[k] = 0.5 * ((total * t).sum() - ties.sum())
    hess = np.empty((k + 1, k + 1))
    h_tt = -0.25 * total * c
    np.fill_diagonal(h_tt, 0.0)
    np.fill_diagonal(h_tt, -h_tt.sum(axis=1) + prior)
    hess[:k, :k] = h_tt
    cross = -0.5 * (total * s * t).sum(axis=1)
    hess[:k, k] = hess[k, :k] = cross
    hess[k, k] = 0.5 * (total * (t - t**2)).sum() + 1e-9
    return grad, hess


def _newton_davidson(
    wins: np.ndarray,
    ties: np.ndarray,
    theta0: np.ndarray,
    prior: float,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> tuple[np.ndarray, float, np.ndarray, int]:
    k = len(theta0)
    n_total = wins.sum() + ties.sum() / 2.0
    tie_share = (ties.sum() / 2.0) / n_total if n_total > 0 else 0.0
    # Start nu from the observed tie share (Pr(tie) = nu / (2 + nu) at equal strengths).
    share = min(max(tie_share, 1e-6), 0.999)
    params = np.append(theta0, math.log(2.0 * share / (1.0 - share)))
    loss = _davidson_loss(params[:k], params[k], wins, ties, prior)
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        grad, hess = _davidson_grad_hess(params[:k], params[k], wins, ties, prior)
        hess[:k, :k] += 1.0 / k
        grad[:k] += params[:k].sum() / k
        step = -np.linalg.solve(hess, grad)
        scale = 1.0
        for _ in range(40):
            trial = params + scale * step
            trial_loss = _davidson_loss(trial[:k], trial[k], wins, ties, prior)
            if trial_loss <= loss + 1e-12 * abs(loss):
                break
            scale /= 2.0
        params, loss = trial, trial_loss
        if np.max(np.abs(scale * step)) < tol:
            break
    _, hess = _davidson_grad_hess(params[:k], params[k], wins, ties, prior)
    return params[:k], float(params[k]), hess, iterations


def fit_matrix(
    wins: np.ndarray,
    *,
    ties: np.ndarray | None = None,
    tie_model: TieModel = "half",
    prior: float = DEFAULT_PRIOR,
    theta0: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Maximum (penalised) likelihood theta for a K x K matrix of weighted wins.

    ``wins[i, j]`` is the weight of i beating j. With ``tie_model="half"`` ties must
    already be folded into ``wins`` (half to each side); with ``"davidson"`` pass the
    symmetric tie-weight matrix as ``ties``. Returns (theta centred to mean 0, the
    Hessian of the penalised negative log-likelihood for theta, info dict with
    ``iterations`` and, for Davidson, ``nu``).
    """
    wins = np.asarray(wins, dtype=float)
    k = wins.shape[0]
    start = np.zeros(k) if theta0 is None else np.asarray(theta0, dtype=float)
    if tie_model == "half":
        theta, iters = _newton_half(wins, start, prior)
        theta -= theta.mean()
        hess = _half_hessian(theta, wins, prior)
        return theta, hess, {"iterations": iters}
    if tie_model != "davidson":
        raise ValueError(f"tie_model must be 'half' or 'davidson', not {tie_model!r}")
    tie_m = np.zeros_like(wins) if ties is None else np.asarray(ties, dtype=float)
    if not tie_m.any():
        # Without ties the MLE of nu is 0 (log nu -> -inf) and Davidson is plain BT.
        theta, iters = _newton_half(wins, start, prior)
        theta -= theta.mean()
        hess = _half_hessian(theta, wins, prior)
        return theta, hess, {"iterations": iters, "nu": 0.0, "log_nu": -math.inf}
    theta, log_nu, hess, iters = _newton_davidson(wins, tie_m, start, prior)
    theta -= theta.mean()
    return theta, hess, {"iterations": iters, "nu": math.exp(log_nu), "log_nu": log_nu}


def _half_hessian(theta: np.ndarray, wins: np.ndarray, prior: float) -> np.ndarray:
    total = wins + wins.T
    p = _sigmoid(theta[:, None] - theta[None, :])
    hess: np.ndarray = -total * p * (1.0 - p)
    np.fill_diagonal(hess, 0.0)
    np.fill_diagonal(hess, -hess.sum(axis=1) + prior)
    return hess


# --------------------------------------------------------------------------- diagnostics


def _check_graph(agg: Aggregate) -> None:
    """Warn when the data do not determine a finite MLE (Zermelo/Ford condition)."""
    k = len(agg.systems)
    if k < 2:
        return
    beats = agg.wins + agg.ties  # i -> j when i has a win (or tie) over j
    graph = coo_matrix(beats > 0)
    n_weak, weak = connected_components(graph, directed=True, connection="weak")
    if n_weak > 1:
        groups = "; ".join(_names(agg.systems[weak == c]) for c in range(n_weak))
        warnings.warn(
            f"the comparison graph is disconnected ({n_weak} groups never compared "
            f"with each other: {groups}); their relative Elo is set by the prior only",
            BradleyTerryWarning,
            stacklevel=3,
        )
        return
    n_strong, strong = connected_components(graph, directed=True, connection="strong")
    if n_strong > 1:
        _warn_separation(agg, strong, n_strong)


def unbounded_systems(comparisons: pd.DataFrame, *, ties: TieModel = "half") -> dict[str, str]:
    """The systems the data cannot place, each with the reason: outside the largest group of
    systems compared with each other, or in a group that always won or always lost against
    the rest (no finite maximum-likelihood estimate: only the prior holds their Elo)."""
    if len(comparisons) == 0:
        return {}
    agg = aggregate(comparisons, ties=ties)
    beats = coo_matrix((agg.wins + agg.ties) > 0)
    n_weak, weak = connected_components(beats, directed=True, connection="weak")
    out: dict[str, str] = {}
    if n_weak > 1:
        main = np.bincount(weak).argmax()
        for name in agg.systems[np.flatnonzero(weak != main)]:
            out[str(name)] = "never compared with the main group of systems"
    inside = weak == np.bincount(weak).argmax()
    n_strong, strong = connected_components(beats, directed=True, connection="strong")
    won = (agg.wins + agg.ties) > 0
    # The largest group that beat each other every way is the reference: the others are read
    # against it (if they always won or lost against the rest, only the prior places them).
    # With no such group (every system alone), none is the reference: all one-sided ones go.
    sizes = np.bincount(strong[inside], minlength=n_strong)
    main_strong = int(sizes.argmax()) if sizes.max() > 1 else -1
    for comp in range(n_strong):
        members = (strong == comp) & inside
        if not members.any() or comp == main_strong:
            continue
        others = inside & ~members
        if not won[others][:, members].any():
            reason = "always won against the others: no finite estimate"
        elif not won[members][:, others].any():
            reason = "always lost against the others: no finite estimate"
        else:
            continue
        for name in agg.systems[np.flatnonzero(members)]:
            out.setdefault(str(name), reason)
    return out


def _names(systems: Iterable[object]) -> str:
    """System names in words for a message: "a", "a and b", "a, b and c"."""
    names = [str(name) for name in systems]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _warn_separation(agg: Aggregate, labels: np.ndarray, n_comp: int) -> None:
    beats = (agg.wins + agg.ties) > 0
    onesided = []
    for comp in range(n_comp):
        inside = labels == comp
        never_lost = not beats[~inside][:, inside].any()
        never_won = not beats[inside][:, ~inside].any()
        if never_lost or never_won:
            names = agg.systems[inside]
            verb = "always win" if never_lost else "always lose"
            onesided.append(f"{_names(names)} {verb}{'s' if len(names) == 1 else ''}")
    warnings.warn(
        "no finite maximum-likelihood estimate: "
        + "; ".join(onesided)
        + " against the others; their Elo is held finite by the prior and is only a bound",
        BradleyTerryWarning,
        stacklevel=4,
    )


# --------------------------------------------------------------------------- uncertainty


def _centred_covariance(hess: np.ndarray, k: int) -> np.ndarray:
    """Covariance of theta_i - mean(theta) from the (penalised) observed information."""
    h = hess.copy()
    h[:k, :k] += 1.0 / k  # pin the free common shift, as in the solver
    cov = np.linalg.inv(h)[:k, :k]
    # (I - 11'/K) cov (I - 11'/K), written with means to skip two K x K matrix products.
    return cov - cov.mean(axis=0) - cov.mean(axis=1, keepdims=True) + cov.mean()


# --------------------------------------------------------------------------- entry point


@dataclass(frozen=True)
class Fit:
    """A fit with what the bootstrap saw: ``table`` is :func:`fit`'s result; ``draws`` the Elo
    of every system in every bootstrap round (rounds x systems, columns named; None without a
    bootstrap), read on the table's scale (see :mod:`ranking.bootstrap`); ``reference`` the
    systems each round was centred on; ``unit`` what was resampled ("clusters",
    "comparisons", "batches"; None without a bootstrap); ``covariance`` the Elo covariance of
    the systems (Elo^2; Fisher intervals only)."""

    table: pd.DataFrame
    draws: pd.DataFrame | None = None
    reference: list[str] = field(default_factory=list)
    unit: str | None = None
    covariance: pd.DataFrame | None = None


def fit(
    comparisons: pd.DataFrame,
    *,
    ties: TieModel = "half",
    ci: CiMethod | None = "fisher",
    bootstrap_rounds: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
) -> pd.DataFrame:
    """Fit a Bradley–Terry model and return an Elo leaderboard.

    ``comparisons``: one row per verdict with ``system_a``, ``system_b``, ``winner``
    ("a" | "b" | "tie"), optional ``weight`` (default 1) and optional ``cluster`` or
    ``context``: the bootstrap resamples clusters when present (else contexts, else single
    comparisons; see :mod:`ranking.bootstrap`).

    ``ties``: "half" (a tie is half a win to each side) or "davidson" (estimated tie
    parameter, reported in ``result.attrs["nu"]``).
    ``ci``: "fisher" (inverse observed information, for the centred theta),
    "paper" (SE = sqrt(1/n_i) on theta, paper 9.8), "bootstrap" (percentile interval of
    ``bootstrap_rounds`` resamples, each centred on the well-connected systems or the anchor)
    or None (NaN intervals).
    ``prior``: precision of the Gaussian prior on theta (see ``DEFAULT_PRIOR``).
    ``anchor``: a system whose Elo is fixed at 1500 (others read relative to it); None
    centres on the mean theta as the paper does.

    Returns a DataFrame indexed by ``system``, sorted by Elo (highest first), with
    ``theta`` (centred), ``elo``, ``se`` (Elo scale), ``ci_low``/``ci_high`` (Elo scale,
    level 1 - alpha), ``n`` (comparisons involving the system, unweighted), ``wins``
    (weighted, ties counted half), ``win_rate`` (wins / weight of its comparisons),
    ``rank_low``/``rank_high`` (the rank interval the intervals allow, see
    :func:`ranking.bootstrap.rank_intervals`), and with a bootstrap ``clusters`` (resampling
    units the system appears in) and ``ci_mc_error`` (Monte Carlo error of its bounds).
    Emits :class:`BradleyTerryWarning` when some estimates exist only thanks to the prior, and
    when a bootstrap interval rests on too few clusters.
    """
    return fit_detailed(
        comparisons,
        ties=ties,
        ci=ci,
        bootstrap_rounds=bootstrap_rounds,
        seed=seed,
        alpha=alpha,
        prior=prior,
        anchor=anchor,
    ).table


def fit_detailed(
    comparisons: pd.DataFrame,
    *,
    ties: TieModel = "half",
    ci: CiMethod | None = "fisher",
    bootstrap_rounds: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
) -> Fit:
    """:func:`fit`, keeping the bootstrap rounds (see :class:`Fit`)."""
    if len(comparisons) == 0:
        return Fit(pd.DataFrame(columns=OUTPUT_COLUMNS, index=pd.Index([], name="system")))
    if ci not in (*CI_METHODS, None):
        raise ValueError(f"ci must be one of {', '.join(CI_METHODS)} or None, not {ci!r}")
    if ci == "sandwich" and ties != "half":
        raise ValueError("sandwich intervals need ties counted as half a win (ties='half')")
    enc = _encode(comparisons)
    anchor_at = _anchor_index(enc.systems, anchor)
    agg = _aggregate_encoded(enc, ties)
    _check_graph(agg)
    theta, hess, info = fit_matrix(agg.wins, ties=agg.ties, tie_model=ties, prior=prior)
    k = len(theta)
    elo = bootstrap.point_elo(theta, anchor_at)
    nan = np.full(k, np.nan)
    extra = {"clusters": nan, "ci_mc_error": nan}
    result = Fit(table=pd.DataFrame())
    if ci == "bootstrap":
        result, se, low, high, extra = _bootstrap(
            enc, comparisons, theta, ties, bootstrap_rounds, seed, alpha, prior, anchor_at
        )
    else:
        covariance = None
        if ci == "fisher":
            covariance = _elo_covariance(hess, k, anchor_at)
        elif ci == "sandwich":
            covariance = _elo_covariance(hess, k, anchor_at, meat=_sandwich_meat(enc, theta))
        se = _asymptotic_se(ci, covariance, agg)
        z = stats.norm.ppf(1.0 - alpha / 2.0)
        low, high = elo - z * se, elo + z * se
        if covariance is not None:
            result = Fit(
                table=result.table,
                covariance=pd.DataFrame(covariance, index=enc.systems, columns=enc.systems),
            )
    if anchor_at is not None:
        info["anchor"] = str(enc.systems[anchor_at])
    table = _result_frame(agg, theta, elo, se, low, high, info, extra)
    return Fit(table, result.draws, result.reference, result.unit, result.covariance)


def interval_of(
    enc: _Encoded, outcome: np.ndarray, *, ci: CiMethod, alpha: float = 0.05
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Elo, low, high) of the half-tie fit of ``enc``'s design with ``outcome`` in place of its
    own, by an asymptotic method ("fisher", "sandwich" or "paper"), mean-centred: the fast path
    the coverage simulation (`ranking.coverage`) refits thousands of times."""
    sim = _Encoded(enc.systems, enc.a, enc.b, outcome, enc.weight)
    agg = _aggregate_encoded(sim, "half")
    theta, hess, _ = fit_matrix(agg.wins, prior=DEFAULT_PRIOR)
    k = len(theta)
    if ci == "paper":
        se = _asymptotic_se("paper", None, agg)
    else:
        meat = _sandwich_meat(sim, theta) if ci == "sandwich" else None
        se = np.sqrt(np.clip(np.diag(_elo_covariance(hess, k, None, meat=meat)), 0.0, None))
    elo = bootstrap.point_elo(theta)
    z = stats.norm.ppf(1.0 - alpha / 2.0)
    return elo, elo - z * se, elo + z * se


def elo_of_rows(enc: _Encoded, keep: np.ndarray, *, prior: float = DEFAULT_PRIOR) -> pd.Series:
    """Elo (mean-centred, ties half) of the systems compared in the rows of ``enc`` that
    ``keep`` selects, as :func:`fit` gives it with ``ci=None`` for those rows: the split-half
    reliability's fast path (one encoding, many fits, no frame copied). A system without a row
    kept has no Elo; its prior keeps it out of the others' fit."""
    sub = _Encoded(enc.systems, enc.a[keep], enc.b[keep], enc.outcome[keep], enc.weight[keep])
    agg = _aggregate_encoded(sub, "half")
    present = agg.n > 0
    theta, _, _ = fit_matrix(agg.wins[np.ix_(present, present)], prior=prior)
    return pd.Series(bootstrap.point_elo(theta), index=enc.systems[present], name="elo")


def _anchor_index(systems: pd.Index, anchor: str | None) -> int | None:
    if anchor is None:
        return None
    if anchor not in systems:
        raise ValueError(f"anchor {anchor!r} is not among the compared systems")
    at = systems.get_loc(anchor)
    if not isinstance(at, int):  # a unique index gives a position; systems are unique
        raise ValueError(f"system {anchor!r} appears more than once")
    return at


def _elo_covariance(
    hess: np.ndarray, k: int, anchor_at: int | None, *, meat: np.ndarray | None = None
) -> np.ndarray:
    """Covariance of the Elo ratings (Elo^2) from the observed information: of theta minus its
    mean, or with an anchor of theta minus the anchor's theta (the anchor's own is 0).

    With ``meat`` (the summed outer products of the comparisons' score vectors, see
    :func:`_sandwich_meat`) it is the robust "sandwich" H^-1 M H^-1 instead of H^-1."""
    if meat is None:
        cov = _centred_covariance(hess, k)
    else:
        bread = _centred_covariance(hess, k)
        cov = bread @ meat @ bread
    if anchor_at is not None:
        column = cov[:, anchor_at : anchor_at + 1]
        cov = cov - column - column.T + cov[anchor_at, anchor_at]
    return ELO_SCALE**2 * cov


def _sandwich_meat(enc: _Encoded, theta: np.ndarray) -> np.ndarray:
    """Sum over comparisons of g g', g = w (y - p) (e_a - e_b) the comparison's score (its
    gradient of the half-tie log-likelihood), y = 1, 1/2, 0 for a win of a, a tie, a win of b.

    This is arena-rank's "sandwich" meat (``BradleyTerry.compute_hessian_and_covariance``):
    every comparison its own unit, whatever it shares with others. The meat, unlike the
    information, sees what a weight does (a verdict of weight 2 is one verdict, not two) and
    that a tie carries less surprise than a win."""
    k = len(enc.systems)
    y = np.array([1.0, 0.0, 0.5])[enc.outcome]
    p = _sigmoid(theta[enc.a] - theta[enc.b])
    squared = (enc.weight * (y - p)) ** 2
    cell = np.bincount(enc.a * k + enc.b, weights=squared, minlength=k * k).reshape(k, k)
    pair = cell + cell.T
    meat: np.ndarray = -pair
    np.fill_diagonal(meat, pair.sum(axis=1))
    return meat


def _asymptotic_se(
    ci: CiMethod | None, covariance: np.ndarray | None, agg: Aggregate
) -> np.ndarray:
    if covariance is not None:
        return np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    if ci == "paper":
        se: np.ndarray = ELO_SCALE * np.sqrt(1.0 / np.maximum(agg.n, 1))
        return se
    return np.full(len(agg.systems), np.nan)


def _bootstrap(
    enc: _Encoded,
    comparisons: pd.DataFrame,
    theta: np.ndarray,
    ties: TieModel,
    rounds: int,
    seed: int,
    alpha: float,
    prior: float,
    anchor_at: int | None,
) -> tuple[Fit, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    column = next((c for c in ("cluster", "context") if c in comparisons.columns), None)
    clusters = None if column is None else comparisons[column].to_numpy()
    k = len(theta)
    design = bootstrap.design(
        enc.a, enc.b, enc.outcome, enc.weight, k, clusters=clusters, seed=seed
    )

    def davidson(wins: np.ndarray, tie_m: np.ndarray, theta0: np.ndarray) -> np.ndarray:
        return fit_matrix(wins, ties=tie_m, tie_model="davidson", prior=prior, theta0=theta0)[0]

    thetas = bootstrap.bootstrap_thetas(
        design,
        theta,
        rounds=rounds,
        seed=seed,
        prior=prior,
        davidson_fit=davidson if ties == "davidson" else None,
    )
    reference = bootstrap.reference_systems(design.clusters)
    draws = bootstrap.round_elos(thetas, theta, reference=reference, anchor=anchor_at)
    low, high = bootstrap.percentile_interval(draws, alpha)
    extra = {
        "clusters": design.clusters.astype(float),
        "ci_mc_error": bootstrap.monte_carlo_error(draws, alpha),
    }
    if design.unit_kind == "clusters":
        _warn_few_clusters(enc.systems, design.clusters)
    result = Fit(
        table=pd.DataFrame(),
        draws=pd.DataFrame(draws, columns=enc.systems),
        reference=[str(s) for s in enc.systems[reference]]
        if anchor_at is None
        else [str(enc.systems[anchor_at])],
        unit=design.unit_kind,
    )
    return result, draws.std(axis=0, ddof=1), low, high, extra


def _warn_few_clusters(systems: pd.Index, clusters: np.ndarray) -> None:
    few = [f"{systems[i]} ({int(c)})" for i, c in enumerate(clusters) if c < bootstrap.MIN_CLUSTERS]
    if few:
        warnings.warn(
            f"too few source conversations for a percentile interval (fewer than "
            f"{bootstrap.MIN_CLUSTERS}): {', '.join(few)}; their intervals are likely too narrow",
            BradleyTerryWarning,
            stacklevel=4,
        )


def _result_frame(
    agg: Aggregate,
    theta: np.ndarray,
    elo: np.ndarray,
    se: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    info: dict[str, Any],
    extra: dict[str, Any],
) -> pd.DataFrame:
    # With davidson, agg.wins are strict wins: add half of the ties for the win share.
    credited = agg.wins if info.get("nu") is None else agg.wins + agg.ties / 2.0
    wins = credited.sum(axis=1)
    total = (credited + credited.T).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        win_rate = np.where(total > 0, wins / total, np.nan)
    frame = pd.DataFrame(
        {
            "theta": theta,
            "elo": elo,
            "se": se,
            "ci_low": low,
            "ci_high": high,
            "n": agg.n.astype(np.int64),
            "wins": wins,
            "win_rate": win_rate,
            **extra,
        },
        index=agg.systems,
    )
    if np.isnan(low).all():  # no interval: the rank the point estimate gives, exactly
        low = high = elo
    frame["rank_low"], frame["rank_high"] = bootstrap.rank_intervals(low, high)
    frame = frame.sort_values("elo", ascending=False, kind="stable")
    frame.attrs.update(info)
    return frame
