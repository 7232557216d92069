"""Style-controlled Bradley–Terry: system strengths fitted jointly with reply-style covariates,
as Chatbot Arena's style control does. No Django import.

Model: Pr(a beats b) = sigmoid(theta_a - theta_b + sum_f beta_f x_f), a tie counting as half a
win (y = 1, 1/2, 0), each comparison weighted as on the plain board. ``x_f`` is the comparison's
covariate for reply feature f (:data:`FEATURES`): the normalised difference
(f_a - f_b) / (f_a + f_b) of the two replies' values (0 when both are 0), divided by its root
mean square over the comparisons, so ``beta_f`` is in log-odds per standard deviation. Arena
also subtracts the mean; here the covariate stays antisymmetric (it flips sign when the two
sides swap), because the side a reply sits on is an accident of storage order (the pair's
first completion), not of style.

``theta`` is then the strength a system would have against an opponent of the same style:
Elo = 400 (theta - mean theta) / ln 10 + 1500, or relative to an anchor, as in
:mod:`ranking.bradley_terry`.

Fitting: comparisons of one pair item share both systems and both texts, so they are summed per
item into its weight W and its weighted score S (sum of w y); the likelihood depends on the data
only through those. Newton's method with the exact Hessian solves all bootstrap rounds of a block
at once; the rounds resample the same units (source conversations) with the same draws as the
plain board's bootstrap (:func:`ranking.bootstrap.draw_counts`), so the two boards' intervals
come from the same resamples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse, stats

from . import bootstrap
from .bradley_terry import DEFAULT_PRIOR, ELO_SCALE, WINNER_CODES

#: A ridge: one precision for every parameter, or one per parameter (systems, then features).
Prior = float | np.ndarray
#: Style recipes: ours (antisymmetric covariates, the board's weights) and arena-rank's
#: ContextualBradleyTerry defaults (see :func:`arena_recipe`).
RECIPES = ("heart", "arena")
#: arena-rank's defaults: ``ContextualPairDataset.from_pandas(min_pair_count=50)`` and
#: ``ContextualBradleyTerry(reg=1.0, hessian_reg=1e-5)``.
ARENA_MIN_PAIR_COUNT = 50
ARENA_REG = 1.0
ARENA_HESSIAN_REG = 1e-5

#: A list item: a line starting with -, *, +, • or 1. / 1) (RE2 and Python syntax alike).
_LIST_ITEM = "(?m)^[ \t]*(?:[-*+\u2022]|\\d+[.)])[ \t]+\\S"
_MARKDOWN = r"(?m)^[ \t]*#{1,6}[ \t]+\S|\*\*[^*\n]+\*\*|__[^_\n]+__"


@dataclass(frozen=True)
class Feature:
    name: str
    label: str
    pattern: str  # what is counted: non-overlapping matches of this regular expression

    def count(self, texts: pd.Series) -> pd.Series:
        """Matches per text (NaN for a missing text), counted by Arrow's RE2 in C++: a Python
        regex per text cost seconds at 42,000 texts."""
        import pyarrow as pa
        import pyarrow.compute as pc

        plain = texts.astype(object).where(texts.notna(), None)
        values = pa.array(plain.to_numpy(), type=pa.large_string())
        counts = pc.count_substring_regex(values, self.pattern).to_numpy(zero_copy_only=False)
        return pd.Series(counts, index=texts.index, dtype=float)


#: The reply features a study can control for, in display order.
FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature("length", "Length (words)", r"\S+"),
        Feature("questions", "Questions asked (number of '?')", r"\?"),
        Feature("lists", "List items (lines starting with -, *, + or 1.)", _LIST_ITEM),
        Feature("markdown", "Markdown headers and bold", _MARKDOWN),
    )
}
FEATURE_CHOICES = [(f.name, f.label) for f in FEATURES.values()]


def parse_features(value: str | list[str] | None) -> list[str]:
    """Feature names from "length,questions" (or a list), checked and in display order."""
    if not value:
        return []
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise ValueError(f"unknown style feature(s) {unknown}; choose from {list(FEATURES)}")
    return [n for n in FEATURES if n in names]


def text_features(texts: pd.Series, names: list[str] | None = None) -> pd.DataFrame:
    """Per text, the count of each feature (a missing text counts nothing and stays NaN)."""
    return pd.DataFrame(
        {name: FEATURES[name].count(texts).astype(float) for name in names or FEATURES},
        index=texts.index,
    )


def covariates(
    features_a: pd.DataFrame, features_b: pd.DataFrame
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Each comparison's covariates from the two replies' feature counts (rows aligned): the
    normalised difference, divided by its root mean square over the comparisons.

    Returns the covariates and, per feature left out, why (no variation, or unknown texts).
    Rows with an unknown text (NaN) get 0: no style information, no push either way.
    """
    total = features_a + features_b
    diff = (features_a - features_b) / total.where(total != 0)  # NaN where both are unknown
    diff = diff.mask((total == 0) & features_a.notna() & features_b.notna(), 0.0)
    out, dropped = {}, {}
    for name in diff.columns:
        column = diff[name]
        known = column.dropna()
        rms = math.sqrt(float((known**2).mean())) if len(known) else 0.0
        if rms == 0.0:
            dropped[name] = "no comparison differs in it (its effect cannot be estimated)"
            continue
        out[name] = (column / rms).fillna(0.0)
    return pd.DataFrame(out, index=diff.index), dropped


# --------------------------------------------------------------------------- the data


@dataclass(frozen=True)
class Items:
    """Comparisons summed per pair item: systems ``a``/``b``, covariates ``x`` (items x F), and the
    sparse per-unit (W, S) columns the bootstrap draws from (units x 2 items)."""

    systems: pd.Index
    a: np.ndarray
    b: np.ndarray
    x: np.ndarray
    weight: np.ndarray
    score: np.ndarray
    units: sparse.csr_matrix
    sizes: np.ndarray
    unit_kind: str
    clusters: np.ndarray  # per system, the units it appears in

    @property
    def k(self) -> int:
        return len(self.systems)


def items_from(comparisons: pd.DataFrame, names: list[str], *, seed: int = 0) -> Items:
    """Encode comparisons carrying one covariate column per name (and optional ``weight``,
    ``item``, ``cluster``/``context``) into :class:`Items`."""
    codes_a, uniq_a = pd.factorize(comparisons["system_a"].astype(str))
    codes_b, uniq_b = pd.factorize(comparisons["system_b"].astype(str))
    systems = pd.Index(pd.Index(uniq_a).append(pd.Index(uniq_b)).unique(), name="system")
    a = systems.get_indexer(uniq_a)[codes_a]
    b = systems.get_indexer(uniq_b)[codes_b]
    if (a == b).any():
        raise ValueError("a system cannot be compared with itself (system_a == system_b)")
    winners = comparisons["winner"].astype(str).map(WINNER_CODES)
    if winners.isna().any():
        raise ValueError("winner must be 'a', 'b' or 'tie'")
    outcome = winners.to_numpy(dtype=np.int64)
    y = np.array([1.0, 0.0, 0.5])[outcome]
    weight = (
        comparisons["weight"].to_numpy(dtype=float)
        if "weight" in comparisons.columns
        else np.ones(len(comparisons))
    )
    x_rows = comparisons[names].to_numpy(dtype=float) if names else np.zeros((len(a), 0))
    if "item" in comparisons.columns:
        item, _ = pd.factorize(comparisons["item"], use_na_sentinel=False)
    else:
        item = np.arange(len(a))
    n_items = int(item.max()) + 1 if len(item) else 0
    first = np.full(n_items, -1)
    first[item[::-1]] = np.arange(len(item))[::-1]  # the first comparison of each item
    column = next((c for c in ("cluster", "context") if c in comparisons.columns), None)
    clusters = None if column is None else comparisons[column].to_numpy()
    unit, sizes, kind = bootstrap.resampling_units(item * 3 + outcome, weight, clusters, seed)
    w = weight / sizes[unit] if kind == "comparisons" else weight
    n_units = len(sizes)
    units = sparse.csr_matrix(
        (
            np.concatenate([w, w * y]),
            (np.concatenate([unit, unit]), np.concatenate([item, item + n_items])),
        ),
        shape=(n_units, 2 * n_items),
    )
    seen = sparse.csc_matrix(
        (np.ones(2 * len(unit)), (np.concatenate([unit, unit]), np.concatenate([a, b]))),
        shape=(n_units, len(systems)),
    )
    seen.sum_duplicates()
    return Items(
        systems=systems,
        a=a[first],
        b=b[first],
        x=x_rows[first],
        weight=np.bincount(item, weight, n_items),
        score=np.bincount(item, weight * y, n_items),
        units=units,
        sizes=sizes,
        unit_kind=kind,
        clusters=np.diff(seen.indptr),
    )


# --------------------------------------------------------------------------- the solver


@dataclass(frozen=True)
class _Design:
    """What every Newton step needs besides the parameters (built once per fit)."""

    k: int
    a: np.ndarray
    b: np.ndarray
    x: np.ndarray
    signed: sparse.csr_matrix  # items x K: +1 at a, -1 at b
    pairs: sparse.csr_matrix  # items x P
    lo: np.ndarray
    hi: np.ndarray
    xx: np.ndarray  # items x F*F, products of covariates

    @classmethod
    def of(cls, items: Items) -> _Design:
        n, k = len(items.a), items.k
        rows = np.arange(n)
        signed = sparse.csr_matrix(
            (
                np.concatenate([np.ones(n), -np.ones(n)]),
                (np.concatenate([rows, rows]), np.concatenate([items.a, items.b])),
            ),
            shape=(n, k),
        )
        lo, hi = np.minimum(items.a, items.b), np.maximum(items.a, items.b)
        pair, uniques = pd.factorize(lo * k + hi)
        uniques = np.asarray(uniques, dtype=np.int64)
        pairs = sparse.csr_matrix((np.ones(n), (rows, pair)), shape=(n, len(uniques)))
        f = items.x.shape[1]
        xx = (items.x[:, :, None] * items.x[:, None, :]).reshape(n, f * f)
        return cls(k, items.a, items.b, items.x, signed, pairs, uniques // k, uniques % k, xx)


def _eta(design: _Design, params: np.ndarray) -> np.ndarray:
    theta, beta = params[:, : design.k], params[:, design.k :]
    eta: np.ndarray = theta[:, design.a] - theta[:, design.b] + beta @ design.x.T
    return eta


def _loss(
    design: _Design, params: np.ndarray, weight: np.ndarray, score: np.ndarray, prior: Prior
) -> np.ndarray:
    """Penalised negative log-likelihood of each round: sum W log(1 + e^eta) - S eta."""
    eta = _eta(design, params)
    fit = (weight * np.logaddexp(0.0, eta) - score * eta).sum(axis=1)
    loss: np.ndarray = fit + 0.5 * (prior * params**2).sum(axis=1)
    return loss


def _newton_step(
    design: _Design, params: np.ndarray, weight: np.ndarray, score: np.ndarray, prior: Prior
) -> tuple[np.ndarray, np.ndarray]:
    k, f = design.k, design.x.shape[1]
    rounds = params.shape[0]
    p = 0.5 * (1.0 + np.tanh(0.5 * _eta(design, params)))
    resid = weight * p - score  # d loss / d eta
    curve = weight * p * (1.0 - p)
    grad = np.empty_like(params)
    grad[:, :k] = np.asarray(design.signed.T @ resid.T).T
    grad[:, k:] = resid @ design.x
    grad += prior * params
    hess = np.zeros((rounds, k + f, k + f))
    per_pair = np.asarray(design.pairs.T @ curve.T).T  # rounds x P
    hess[:, design.lo, design.hi] -= per_pair
    hess[:, design.hi, design.lo] -= per_pair
    diagonal = np.arange(k)
    hess[:, diagonal, diagonal] = -hess[:, :k, :k].sum(axis=2)
    for j in range(f):
        cross = np.asarray(design.signed.T @ (curve * design.x[:, j]).T).T
        hess[:, :k, k + j] = cross
        hess[:, k + j, :k] = cross
    hess[:, k:, k:] = (curve @ design.xx).reshape(rounds, f, f)
    index = np.arange(k + f)
    hess[:, index, index] += prior
    # As in the plain fit: 1/K on the theta block fixes the free common shift of theta.
    hess[:, :k, :k] += 1.0 / k
    grad[:, :k] += params[:, :k].sum(axis=1, keepdims=True) / k
    return -np.linalg.solve(hess, grad[..., None])[..., 0], hess


def newton(
    design: _Design,
    weight: np.ndarray,
    score: np.ndarray,
    start: np.ndarray,
    prior: Prior,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    settle: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Damped Newton on a batch of rounds (weight, score: rounds x items) from ``start`` (one
    vector, or one per round); returns the parameters (rounds x (K + F), theta centred) and
    each round's last penalised Hessian.

    As in the plain bootstrap (:func:`ranking.bootstrap.newton_half`), a step moving no
    parameter by more than ``bootstrap.SAFE_STEP`` is taken whole (the logistic curvature
    cannot change enough over it to overshoot); larger steps are backtracked until the
    penalised likelihood improves. Rounds leave the batch once their step is below ``tol``,
    or, with ``settle``, once a whole step was below it: Newton converges quadratically, so
    after a step of size s the remaining error is of the order of s^2 (below ``tol`` when
    ``settle`` is about its square root), and the step that would only confirm it is saved.
    """
    rounds = weight.shape[0]
    width = start.shape[-1]
    params = np.array(np.broadcast_to(start, (rounds, width)), dtype=float)
    hess = np.empty((rounds, width, width))
    active = np.arange(rounds)
    for _ in range(max_iter):
        w, s, current = weight[active], score[active], params[active]
        step, hess[active] = _newton_step(design, current, w, s, prior)
        size = np.max(np.abs(step), axis=1)
        big = size > bootstrap.SAFE_STEP
        if big.any():
            step[big] *= _backtrack(design, current[big], step[big], w[big], s[big], prior)[:, None]
            size = np.max(np.abs(step), axis=1)
        params[active] = current + step
        active = active[(size >= tol) & ((size >= settle) | big)]
        if not len(active):
            break
    params[:, : design.k] -= params[:, : design.k].mean(axis=1, keepdims=True)
    return params, hess


def _backtrack(
    design: _Design,
    params: np.ndarray,
    step: np.ndarray,
    weight: np.ndarray,
    score: np.ndarray,
    prior: Prior,
) -> np.ndarray:
    """Per round, the step scale (1, 1/2, 1/4 ...) whose penalised loss is no worse."""
    loss = _loss(design, params, weight, score, prior)
    scale = np.ones(len(params))
    for _ in range(40):
        trial = _loss(design, params + scale[:, None] * step, weight, score, prior)
        worse = trial > loss + 1e-12 * np.abs(loss)
        if not worse.any():
            break
        scale = np.where(worse, scale / 2.0, scale)
    return scale


# --------------------------------------------------------------------------- entry point


@dataclass(frozen=True)
class StyleFit:
    """``table``: as :func:`ranking.bradley_terry.fit` (controlled Elo); ``coefficients``:
    per feature ``coef`` (log-odds per SD), ``se``, ``ci_low``, ``ci_high`` and ``elo_per_sd``
    (the coefficient on the Elo scale); ``dropped``: features left out, with the reason."""

    table: pd.DataFrame
    coefficients: pd.DataFrame
    dropped: dict[str, str] = field(default_factory=dict)
    draws: pd.DataFrame | None = None
    reference: list[str] = field(default_factory=list)
    unit: str | None = None


def arena_recipe(
    comparisons: pd.DataFrame, names: list[str], *, reg: float = ARENA_REG
) -> tuple[pd.DataFrame, float]:
    """arena-rank's ``ContextualPairDataset`` defaults applied to our comparisons: each covariate
    centred and standardised over the comparisons (population SD; the normalised difference
    it is made from is the same up to scale, so ours can be re-standardised), and each weight
    multiplied by the inverse-propensity weight 1 / max(n_pair, 50) of its system pair, n_pair
    the comparisons of that (unordered) pair, then scaled to mean 1. Returns the comparisons
    and the ridge precision on the coefficients in our summed likelihood: arena-rank adds
    reg / 2 |beta|^2 to the *mean* weighted log-likelihood, n reg / 2 |beta|^2 to the sum."""
    out = comparisons.copy()
    for name in names:
        column = out[name].to_numpy(dtype=float)
        sd = column.std()
        out[name] = (column - column.mean()) / (sd if sd > 0 else 1.0)
    a = out["system_a"].astype(str).to_numpy()
    b = out["system_b"].astype(str).to_numpy()
    pair = pd.Series(np.where(a < b, a + "\x1f" + b, b + "\x1f" + a))
    counts = pair.map(pair.value_counts()).to_numpy(dtype=float)
    weight = out["weight"].to_numpy(dtype=float) if "weight" in out.columns else 1.0
    weight = weight / np.maximum(counts, ARENA_MIN_PAIR_COUNT)
    out["weight"] = weight / weight.mean()
    return out, len(out) * reg


def fit(
    comparisons: pd.DataFrame,
    names: list[str],
    *,
    ci: str | None = "fisher",
    bootstrap_rounds: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
    recipe: str = "heart",
) -> StyleFit:
    """Fit Bradley–Terry with the covariate columns ``names`` of ``comparisons`` (see the module
    doc; :func:`covariates` makes them). ``ci``: "bootstrap" (percentile intervals over resampled
    clusters, else contexts, else comparisons), "fisher" (observed information), "sandwich"
    (robust, every comparison its own unit, as arena-rank) or None.

    ``recipe``: "heart" (the covariates and weights as given) or "arena" (arena-rank's
    ``ContextualBradleyTerry`` defaults, :func:`arena_recipe`: centred and standardised
    covariates, inverse-propensity weights, a ridge of precision 1 on the coefficients against
    the mean log-likelihood; its sandwich leaves the ridge out of the bread and takes it out of
    the meat, as arena-rank's ``compute_hessian_and_covariance`` does)."""
    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {', '.join(RECIPES)}, not {recipe!r}")
    k_names = len(names)
    ridge = 0.0
    if recipe == "arena":
        comparisons, ridge = arena_recipe(comparisons, names)
    items = items_from(comparisons, names, seed=seed)
    design = _Design.of(items)
    k, f = items.k, k_names
    precision = np.concatenate([np.full(k, prior), np.full(f, prior + ridge)])
    params, hess = newton(design, items.weight[None], items.score[None], np.zeros(k + f), precision)
    theta, beta = params[0, :k], params[0, k:]
    anchor_at = None if anchor is None else _position(items.systems, anchor)
    elo = bootstrap.point_elo(theta, anchor_at)
    z = stats.norm.ppf(1.0 - alpha / 2.0)
    draws: pd.DataFrame | None = None
    reference: list[str] = []
    unit: str | None = None
    extra = {"clusters": np.full(k, np.nan), "ci_mc_error": np.full(k, np.nan)}
    if ci == "bootstrap":
        thetas, betas = _bootstrap(items, design, params[0], bootstrap_rounds, seed, precision)
        mask = bootstrap.reference_systems(items.clusters)
        elo_draws = bootstrap.round_elos(thetas, theta, reference=mask, anchor=anchor_at)
        low, high = bootstrap.percentile_interval(elo_draws, alpha)
        se = elo_draws.std(axis=0, ddof=1)
        b_low, b_high = bootstrap.percentile_interval(betas, alpha)
        b_se = betas.std(axis=0, ddof=1)
        extra = {
            "clusters": items.clusters.astype(float),
            "ci_mc_error": bootstrap.monte_carlo_error(elo_draws, alpha),
        }
        draws = pd.DataFrame(elo_draws, columns=items.systems)
        reference = [str(s) for s in items.systems[mask]] if anchor is None else [anchor]
        unit = items.unit_kind
    elif ci in ("fisher", "sandwich"):
        cov = _covariance(hess[0], k)
        if ci == "sandwich":
            bread_hess = hess[0].copy()
            index = np.arange(k + f)
            bread_hess[k + index[:f], k + index[:f]] -= ridge
            if recipe == "arena":
                bread_hess[index, index] += len(comparisons) * ARENA_HESSIAN_REG
            bread = _covariance(bread_hess, k)
            meat = _sandwich_meat(comparisons, names, items, params[0])
            meat[k:, k:] -= ridge**2 / max(len(comparisons), 1) * np.outer(beta, beta)
            cov = bread @ meat @ bread
        se_theta = _elo_se(cov[:k, :k], anchor_at)
        se, low, high = se_theta, elo - z * se_theta, elo + z * se_theta
        b_se = np.sqrt(np.clip(np.diag(cov)[k:], 0.0, None))
        b_low, b_high = beta - z * b_se, beta + z * b_se
    else:
        se = low = high = np.full(k, np.nan)
        b_se = b_low = b_high = np.full(f, np.nan)
    table = _table(items, comparisons, theta, elo, se, low, high, extra)
    coefficients = pd.DataFrame(
        {
            "coef": beta,
            "se": b_se,
            "ci_low": b_low,
            "ci_high": b_high,
            "elo_per_sd": ELO_SCALE * beta,
        },
        index=pd.Index(names, name="feature"),
    )
    return StyleFit(table, coefficients, draws=draws, reference=reference, unit=unit)


def _sandwich_meat(
    comparisons: pd.DataFrame, names: list[str], items: Items, params: np.ndarray
) -> np.ndarray:
    """Sum over comparisons of g g', g = w (y - p) z its score, z = (e_a - e_b, x): every
    comparison its own unit (arena-rank's meat)."""
    k = items.k
    a = items.systems.get_indexer(pd.Index(comparisons["system_a"].astype(str)))
    b = items.systems.get_indexer(pd.Index(comparisons["system_b"].astype(str)))
    x = comparisons[names].to_numpy(dtype=float) if names else np.zeros((len(a), 0))
    weight = (
        comparisons["weight"].to_numpy(dtype=float)
        if "weight" in comparisons.columns
        else np.ones(len(a))
    )
    y = comparisons["winner"].astype(str).map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy(float)
    eta = params[a] - params[b] + x @ params[k:]
    g = weight * (y - 0.5 * (1.0 + np.tanh(0.5 * eta)))
    rows = np.arange(len(a))
    z = sparse.csr_matrix(
        (np.concatenate([g, -g]), (np.concatenate([rows, rows]), np.concatenate([a, b]))),
        shape=(len(a), k),
    )
    scores = sparse.hstack([z, sparse.csr_matrix(g[:, None] * x)]).tocsr()
    meat: np.ndarray = np.asarray((scores.T @ scores).todense())
    return meat


def _bootstrap(
    items: Items, design: _Design, start: np.ndarray, rounds: int, seed: int, prior: Prior
) -> tuple[np.ndarray, np.ndarray]:
    n_items = len(items.a)
    by_column = items.units.T.tocsr()
    block = max(1, bootstrap.BLOCK_FLOATS // max(n_items, 1))
    out = np.empty((rounds, len(start)))
    warm = UnitSteps.of(items, start, prior)
    done = 0
    for counts in bootstrap.draw_counts(
        items.sizes, rounds, seed, min(block, bootstrap.DRAW_BLOCK)
    ):
        totals = np.asarray(by_column @ np.ascontiguousarray(counts.T, dtype=float)).T
        begin = start if warm is None else warm.first_step(counts)
        params, _ = newton(
            design,
            totals[:, :n_items],
            totals[:, n_items:],
            begin,
            prior,
            tol=bootstrap.TOLERANCE,
            settle=SETTLE,
        )
        out[done : done + len(counts)] = params
        done += len(counts)
    return out[:, : items.k], out[:, items.k :]


#: A bootstrap round is done after a whole Newton step smaller than this (in theta): what is
#: left is of the order of its square, 1e-4 (0.02 Elo), a hundredth of the Monte Carlo error
#: of a percentile bound.
SETTLE = 1e-2
#: Per-unit gradients and Hessians are kept up to this many floats (units x (K + F)^2).
UNIT_STEP_FLOATS = 20_000_000


@dataclass(frozen=True)
class UnitSteps:
    """Each round's first Newton step from the full-data estimate, without touching an item.

    At the full estimate every item's win probability p is known, and a round's gradient and
    Hessian there are sums over items of terms linear in the round's item weights W and
    scores S, which are sums over the resampling units of the units' own. So each unit's
    gradient and Hessian are summed once (units x (K + F) and units x (K + F)^2), and a
    round's are its unit counts times them: the step costs nothing that grows with the items.
    The exact Newton solver then needs about one step per round instead of three.
    """

    k: int
    start: np.ndarray
    prior: np.ndarray
    gradients: np.ndarray  # units x D
    hessians: np.ndarray  # units x D^2

    @classmethod
    def of(cls, items: Items, start: np.ndarray, prior: Prior) -> UnitSteps | None:
        k, n, d = items.k, len(items.a), len(start)
        if len(items.sizes) * d * d > UNIT_STEP_FLOATS:
            return None
        f = d - k
        eta = start[items.a] - start[items.b] + items.x @ start[k:]
        p = 0.5 * (1.0 + np.tanh(0.5 * eta))
        # z_i: +1 at a, -1 at b, x_i at the features: as (index, value) pairs, 2 + F each.
        index = np.column_stack([items.a, items.b, np.tile(np.arange(k, d), (n, 1))])
        value = np.column_stack([np.ones(n), -np.ones(n), items.x])
        rows = np.repeat(np.arange(n), 2 + f)
        z = sparse.csr_matrix((value.ravel(), (rows, index.ravel())), shape=(n, d))
        outer_rows = np.repeat(np.arange(n), (2 + f) ** 2)
        outer_cols = (index[:, :, None] * d + index[:, None, :]).ravel()
        outer_vals = (value[:, :, None] * value[:, None, :]).ravel()
        outer = sparse.csr_matrix((outer_vals, (outer_rows, outer_cols)), shape=(n, d * d))
        weights, scores = items.units[:, :n], items.units[:, n:]
        resid = weights @ sparse.diags(p) - scores
        curve = weights @ sparse.diags(p * (1.0 - p))
        return cls(
            k=k,
            start=start,
            prior=np.broadcast_to(np.asarray(prior, dtype=float), (d,)).copy(),
            gradients=np.asarray((resid @ z).todense()),
            hessians=np.asarray((curve @ outer).todense()),
        )

    def first_step(self, counts: np.ndarray) -> np.ndarray:
        """Each round's parameters after one Newton step from the full estimate (rounds x D);
        a round whose step would be large starts at the full estimate instead."""
        d, k = len(self.start), self.k
        c = np.asarray(counts, dtype=float)
        grad = c @ self.gradients + self.prior * self.start
        grad[:, :k] += self.start[:k].sum() / k
        hess = (c @ self.hessians).reshape(len(c), d, d)
        index = np.arange(d)
        hess[:, index, index] += self.prior
        hess[:, :k, :k] += 1.0 / k
        step = -np.linalg.solve(hess, grad[..., None])[..., 0]
        wild = np.max(np.abs(step), axis=1) > bootstrap.SAFE_STEP
        step[wild] = 0.0
        out: np.ndarray = self.start + step
        return out


def _position(systems: pd.Index, name: str) -> int:
    """Where ``name`` is among ``systems`` (KeyError if it is not there, as ``Index.get_loc``)."""
    found = systems.get_loc(name)
    if not isinstance(found, int):
        raise KeyError(name)
    return found


def _covariance(hess: np.ndarray, k: int) -> np.ndarray:
    """Inverse observed information, theta centred (the 1/K shift fix is already in ``hess``)."""
    cov = np.linalg.inv(hess)
    centre = np.eye(len(hess))
    centre[:k, :k] -= 1.0 / k
    return centre @ cov @ centre.T


def _elo_se(cov: np.ndarray, anchor_at: int | None) -> np.ndarray:
    if anchor_at is not None:
        column = cov[:, anchor_at : anchor_at + 1]
        cov = cov - column - column.T + cov[anchor_at, anchor_at]
    return ELO_SCALE * np.sqrt(np.clip(np.diag(cov), 0.0, None))


def _table(
    items: Items,
    comparisons: pd.DataFrame,
    theta: np.ndarray,
    elo: np.ndarray,
    se: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    extra: dict[str, np.ndarray],
) -> pd.DataFrame:
    k = items.k
    wins = np.bincount(items.a, items.score, k) + np.bincount(
        items.b, items.weight - items.score, k
    )
    total = np.bincount(items.a, items.weight, k) + np.bincount(items.b, items.weight, k)
    names = pd.concat([comparisons["system_a"].astype(str), comparisons["system_b"].astype(str)])
    n = names.value_counts().reindex(items.systems, fill_value=0).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        win_rate = np.where(total > 0, wins / total, np.nan)
    frame = pd.DataFrame(
        {
            "theta": theta,
            "elo": elo,
            "se": se,
            "ci_low": low,
            "ci_high": high,
            "n": n.astype(np.int64),
            "wins": wins,
            "win_rate": win_rate,
            **extra,
        },
        index=items.systems,
    )
    bounds = (elo, elo) if np.isnan(low).all() else (low, high)
    frame["rank_low"], frame["rank_high"] = bootstrap.rank_intervals(*bounds)
    return frame.sort_values("elo", ascending=False, kind="stable")
