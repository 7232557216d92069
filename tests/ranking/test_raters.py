"""The rater model against crowd-kit (the reference: its NoisyBradleyTerry likelihood), the
sequential outlier test's level and power, and the simulation of issue's claim: with 10 % of
the raters answering at random, the reliability-weighted board ranks the systems as well as a
clean study."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import NoisyBradleyTerry
from scipy import optimize, stats
from scipy.special import expit

from ranking import bradley_terry, raters

ITEMS = ["i0", "i1", "i2", "i3", "i4", "i5"]


def crowd(seed: int = 0, n: int = 3000) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """Comparisons drawn from the noisy Bradley–Terry model itself."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1.5, 1.5, len(ITEMS))
    workers = [f"w{k:02d}" for k in range(12)]
    skill = np.linspace(0.3, 0.85, len(workers))
    bias = np.linspace(0.2, 0.8, len(workers))
    w = rng.integers(0, len(workers), n)
    left = rng.integers(0, len(ITEMS), n)
    right = (left + rng.integers(1, len(ITEMS), n)) % len(ITEMS)
    p_left = skill[w] * expit(strength[left] - strength[right]) + (1 - skill[w]) * bias[w]
    chose_left = rng.random(n) < p_left
    frame = pd.DataFrame(
        {
            "worker": np.asarray(workers)[w],
            "left": np.asarray(ITEMS)[left],
            "right": np.asarray(ITEMS)[right],
        }
    )
    frame["label"] = np.where(chose_left, frame["left"], frame["right"])
    return frame, pd.Series(skill, index=workers), pd.Series(bias, index=workers)


def ours(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rater": frame["worker"],
            "left": frame["left"],
            "right": frame["right"],
            "y": (frame["label"] == frame["left"]).astype(float),
        }
    )


def crowdkit_problem(frame: pd.DataFrame):
    """crowd-kit's own encoding of the data (as NoisyBradleyTerry.fit does it)."""
    labels, coded = np.unique(frame[["left", "right", "label"]].to_numpy(), return_inverse=True)
    workers, worker_codes = np.unique(frame["worker"].to_numpy(), return_inverse=True)
    return coded.reshape(-1, 3) + 1, worker_codes, len(labels), len(workers)


def test_the_log_likelihood_is_crowd_kits():
    frame, _, _ = crowd()
    data, workers, n_items, n_workers = crowdkit_problem(frame)
    verdicts = ours(frame)
    left, right, items = raters._codes(verdicts["left"], verdicts["right"])
    rater_codes, _ = pd.factorize(verdicts["rater"], sort=True)
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.normal(0, 1, n_items + 2 * n_workers)
        value, _grad = raters.negative_log_likelihood(
            x, left, right, rater_codes, verdicts["y"].to_numpy(), np.ones(len(frame), bool),
            np.ones(len(frame)), n_items, n_workers,
        )  # fmt: skip
        reference = NoisyBradleyTerry._compute_log_likelihood(
            np.concatenate([[0.0], x]), data, workers, n_items, n_workers, 0.0
        )
        assert value == pytest.approx(reference, rel=1e-10)


def test_the_gradient_is_exact():
    frame, _, _ = crowd(n=400)
    verdicts = ours(frame)
    left, right, _ = raters._codes(verdicts["left"], verdicts["right"])
    codes, names = pd.factorize(verdicts["rater"], sort=True)
    args = (left, right, codes, verdicts["y"].to_numpy(), np.ones(len(frame), bool),
            np.ones(len(frame)), len(ITEMS), len(names), 0.3, 0.1, 0.7)  # fmt: skip
    x = np.random.default_rng(2).normal(0, 1, len(ITEMS) + 2 * len(names))
    error = optimize.check_grad(
        lambda v: raters.negative_log_likelihood(v, *args)[0],
        lambda v: raters.negative_log_likelihood(v, *args)[1],
        x,
    )
    assert error < 1e-4


def test_the_fit_is_the_maximum_of_crowd_kits_likelihood():
    frame, skill, bias = crowd()
    data, workers, n_items, n_workers = crowdkit_problem(frame)
    # The reference: crowd-kit's objective maximised with numerical gradients.
    start = np.concatenate([np.zeros(1 + n_items + n_workers), np.full(n_workers, 2.0)])
    reference = optimize.minimize(
        NoisyBradleyTerry._compute_log_likelihood,
        start,
        args=(data, workers, n_items, n_workers, 0.0),
        method="L-BFGS-B",
        options={"maxiter": 5000, "ftol": 1e-14, "gtol": 1e-8, "maxfun": 200000},
    )
    model = raters.fit_rater_model(ours(frame), item_prior=0.0, rater_prior=0.0, bias_prior=0.0)
    ref_bias = expit(reference.x[1 + n_items : 1 + n_items + n_workers])
    ref_skill = expit(reference.x[1 + n_items + n_workers :])
    assert model.reliability.to_numpy() == pytest.approx(ref_skill, abs=0.01)
    assert model.position_bias.to_numpy() == pytest.approx(ref_bias, abs=0.01)
    ref_scores = reference.x[1 : 1 + n_items]
    assert (model.scores - model.scores.mean()).to_numpy() == pytest.approx(
        ref_scores - ref_scores.mean(), abs=0.01
    )
    assert -model.log_likelihood == pytest.approx(reference.fun, abs=1e-3)
    # ... and the estimates recover the simulated raters.
    assert stats.spearmanr(model.reliability, skill).statistic > 0.9
    unreliable = skill < 0.6  # a reliable rater's bias shows in few of their verdicts
    assert np.abs(model.position_bias - bias)[unreliable].max() < 0.15
    # crowd-kit's own fit stops short of that maximum (its analytic gradient for the raters'
    # parameters is misindexed), so it is a reference for the model, not for the optimum.
    fitted = NoisyBradleyTerry(n_iter=1000).fit(frame)
    x = np.concatenate(
        [[0.0], np.log(fitted.scores_ / (1 - fitted.scores_)).reindex(ITEMS).to_numpy(),
         np.log(fitted.biases_ / (1 - fitted.biases_)).to_numpy(),
         np.log(fitted.skills_ / (1 - fitted.skills_)).to_numpy()]
    )  # fmt: skip
    theirs = NoisyBradleyTerry._compute_log_likelihood(x, data, workers, n_items, n_workers, 0.0)
    assert -model.log_likelihood <= theirs + 1e-6


# --------------------------------------------------------------------------- a study


def study(seed: int, *, noisy_share: float = 0.1, systems: int = 12, contexts: int = 200):
    """Human verdicts on 5-point scale: each context's replies vary around their system's
    strength (the paper's spread); ``noisy_share`` of the raters answer uniformly at random."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(-0.78, 0.78, systems)
    rng.shuffle(theta)
    names = [f"s{i:02d}" for i in range(systems)]
    n_raters = 40
    noisy = set(rng.choice(n_raters, round(noisy_share * n_raters), replace=False).tolist())
    rows: list[tuple[object, ...]] = []
    for context in range(contexts):
        quality = theta + rng.normal(0, 0.6, systems)
        for _ in range(8):
            i, j = rng.choice(systems, 2, replace=False)
            item = len(rows)
            for r in rng.choice(n_raters, 5, replace=False):
                if r in noisy:
                    v = int(rng.integers(-2, 3))
                elif rng.random() < 0.15:
                    v = 0
                else:
                    p = expit(quality[i] - quality[j])
                    v = (2 if rng.random() < abs(p - 0.5) * 2 + 0.2 else 1) * (
                        1 if rng.random() < p else -1
                    )
                rows.append((item, context, names[i], names[j], v, f"r{r:02d}", r in noisy))
    frame = pd.DataFrame(
        rows, columns=["item", "context", "system_a", "system_b", "v", "judge", "noisy"]
    )
    frame["id"] = np.arange(1, len(frame) + 1)
    frame["winner"] = np.where(frame["v"] > 0, "a", np.where(frame["v"] < 0, "b", "tie"))
    frame["strength"] = frame["v"].abs().where(frame["v"] != 0)
    frame["strength_max"] = 2
    frame["judge_kind"] = "human"
    frame["shown_left"] = np.where(rng.random(len(frame)) < 0.5, "a", "b")
    return frame, pd.Series(theta, index=names)


def board_order(frame: pd.DataFrame, factor: pd.Series | None = None) -> pd.Series:
    weight = bradley_terry.strength_weight(
        frame["strength"].astype(float), frame["strength_max"].astype(float), "normalized",
        winner=frame["winner"],
    )  # fmt: skip
    if factor is not None:
        weight = weight * factor
    comparisons = frame[["system_a", "system_b", "winner"]].assign(weight=weight)
    return bradley_terry.fit(comparisons[comparisons["weight"] > 0], ci=None)["theta"]


def spearman(theta: pd.Series, truth: pd.Series) -> float:
    return float(stats.spearmanr(theta.reindex(truth.index), truth).statistic)


def test_random_raters_get_low_reliability_and_the_weighted_board_keeps_the_clean_order():
    clean, weighted, plain, gaps = [], [], [], []
    for seed in range(6):
        frame, truth = study(seed)
        honest, _ = study(seed, noisy_share=0.0)
        quality = raters.rater_quality(frame)
        noisy = frame.loc[frame["noisy"], "judge"].unique()
        gaps.append(quality.loc[~quality.index.isin(noisy), "reliability"].min()
                    - quality.loc[noisy, "reliability"].mean())  # fmt: skip
        factor = raters.judgment_weights(frame, quality, "reliability")

        clean.append(spearman(board_order(honest), truth))
        weighted.append(spearman(board_order(frame, factor), truth))
        plain.append(spearman(board_order(frame), truth))
    assert min(gaps) > 0.2  # every honest rater above the random raters' mean
    assert np.mean(weighted) >= np.mean(clean) - 0.01
    assert np.mean(weighted) >= np.mean(plain) - 0.005


def test_the_outlier_test_holds_its_level_and_finds_raters_who_answer_at_random():
    flagged_honest = flagged_noisy = honest_total = noisy_total = 0
    for seed in range(4):
        frame, _ = study(seed, noisy_share=0.25)
        tests = raters.outlier_tests(frame)
        noisy = set(frame.loc[frame["noisy"], "judge"])
        for judge, row in tests.iterrows():
            if judge in noisy:
                noisy_total += 1
                flagged_noisy += bool(row["outlier"])
            else:
                honest_total += 1
                flagged_honest += bool(row["outlier"])
    assert flagged_honest / honest_total <= 0.08
    assert flagged_noisy / noisy_total >= 0.15


def test_p_values_of_a_rater_like_the_others_are_uniform():
    frame, _ = study(0, noisy_share=0.0)
    p = raters.verdict_p_values(frame).dropna()
    assert stats.kstest(p, "uniform").pvalue > 0.01


def test_weights_leave_llm_and_unknown_judges_alone():
    frame = pd.DataFrame(
        {"judge": ["r1", "r2", "gpt", "new"], "judge_kind": ["human", "human", "llm", "human"]}
    )
    quality = pd.DataFrame(
        {"reliability": [0.9, 0.2], "outlier": [False, True]}, index=["r1", "r2"]
    )
    factor = raters.judgment_weights(frame, quality, "reliability")
    assert factor.tolist() == [0.9, 0.2, 1.0, 1.0]
    assert raters.judgment_weights(frame, quality, "no-outliers").tolist() == [1, 0, 1, 1]
    assert raters.judgment_weights(frame, quality, "none") is None
    with pytest.raises(ValueError, match="unknown rater weights"):
        raters.judgment_weights(frame, quality, "majority")


def test_the_left_bias_of_a_rater_who_always_clicks_left_is_found():
    frame, _ = study(1, noisy_share=0.0, contexts=120)
    lazy = frame["judge"] == "r00"
    frame.loc[lazy, "winner"] = frame.loc[lazy, "shown_left"]
    frame.loc[lazy, "strength"] = 1
    quality = raters.rater_quality(frame)
    assert quality.at["r00", "position_bias"] > 0.9
    assert quality.at["r00", "reliability"] < 0.3
    assert quality.at["r00", "left_rate"] == 1.0
    assert quality.drop("r00")["position_bias"].between(0.25, 0.75).all()
