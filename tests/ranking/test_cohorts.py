"""Cohort boards and between-cohort agreement, checked against independent computations."""

from __future__ import annotations

import itertools
import math

import evalica
import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from sklearn.metrics import cohen_kappa_score

from ranking import board, cohorts

SYSTEMS = ["alpha", "beta", "gamma", "delta", "eps"]
# Clinicians and the crowd rank the systems differently (gamma is the clinicians' favourite).
TRUE = {
    "crowd": {"alpha": 1.0, "beta": 0.5, "gamma": 0.0, "delta": -0.5, "eps": -1.0},
    "clinician": {"alpha": 0.2, "beta": -0.6, "gamma": 1.2, "delta": 0.0, "eps": -0.8},
}
PARAMS = board.params_resolve("default")
ELO = 400 / math.log(10)


def synthetic(seed: int = 1, items: int = 120, raters: int = 6) -> pd.DataFrame:
    """Items judged by three raters of each cohort: a / b with strength 1-2, or a tie."""
    rng = np.random.default_rng(seed)
    rows = []
    pairs = list(itertools.combinations(SYSTEMS, 2))
    for item in range(items):
        sa, sb = pairs[item % len(pairs)]
        for cohort, truth in TRUE.items():
            for r in rng.choice(raters, 3, replace=False):
                p = 1 / (1 + math.exp(-(truth[sa] - truth[sb])))
                u = rng.random()
                winner = "tie" if u < 0.12 else ("a" if rng.random() < p else "b")
                rows.append(
                    {
                        "id": len(rows) + 1,
                        "item": item,
                        "context": item // 2,
                        "system_a": sa,
                        "system_b": sb,
                        "winner": winner,
                        "strength": None if winner == "tie" else float(rng.integers(1, 3)),
                        "strength_max": 2.0,
                        "judge": f"{cohort}-{r}",
                        "judge_kind": "human",
                        "cohort": cohort,
                    }
                )
    llm = dict(rows[0], id=len(rows) + 1, judge="judge-gpt", judge_kind="llm", cohort=None)
    return pd.DataFrame([*rows, llm])


def scipy_fit(frame: pd.DataFrame) -> pd.Series:
    """Bradley–Terry by direct maximum likelihood (scipy), ties half a win, weights as the
    board's "normalized" scheme: an implementation that shares no code with ranking/."""
    names = sorted(set(frame["system_a"]) | set(frame["system_b"]))
    index = {name: i for i, name in enumerate(names)}
    a = frame["system_a"].map(index).to_numpy()
    b = frame["system_b"].map(index).to_numpy()
    y = frame["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    s = frame["strength"].astype(float).to_numpy()
    w = np.where(np.isnan(s), 1.0, s)  # 1 "slightly" -> 1, 2 "significantly" -> 2; ties 1

    def loss(free):
        theta = np.concatenate([[0.0], free])
        d = theta[a] - theta[b]
        return -(w * (y * -np.logaddexp(0, -d) + (1 - y) * -np.logaddexp(0, d))).sum()

    free = optimize.minimize(loss, np.zeros(len(names) - 1), method="BFGS", tol=1e-10).x
    theta = np.concatenate([[0.0], free])
    return pd.Series(ELO * (theta - theta.mean()) + 1500, index=names)


def evalica_fit(frame: pd.DataFrame) -> pd.Series:
    winners = frame["winner"].map(
        {"a": evalica.Winner.X, "b": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    )
    s = frame["strength"].astype(float)
    result = evalica.bradley_terry(
        frame["system_a"].tolist(),
        frame["system_b"].tolist(),
        winners.tolist(),
        weights=s.fillna(1.0).tolist(),
        tolerance=1e-12,
        limit=100_000,
    )
    log = np.log(result.scores)
    return ELO * (log - log.mean()) + 1500


@pytest.mark.parametrize("cohort", ["crowd", "clinician"])
def test_each_cohort_board_equals_an_independent_fit_of_its_judgments(cohort):
    frame = synthetic()
    table, warnings = cohorts.cohort_board(cohorts.split(frame)[cohort], PARAMS)
    subset = frame[(frame["cohort"] == cohort) & (frame["judge_kind"] == "human")]
    for reference in (scipy_fit(subset), evalica_fit(subset)):
        assert set(reference.index) == set(table.index)
        assert np.abs(table["elo"] - reference.reindex(table.index)).max() < 0.5
    assert warnings == []


def test_cohort_boards_differ_where_the_cohorts_disagree():
    section = cohorts.cohort_section(
        synthetic(), PARAMS, cohorts=["crowd", "clinician", "student"], min_verdicts=2
    )
    top = {entry["cohort"]: entry["systems"][0]["system"] for entry in section["cohorts"][:2]}
    assert top == {"crowd": "alpha", "clinician": "gamma"}
    student = section["cohorts"][2]
    assert student["n_judgments"] == 0 and student["systems"] == []
    # Only the two cohorts with judgments are compared; LLM judges belong to none.
    assert [(row["left"], row["right"]) for row in section["between"]] == [("crowd", "clinician")]
    assert sum(entry["n_judgments"] for entry in section["cohorts"]) == len(synthetic()) - 1


def test_between_cohort_agreement_matches_sklearn_krippendorff_and_scipy():
    frame = synthetic()
    parts = cohorts.split(frame, ["crowd", "clinician"])
    boards = {label: cohorts.cohort_board(part, PARAMS)[0] for label, part in parts.items()}
    result = cohorts.between("crowd", "clinician", parts, boards, min_verdicts=2)

    def plurality(part: pd.DataFrame) -> pd.Series:
        counts = part.groupby(["item", "winner"], observed=True).size().unstack(fill_value=0)
        top = counts.max(axis=1)
        unique = (counts == top.to_numpy()[:, None]).sum(axis=1) == 1
        return counts.idxmax(axis=1)[unique & (counts.sum(axis=1) >= 2)]

    crowd, clinician = plurality(parts["crowd"]), plurality(parts["clinician"])
    common = crowd.index.intersection(clinician.index)
    x, y = crowd[common].to_numpy(), clinician[common].to_numpy()
    assert result.n_items == len(common) > 50
    assert result.same_direction == pytest.approx((x == y).mean())
    decisive = (x != "tie") & (y != "tie")
    assert result.n_no_ties == decisive.sum()
    assert result.same_direction_no_ties == pytest.approx((x[decisive] == y[decisive]).mean())
    # Every pair counted as stored and the other way round (a and b swapped).
    turn = {"a": "b", "b": "a", "tie": "tie"}
    x = np.concatenate([x, [turn[v] for v in x]])
    y = np.concatenate([y, [turn[v] for v in y]])
    assert result.cohen_kappa == pytest.approx(cohen_kappa_score(x, y))
    code = {"a": 0, "tie": 1, "b": 2}
    reliability = np.array([[code[v] for v in x], [code[v] for v in y]], dtype=float)
    assert result.krippendorff_alpha == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="ordinal")
    )
    rho = stats.spearmanr(boards["crowd"]["elo"], boards["clinician"]["elo"][boards["crowd"].index])
    assert result.elo_spearman == pytest.approx(rho.statistic)
    assert result.n_systems == 5


def test_cohorts_who_agree_completely_have_kappa_and_alpha_one():
    frame = synthetic()
    twin = frame[frame["cohort"] == "crowd"].assign(cohort="twin", judge=lambda f: "t" + f["judge"])
    both = pd.concat([frame, twin])
    parts = cohorts.split(both, ["crowd", "twin"])
    boards = {label: cohorts.cohort_board(part, PARAMS)[0] for label, part in parts.items()}
    result = cohorts.between("crowd", "twin", parts, boards, min_verdicts=2)
    assert result.same_direction == 1.0
    assert result.cohen_kappa == pytest.approx(1.0)
    assert result.krippendorff_alpha == pytest.approx(1.0)
    assert result.elo_spearman == pytest.approx(1.0)


def test_no_common_items_gives_nulls_not_errors():
    frame = synthetic()
    crowd = frame[(frame["cohort"] == "crowd") & (frame["item"] < 60)]
    clinician = frame[(frame["cohort"] == "clinician") & (frame["item"] >= 60)]
    parts = {"crowd": crowd, "clinician": clinician}
    boards = {label: cohorts.cohort_board(part, PARAMS)[0] for label, part in parts.items()}
    row = cohorts.between("crowd", "clinician", parts, boards).as_dict()
    assert row["n_items"] == 0
    assert row["same_direction"] is None and row["cohen_kappa"] is None
    assert row["krippendorff_alpha"] is None
