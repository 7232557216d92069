"""The clustered bootstrap (ranking.bootstrap): each round against independent fits, the
resampling schemes against their distributions, centring, seed stability, anchor, ranks, size."""

from __future__ import annotations

import math
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from ranking import bootstrap
from ranking import bradley_terry as bt

ELO = 400.0 / math.log(10.0)


def synthetic(k=6, n=4000, contexts=80, seed=3, tie_share=0.1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 0.6, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    winner = np.where(rng.random(n) < p, "a", "b")
    winner = np.where(rng.random(n) < tie_share, "tie", winner)
    names = np.array([f"sys-{i}" for i in range(k)])
    return pd.DataFrame(
        {
            "system_a": names[a],
            "system_b": names[b],
            "winner": winner,
            "weight": rng.choice([1.0, 1.5, 2.0], n),
            "context": rng.integers(0, contexts, n),
        }
    )


def _design(frame: pd.DataFrame, clusters=True, seed=0):
    enc = bt._encode(frame)
    design = bootstrap.design(
        enc.a,
        enc.b,
        enc.outcome,
        enc.weight,
        len(enc.systems),
        clusters=frame["context"].to_numpy() if clusters else None,
        seed=seed,
    )
    return enc, design


def independent_fit(wins: np.ndarray, prior: float) -> np.ndarray:
    """scipy L-BFGS-B on the penalised half-tie likelihood of a win matrix."""
    k = len(wins)

    def loss(theta):
        d = theta[:, None] - theta[None, :]
        nll = (wins * np.logaddexp(0.0, -d)).sum() + 0.5 * prior * (theta**2).sum()
        p = 1.0 / (1.0 + np.exp(-d))
        total = wins + wins.T
        grad = (total * p).sum(axis=1) - wins.sum(axis=1) + prior * theta
        return nll, grad

    x = minimize(loss, np.zeros(k), jac=True, method="L-BFGS-B", options={"gtol": 1e-12}).x
    return x - x.mean()


def test_each_round_is_the_fit_of_its_resampled_data():
    frame = synthetic()
    enc, design = _design(frame)
    agg = bt._aggregate_encoded(enc, "half")
    theta_hat = bt.fit_matrix(agg.wins)[0]
    thetas = bootstrap.bootstrap_thetas(design, theta_hat, rounds=5, seed=11, prior=1e-4)
    counts = next(bootstrap.draw_counts(design.sizes, 5, 11, 5))
    unit, _ = bootstrap._codes(frame["context"].to_numpy())
    for r in range(5):
        # The round's data, rebuilt from the comparisons themselves: each weighted by how
        # many times its context was drawn.
        weight = frame["weight"].to_numpy() * counts[r][unit]
        rebuilt = frame.assign(weight=weight)
        wins = bt.aggregate(rebuilt[weight > 0]).wins
        systems = bt.aggregate(rebuilt[weight > 0]).systems
        expected = independent_fit(wins, 1e-4)
        got = thetas[r][enc.systems.get_indexer(systems)]
        assert got - got.mean() == pytest.approx(expected, abs=1e-5)


def test_a_round_sums_the_drawn_units_pair_by_pair():
    frame = synthetic(k=4, n=300, contexts=12)
    enc, design = _design(frame)
    counts = next(bootstrap.draw_counts(design.sizes, 3, 5, 3))
    columns = bootstrap.outcome_totals(design, counts)
    unit, _ = bootstrap._codes(frame["context"].to_numpy())
    for r in range(3):
        wins, ties = bootstrap.win_tie_matrices(design, columns[:, r])
        weight = frame["weight"].to_numpy() * counts[r][unit]
        a = enc.a
        b = enc.b
        expect_wins = np.zeros((4, 4))
        expect_ties = np.zeros((4, 4))
        np.add.at(expect_wins, (a[enc.outcome == 0], b[enc.outcome == 0]), weight[enc.outcome == 0])
        np.add.at(expect_wins, (b[enc.outcome == 1], a[enc.outcome == 1]), weight[enc.outcome == 1])
        tie = enc.outcome == 2
        np.add.at(expect_ties, (a[tie], b[tie]), weight[tie])
        np.add.at(expect_ties, (b[tie], a[tie]), weight[tie])
        assert wins == pytest.approx(expect_wins)
        assert ties == pytest.approx(expect_ties)


def test_comparisons_are_drawn_one_by_one_as_a_multinomial():
    frame = synthetic(k=3, n=200).drop(columns="context").assign(weight=1.0)
    _, design = _design(frame.assign(context=0), clusters=False)
    assert design.unit_kind == "comparisons"
    assert design.sizes.sum() == 200
    counts = np.vstack(list(bootstrap.draw_counts(design.sizes, 4000, 1, 500)))
    assert (counts.sum(axis=1) == 200).all()
    # Each pool's count is Binomial(200, size / 200).
    p = design.sizes / 200
    assert counts.mean(axis=0) == pytest.approx(200 * p, rel=0.05)
    assert counts.var(axis=0) == pytest.approx(200 * p * (1 - p), rel=0.15)


def test_past_the_pool_limit_random_batches_keep_the_multinomial_covariance(monkeypatch):
    monkeypatch.setattr(bootstrap, "MAX_UNITS", 100)
    frame = synthetic(k=12, n=6000, tie_share=0.0).assign(weight=1.0)
    _, design = _design(frame, clusters=False)
    assert design.unit_kind == "batches" and design.n_units == 100
    blocks = list(bootstrap.draw_counts(design.sizes, 4000, 2, 500))
    columns = np.hstack([bootstrap.outcome_totals(design, c) for c in blocks])
    columns = columns[columns.sum(axis=1) > 0]  # no ties here: drop the empty tie cells
    # Per-comparison resampling: cell totals ~ Multinomial(6000, p), variance 6000 p (1 - p),
    # covariance -6000 p_i p_j. The batches give the same, up to the luck of the deal.
    p = columns.mean(axis=1) / 6000
    observed = np.cov(columns)
    expected = 6000 * (np.diag(p) - np.outer(p, p))
    ratio = np.diag(observed) / np.diag(expected)
    assert np.median(ratio) == pytest.approx(1.0, abs=0.1)
    off = ~np.eye(len(p), dtype=bool)
    assert observed[off].sum() == pytest.approx(expected[off].sum(), rel=0.15)


def test_a_sparse_system_does_not_widen_the_others_intervals():
    frame = synthetic(k=5, n=6000, contexts=200, seed=4)
    base = bt.fit(frame, ci="bootstrap", bootstrap_rounds=400, seed=1)
    # A writer seen in 3 contexts who always wins: in some rounds it is never drawn, in
    # others it wins everything; centred on the mean, it would drag every system along.
    sparse = pd.DataFrame(
        {
            "system_a": ["writer"] * 6,
            "system_b": ["sys-0", "sys-1", "sys-2", "sys-3", "sys-4", "sys-0"],
            "winner": ["a"] * 6,
            "weight": 1.0,
            "context": [0, 0, 1, 1, 2, 2],
        }
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = bt.fit_detailed(
            pd.concat([frame, sparse]), ci="bootstrap", bootstrap_rounds=400, seed=1
        )
    table = fitted.table
    assert "writer" not in fitted.reference and len(fitted.reference) == 5
    widths = (table["ci_high"] - table["ci_low"]).drop("writer")
    base_widths = base["ci_high"] - base["ci_low"]
    assert (widths / base_widths.reindex(widths.index)).max() < 1.15
    assert any("writer (3)" in str(w.message) for w in caught)  # too few clusters, named
    assert table.loc["writer", "clusters"] == 3


def test_bounds_are_stable_across_seeds_within_the_stated_monte_carlo_error():
    frame = synthetic(k=6, n=5000, contexts=150, seed=8)
    fits = [bt.fit(frame, ci="bootstrap", bootstrap_rounds=1000, seed=s) for s in range(10)]
    lows = pd.concat([f["ci_low"] for f in fits], axis=1)
    highs = pd.concat([f["ci_high"] for f in fits], axis=1)
    stated = pd.concat([f["ci_mc_error"] for f in fits], axis=1).mean(axis=1)
    # Across seeds a bound moves with a standard deviation close to the stated error ...
    spread = pd.concat([lows.std(axis=1), highs.std(axis=1)], axis=1).max(axis=1)
    assert (spread / stated).between(0.4, 2.0).all()
    # ... and never by more than four stated errors from its mean over the seeds.
    for bounds in (lows, highs):
        assert (bounds.sub(bounds.mean(axis=1), axis=0).abs().max(axis=1) < 4 * stated).all()
    assert stated.max() < 2.0  # 1,000 rounds on this study: well under 2 Elo


def test_the_monte_carlo_error_of_a_normal_quantile_matches_its_theory():
    rng = np.random.default_rng(0)
    draws = rng.normal(0.0, 1.0, (1000, 200))
    # sqrt(p (1 - p) / B) / phi(z_p) for p = 2.5 %, B = 1,000: 0.0846.
    error = bootstrap.monte_carlo_error(draws, 0.05)
    assert np.median(error) == pytest.approx(0.0846, rel=0.2)


def test_an_anchor_sits_at_1500_and_keeps_every_difference():
    frame = synthetic()
    free = bt.fit(frame, ci="fisher")
    anchored = bt.fit(frame, ci="fisher", anchor="sys-2")
    assert anchored.loc["sys-2", "elo"] == pytest.approx(1500.0)
    assert anchored.loc["sys-2", "se"] == pytest.approx(0.0, abs=1e-9)
    gaps = anchored["elo"] - free["elo"].reindex(anchored.index)
    assert gaps.to_numpy() == pytest.approx(np.full(len(gaps), gaps.iloc[0]))
    # The Fisher SE of the others is that of their difference with the anchor.
    fitted = bt.fit_detailed(frame, ci="fisher")
    cov = fitted.covariance
    var = cov.loc["sys-0", "sys-0"] + cov.loc["sys-2", "sys-2"] - 2 * cov.loc["sys-0", "sys-2"]
    assert anchored.loc["sys-0", "se"] == pytest.approx(math.sqrt(var), rel=1e-6)


def test_with_an_anchor_a_new_model_judged_against_it_moves_no_one_else():
    frame = synthetic(tie_share=0.0)
    newcomer = pd.DataFrame(
        {
            "system_a": ["newcomer"] * 8,
            "system_b": ["sys-2"] * 8,
            "winner": ["a"] * 6 + ["b"] * 2,
            "weight": 1.0,
            "context": 0,
        }
    )
    before = bt.fit(frame, ci=None, anchor="sys-2", prior=0.0)
    after = bt.fit(pd.concat([frame, newcomer]), ci=None, anchor="sys-2", prior=0.0)
    assert after["elo"].drop("newcomer").to_numpy() == pytest.approx(
        before["elo"].reindex(after.index.drop("newcomer")).to_numpy(), abs=1e-6
    )
    centred = bt.fit(pd.concat([frame, newcomer]), ci=None, prior=0.0)
    assert centred.loc["sys-0", "elo"] != pytest.approx(before.loc["sys-0", "elo"], abs=1.0)


def test_the_bootstrap_with_an_anchor_reads_every_round_against_it():
    fitted = bt.fit_detailed(synthetic(), ci="bootstrap", bootstrap_rounds=200, anchor="sys-1")
    assert fitted.reference == ["sys-1"]
    assert (fitted.draws["sys-1"] == 1500.0).all()
    row = fitted.table.loc["sys-1"]
    assert row["ci_low"] == row["ci_high"] == row["elo"] == 1500.0


def test_an_unknown_anchor_is_refused_with_its_name():
    with pytest.raises(ValueError, match="'nobody' is not among"):
        bt.fit(synthetic(), anchor="nobody")


def test_rank_intervals_follow_overlapping_intervals():
    low = np.array([1600.0, 1550.0, 1500.0, 1300.0])
    high = np.array([1700.0, 1620.0, 1580.0, 1400.0])
    best, worst = bootstrap.rank_intervals(low, high)
    # 0 is clear of all but 1; 1 overlaps 0 and 2; 2 overlaps 1; 3 is last for sure.
    assert best.tolist() == [1, 1, 2, 4]
    assert worst.tolist() == [2, 3, 3, 4]


def test_the_fit_reports_rank_intervals_and_without_an_interval_the_plain_rank():
    table = bt.fit(synthetic(), ci=None)
    assert table["rank_low"].tolist() == table["rank_high"].tolist() == list(range(1, 7))
    boot = bt.fit(synthetic(), ci="bootstrap", bootstrap_rounds=200)
    assert (boot["rank_low"] <= np.arange(1, 7)).all()
    assert (boot["rank_high"] >= np.arange(1, 7)).all()


def test_no_allocation_grows_with_the_square_of_the_cells():
    # 200 systems, 60,000 comparisons without contexts: about 60,000 (pair, outcome, weight)
    # pools and 120,000 cells. A dense pools x cells matrix would need 58 GB.
    rng = np.random.default_rng(5)
    n, k = 60_000, 200
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    frame = pd.DataFrame(
        {
            "system_a": a.astype(str),
            "system_b": b.astype(str),
            "winner": rng.choice(["a", "b", "tie"], n),
            "weight": rng.choice([1.0, 1.25, 1.5, 1.75, 2.0], n),
        }
    )
    tracemalloc.start()
    table = bt.fit(frame, ci="bootstrap", bootstrap_rounds=50)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(table) == k
    assert peak < 400e6
