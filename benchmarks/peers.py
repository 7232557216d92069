"""Peer Bradley–Terry implementations, reproduced for side-by-side timing.

Each follows the published code it is named after (see benchmarks/README.md); only
logging, progress bars and leaderboard-specific anchoring were left out. Every function
returns Elo centred on 1500 (400 log10 units) so that results compare directly.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

from ranking.bradley_terry import elo_from_theta


def centred(elo: pd.Series) -> pd.Series:
    return elo - elo.mean() + 1500.0


# ------------------------------------------------------------------ (a) sklearn, duplicated rows


def sklearn_duplicated_rows(df: pd.DataFrame, scale=400, base=10, init_rating=1000) -> pd.Series:
    """arena-hard-auto v0.1 / FastChat elo_analysis ``compute_mle_elo``.

    Battles are duplicated; X has +log(base) / -log(base) in the two models' columns;
    Y = 1 for an A win in both copies, a tie is an A win in the first copy only (one win
    each side); LogisticRegression(fit_intercept=False, no penalty, tol=1e-8).
    ``C=np.inf`` is scikit-learn >= 1.8's spelling of the original ``penalty=None``.
    """
    from sklearn.linear_model import LogisticRegression

    models = pd.concat([df["system_a"], df["system_b"]]).unique()
    models = pd.Series(np.arange(len(models)), index=models)
    df = pd.concat([df, df], ignore_index=True)
    p = len(models.index)
    n = df.shape[0]
    x = np.zeros([n, p])
    x[np.arange(n), models[df["system_a"]]] = +math.log(base)
    x[np.arange(n), models[df["system_b"]]] = -math.log(base)
    y = np.zeros(n)
    y[df["winner"] == "a"] = 1.0
    tie_idx = (df["winner"] == "tie").to_numpy().copy()
    tie_idx[len(tie_idx) // 2 :] = False
    y[tie_idx] = 1.0
    lr = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-8)
    lr.fit(x, y)
    elo_scores = scale * lr.coef_[0] + init_rating
    return centred(pd.Series(elo_scores, index=models.index))


# ------------------------------------------------------------------ (b) FastChat rating_systems.py


def _get_matchups_models(df):
    n_rows = len(df)
    model_indices, models = pd.factorize(pd.concat([df["system_a"], df["system_b"]]))
    matchups = np.column_stack([model_indices[:n_rows], model_indices[n_rows:]])
    return matchups, models.to_list()


def preprocess_for_bt(df):
    """Unique (matchup, outcome) rows with their counts, as FastChat's ``preprocess_for_bt``."""
    n_rows = len(df)
    schedule = np.full((n_rows, 3), fill_value=1, dtype=np.int32)
    schedule[:, [0, 1]], models = _get_matchups_models(df)
    schedule[(df["winner"] == "a").to_numpy(), 2] = 2
    schedule[(df["winner"] == "b").to_numpy(), 2] = 0
    matchups_outcomes, weights = np.unique(schedule, return_counts=True, axis=0)
    matchups = matchups_outcomes[:, [0, 1]]
    outcomes = matchups_outcomes[:, 2].astype(np.float64) / 2.0
    return matchups, outcomes, models, weights.astype(np.float64)


def bt_loss_and_grad(ratings, matchups, outcomes, weights, alpha=1.0):
    matchup_ratings = ratings[matchups]
    logits = alpha * (matchup_ratings[:, 0] - matchup_ratings[:, 1])
    probs = expit(logits)
    loss = -((np.log(probs) * outcomes + np.log(1.0 - probs) * (1.0 - outcomes)) * weights).sum()
    matchups_grads = -alpha * (outcomes - probs) * weights
    model_grad = np.zeros_like(ratings)
    np.add.at(
        model_grad,
        matchups[:, [0, 1]],
        matchups_grads[:, None] * np.array([1.0, -1.0], dtype=np.float64),
    )
    return loss, model_grad


def fit_bt(matchups, outcomes, weights, n_models, alpha, tol=1e-6):
    result = minimize(
        fun=bt_loss_and_grad,
        x0=np.zeros(n_models, dtype=np.float64),
        args=(matchups, outcomes, weights, alpha),
        jac=True,
        method="L-BFGS-B",
        # FastChat also passes disp=False, which recent SciPy rejects with a warning.
        options={"maxiter": 100, "gtol": tol},
    )
    return result["x"]


def fastchat_compute_bt(df: pd.DataFrame, base=10.0, scale=400.0, init_rating=1000) -> pd.Series:
    """FastChat ``compute_bt``: L-BFGS-B on unique (pair, outcome) rows, ties as 1/2."""
    matchups, outcomes, models, weights = preprocess_for_bt(df)
    ratings = fit_bt(matchups, outcomes, weights, len(models), math.log(base))
    return centred(pd.Series(ratings * scale + init_rating, index=models))


def fastchat_bootstrap_bt(
    df: pd.DataFrame, num_round: int, base=10.0, scale=400.0, init_rating=1000.0, tol=1e-6
) -> pd.DataFrame:
    """FastChat ``compute_bootstrap_bt``: multinomial reweighting of the unique rows (that
    is, resampling single battles), one L-BFGS fit per round in a process pool."""
    matchups, outcomes, models, weights = preprocess_for_bt(df)
    rng = np.random.default_rng(seed=0)
    idxs = rng.multinomial(n=len(df), pvals=weights / weights.sum(), size=num_round)
    boot_weights = idxs.astype(np.float64) / len(df)
    bt_fn = partial(fit_bt, matchups, outcomes, n_models=len(models), alpha=np.log(base), tol=tol)
    with mp.Pool(os.cpu_count()) as pool:
        results = list(pool.imap_unordered(bt_fn, boot_weights))
    ratings = np.array(results) * scale + init_rating
    return pd.DataFrame(ratings, columns=models)


# ------------------------------------------------------------------ (c) evalica


def evalica_inputs(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    import evalica

    lookup = {"a": evalica.Winner.X, "b": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    winners = [lookup[w] for w in df["winner"].to_numpy()]
    return df["system_a"].to_numpy(), df["system_b"].to_numpy(), winners


def evalica_bt(xs, ys, winners) -> pd.Series:
    """``evalica.bradley_terry`` with its defaults (Rust solver, tolerance 1e-6, 100 iterations)."""
    import evalica

    result = evalica.bradley_terry(xs, ys, winners)
    return pd.Series(elo_from_theta(np.log(result.scores.to_numpy())), index=result.scores.index)


def evalica_bootstrap(xs, ys, winners, rounds: int):
    """``evalica.bootstrap`` of ``bradley_terry`` (resamples single comparisons), percentile CIs."""
    import evalica

    return evalica.bootstrap(
        evalica.bradley_terry,
        xs,
        ys,
        winners,
        n_resamples=rounds,
        bootstrap_method="percentile",
        random_state=0,
    )


# ------------------------------------------------------------------ reference


def reference_mle(df: pd.DataFrame, systems: pd.Index) -> pd.Series:
    """Maximum likelihood on the full, unaggregated likelihood (scipy L-BFGS-B, tight tolerance)."""
    a = systems.get_indexer(pd.Index(df["system_a"]))
    b = systems.get_indexer(pd.Index(df["system_b"]))
    y = np.select([df["winner"] == "a", df["winner"] == "b"], [1.0, 0.0], 0.5)
    k = len(systems)

    def nll(theta):
        d = theta[a] - theta[b]
        loss = (y * np.logaddexp(0.0, -d) + (1.0 - y) * np.logaddexp(0.0, d)).sum()
        resid = y - expit(d)
        grad = np.bincount(b, resid, k) - np.bincount(a, resid, k)
        return loss, grad

    result = minimize(
        nll,
        np.zeros(k),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-9, "ftol": 1e-16, "maxiter": 20_000, "maxcor": 30},
    )
    return pd.Series(elo_from_theta(result.x), index=systems)
