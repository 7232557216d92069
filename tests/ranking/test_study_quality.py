"""The study's grade equals arena-hard-auto's definitions on the same bootstrap output.

The reference values were computed in a scratch folder with the functions of arena-hard-auto's
``notebook/benchmark_statistics.ipynb`` (``get_unique_overlapping_interval_pairs``, the
agreement-with-confidence loop with ``get_overlap``, ``calculate_predictions_and_labels`` and
scikit-learn's ``brier_score_loss``) applied to the intervals and bootstrap draws of the two
boards fitted here; none of its code is in the project."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ranking import bradley_terry, study_quality, study_targets

SYSTEMS = [f"m{i}" for i in range(9)]


def synthetic(seed: int, spread: float, n: int = 900) -> pd.DataFrame:
    """Comparisons from a Bradley–Terry model, 150 source conversations."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(-spread, spread, len(SYSTEMS))
    a = rng.integers(0, len(SYSTEMS), n)
    b = (a + rng.integers(1, len(SYSTEMS), n)) % len(SYSTEMS)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    u = rng.random(n)
    winner = np.where(u < 0.1, "tie", np.where(rng.random(n) < p, "a", "b"))
    return pd.DataFrame(
        {
            "system_a": np.asarray(SYSTEMS)[a],
            "system_b": np.asarray(SYSTEMS)[b],
            "winner": winner,
            "cluster": rng.integers(0, 150, n).astype(str),
        }
    )


def boards() -> dict[str, bradley_terry.Fit]:
    return {
        "human": bradley_terry.fit_detailed(synthetic(1, 1.2), ci="bootstrap", seed=0),
        "llm": bradley_terry.fit_detailed(synthetic(2, 0.9, 1500), ci="bootstrap", seed=0),
    }


# Computed with arena-hard-auto's notebook functions on boards() (see the module docstring).
REFERENCE = {
    "separability_human": 0.7222222222222222,
    "separability_llm": 0.6666666666666667,
    "agreement_llm_vs_human": 0.9038461538461539,  # over 26 pairs the human board separates
    "brier_llm_vs_human": 0.037302737104991116,
}


@pytest.fixture(scope="module")
def fitted():
    return boards()


def test_separability_equals_arena_hard(fitted):
    for name in ("human", "llm"):
        table = fitted[name].table
        value = study_quality.separability(table["ci_low"].tolist(), table["ci_high"].tolist())
        assert value == pytest.approx(REFERENCE[f"separability_{name}"], abs=1e-12)


def test_agreement_with_confidence_equals_arena_hard(fitted):
    value, pairs = study_quality.agreement_with_confidence(
        fitted["llm"].table, fitted["human"].table
    )
    assert pairs > 0
    assert value == pytest.approx(REFERENCE["agreement_llm_vs_human"], abs=1e-12)


def test_pair_rank_brier_equals_arena_hard(fitted):
    moments = pd.DataFrame.from_dict(
        study_quality.draw_moments(fitted["llm"].draws), orient="index"
    )
    value, pairs = study_quality.pair_rank_brier(moments, fitted["human"].table["elo"])
    assert pairs == math.comb(len(SYSTEMS), 2)
    assert value == pytest.approx(REFERENCE["brier_llm_vs_human"], abs=1e-9)


def test_touching_intervals_do_not_overlap_and_a_reversed_order_scores_zero():
    assert study_quality.overlapping_pairs([0, 1, 5], [1, 6, 7]) == (1, 3)
    board = pd.DataFrame({"ci_low": [0.0, 2.0], "ci_high": [1.0, 3.0]}, index=["x", "y"])
    reference = pd.DataFrame({"ci_low": [2.0, 0.0], "ci_high": [3.0, 1.0]}, index=["x", "y"])
    assert study_quality.agreement_with_confidence(board, reference) == (0.0, 1)
    assert study_quality.agreement_with_confidence(board, board) == (1.0, 1)
    wide = pd.DataFrame({"ci_low": [0.0, 0.5], "ci_high": [1.0, 3.0]}, index=["x", "y"])
    assert study_quality.agreement_with_confidence(wide, board) == (0.5, 1)


def _agreement_pair_by_pair(board, reference):
    """arena-hard's definition read literally, a pair at a time (what the arrays must equal)."""

    def bounds(table, system):
        return tuple(float(v) for v in table.loc[system, ["ci_low", "ci_high"]])

    def overlap(x, y):
        return max(0.0, min(x[1], y[1]) - max(x[0], y[0]))

    shared = [s for s in board.index if s in reference.index]
    count, total = 0.0, 0
    for a, b in itertools.combinations(shared, 2):
        score_a, score_b = bounds(board, a), bounds(board, b)
        ref_a, ref_b = bounds(reference, a), bounds(reference, b)
        if overlap(ref_a, ref_b) > 0:
            continue
        total += 1
        if overlap(score_a, score_b) > 0:
            count += 0.5
        elif (score_a < score_b and ref_a < ref_b) or (score_a > score_b and ref_a > ref_b):
            count += 1
    return (count / total if total else None), total


def _brier_pair_by_pair(moments, reference):
    shared = sorted(str(s) for s in moments.index if s in reference.index)
    errors = []
    for a, b in itertools.combinations(shared, 2):
        spread = math.sqrt(moments.loc[a, "var"] + moments.loc[b, "var"])
        difference = moments.loc[a, "mean"] - moments.loc[b, "mean"]
        if spread > 0:
            p_below = float(stats.norm(loc=difference, scale=spread).cdf(0.0))
        else:
            p_below = 1.0 if difference < 0 else 0.0 if difference > 0 else 0.5
        errors.append((float(reference[a] < reference[b]) - p_below) ** 2)
    return (float(np.mean(errors)) if errors else None), len(errors)


@pytest.mark.parametrize("seed", range(6))
def test_agreement_and_brier_over_every_pair_at_once_equal_the_pair_by_pair_definition(seed):
    # Intervals on a coarse grid, so that equal lows, touching intervals and identical
    # intervals occur; some systems only on one board; some variances zero.
    rng = np.random.default_rng(seed)
    names = [f"s{i:03d}" for i in range(60)]

    def table(systems):
        low = rng.integers(0, 30, len(systems)).astype(float)
        return pd.DataFrame(
            {"elo": low + 1, "ci_low": low, "ci_high": low + rng.integers(0, 6, len(systems))},
            index=systems,
        )

    board, reference = table(names[:55]), table(names[5:][::-1])
    assert study_quality.agreement_with_confidence(board, reference) == pytest.approx(
        _agreement_pair_by_pair(board, reference), abs=1e-15
    )
    moments = pd.DataFrame(
        {"mean": rng.integers(0, 5, 55).astype(float), "var": rng.choice([0.0, 0.5, 2.0], 55)},
        index=names[:55],
    )
    value, pairs = study_quality.pair_rank_brier(moments, reference["elo"])
    expected, expected_pairs = _brier_pair_by_pair(moments, reference["elo"])
    assert pairs == expected_pairs == math.comb(50, 2)
    assert value == pytest.approx(expected, abs=1e-12)


def test_agreement_and_brier_of_fewer_than_two_shared_systems_are_empty():
    one = pd.DataFrame({"elo": [1.0], "ci_low": [0.0], "ci_high": [2.0]}, index=["x"])
    assert study_quality.agreement_with_confidence(one, one) == (None, 0)
    moments = pd.DataFrame({"mean": [0.0], "var": [1.0]}, index=["x"])
    assert study_quality.pair_rank_brier(moments, one["elo"]) == (None, 0)


def test_judgments_needed_projects_the_target_from_the_interval_widths():
    # Two pairs: one separated now (factor 0.25), one needing 4x the judgments (gap 10,
    # margins 10 + 10).
    table = pd.DataFrame(
        {"elo": [1520.0, 1510.0, 1400.0], "ci_low": [1510.0, 1500.0, 1390.0],
         "ci_high": [1530.0, 1520.0, 1410.0]},
        index=["a", "b", "c"],
    )  # fmt: skip
    factors = study_quality.separation_factors(table)
    assert factors == pytest.approx([(20 / 120) ** 2, (20 / 110) ** 2, 4.0])
    assert study_targets.judgments_needed(factors, 1000, 0.6)["additional"] == 0
    need = study_targets.judgments_needed(factors, 1000, 1.0)
    assert (need["needed"], need["additional"]) == (4000, 3000)
    tied = table.assign(elo=[1510.0, 1510.0, 1400.0])
    assert (
        study_targets.judgments_needed(study_quality.separation_factors(tied), 10, 1.0)["needed"]
        is None
    )


def test_split_half_is_high_for_a_clear_order_and_low_for_coin_flips():
    def halves(comparisons: pd.DataFrame) -> dict:
        def fit(half: np.ndarray) -> pd.Series:
            return bradley_terry.fit(comparisons[half], ci=None)["elo"]

        return study_quality.split_half(comparisons, fit, splits=5)

    clear, flat = halves(synthetic(3, 2.0, 3000)), halves(synthetic(3, 0.0, 3000))
    assert clear["value"] > 0.95
    assert flat["value"] < 0.6


def test_the_split_halfs_fast_fit_equals_the_fit_of_the_rows_it_keeps():
    """The refit fits each half from one encoding (bradley_terry.elo_of_rows): the same Elo as
    fitting the half's rows, and a system the half does not compare has none."""
    comparisons = synthetic(5, 1.0, 2000)
    keep = np.random.default_rng(1).random(len(comparisons)) < 0.5
    keep &= ~((comparisons["system_a"] == "m4") | (comparisons["system_b"] == "m4")).to_numpy()
    fast = bradley_terry.elo_of_rows(bradley_terry.encode(comparisons), keep)
    slow = bradley_terry.fit(comparisons[keep], ci=None)["elo"]
    assert "m4" not in fast.index
    pd.testing.assert_series_equal(
        fast.sort_index(), slow.sort_index(), check_names=False, check_index_type=False, rtol=1e-9
    )
