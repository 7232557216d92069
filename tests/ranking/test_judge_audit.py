"""The evaluator table against planted judges whose every rate is known by construction, and its
measures against hand-computed values (`ranking/judge_audit.py`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ranking import judge_audit as audit

PAIRS = 40


def _study() -> tuple[pd.DataFrame, pd.DataFrame]:
    """40 pairs (items), three human raters each agreeing with the truth: reply a is better on
    the even pairs, b on the odd ones; reply a is the longer one on the first half. Four LLM
    judges see every pair in both orders: ``truthful`` copies the truth, ``first`` always picks
    the reply shown first, ``longer`` always the longer reply, ``vendor`` (family "acme") always
    the reply of its own family, which system ``s-acme`` is (it is reply a on every pair)."""
    rows = []
    for item in range(PAIRS):
        truth = "a" if item % 2 == 0 else "b"
        longer = "a" if item < PAIRS // 2 else "b"
        base = {"item": item, "system_a": "s-acme", "system_b": "s-other", "cluster": str(item)}
        for rater in range(3):
            rows.append(
                base
                | {
                    "judge": f"r{rater}",
                    "judge_kind": "human",
                    "winner": truth,
                    "shown_left": "a" if rater % 2 else "b",
                }
            )
        for shown in ("a", "b"):
            llm = base | {"judge_kind": "llm", "shown_left": shown}
            rows.append(llm | {"judge": "truthful", "winner": truth})
            rows.append(llm | {"judge": "first", "winner": shown})
            rows.append(llm | {"judge": "longer", "winner": longer})
            rows.append(llm | {"judge": "vendor", "winner": "a"})
    lengths = pd.DataFrame(
        {
            "words_a": [120 if item < PAIRS // 2 else 40 for item in range(PAIRS)],
            "words_b": [40 if item < PAIRS // 2 else 120 for item in range(PAIRS)],
        },
        index=range(PAIRS),
    )
    return pd.DataFrame(rows), lengths


@pytest.fixture(scope="module")
def table() -> dict[str, dict]:
    raw, lengths = _study()
    costs = pd.DataFrame(
        {"verdicts": [80, 80], "cost": [0.40, 0.0], "latency_ms": [160_000, 0]},
        index=["truthful", "first"],
    )
    rows = audit.judge_audit(
        raw,
        lengths=lengths,
        system_families={"s-acme": "acme", "s-other": "other"},
        judge_families={"vendor": "acme", "truthful": "other"},
        costs=costs,
        n_boot=200,
    )
    assert [row["judge"] for row in rows] == [
        "first",
        "longer",
        "truthful",
        "vendor",
        audit.ENSEMBLE,
    ]
    assert all(tuple(row) == audit.ROW_FIELDS for row in rows)
    return {row["judge"]: row for row in rows}


def test_a_judge_that_copies_the_humans_agrees_fully_and_is_calibrated(table):
    row = table["truthful"]
    assert row["n"] == 2 * PAIRS
    assert row["agreement"] == row["agreement_no_ties"] == 1.0
    assert row["agreement_ci_low"] == row["agreement_ci_high"] == 1.0
    assert row["first_shown_rate"] == 0.5 and row["flip_rate"] == 0.0
    assert row["ece"] == 0.0 and row["brier"] == 0.0
    # it picks the longer reply exactly where the truth is the longer one: half the pairs
    assert row["prefer_longer"] == 0.5 == row["humans_prefer_longer"]
    # 80 verdicts for $0.40 and 160 s of provider time
    assert row["cost_per_1000"] == pytest.approx(5.0)
    assert row["seconds_per_1000"] == pytest.approx(2000.0)


def test_a_judge_that_picks_the_first_reply_is_found_by_its_first_shown_and_flip_rates(table):
    row = table["first"]
    assert row["first_shown_rate"] == 1.0
    assert row["flip_rate"] == 1.0  # each pair judged a then b
    assert row["agreement"] == 0.5  # right in one order of every pair
    # its vote share is 1/2 on every pair: calibrated on average (ECE 0), never sharp (Brier 1/4)
    assert row["ece"] == pytest.approx(0.0) and row["brier"] == pytest.approx(0.25)
    assert row["cost_per_1000"] == 0.0 and row["seconds_per_1000"] is None


def test_length_and_self_family_bias_are_measured_beside_the_humans(table):
    assert table["longer"]["prefer_longer"] == 1.0
    assert table["longer"]["humans_prefer_longer"] == 0.5
    assert table["longer"]["flip_rate"] == 0.0
    assert table["vendor"]["self_family_rate"] == 1.0
    assert table["truthful"]["self_family_rate"] == 0.5  # its own family is s-other, reply b
    assert table["first"]["self_family_rate"] is None  # no family known for it
    assert table["longer"]["cost_per_1000"] is None  # no run recorded for it


def test_the_ensemble_row_votes_the_llm_majority_per_pair(table):
    row = table[audit.ENSEMBLE]
    assert row["n"] == 4 * 2 * PAIRS
    # Per pair 8 votes: truthful 2× the truth, first one a and one b, longer 2× the longer
    # reply, vendor 2× a. Truth and length agree on half the pairs (majority right, 7-1 or 5-3);
    # where they disagree the majority is a (5-3): right when the truth is a, wrong when b.
    assert row["agreement"] == 0.75
    assert row["first_shown_rate"] == pytest.approx((0.5 + 1.0 + 0.5 + 0.5) / 4)


def test_a_cohort_is_held_out_from_the_majority_it_is_compared_with():
    human = pd.DataFrame(
        {
            "item": [1, 1, 1, 2, 2, 2],
            "winner": ["a", "a", "b", "tie", "tie", "a"],
        }
    )
    held_out = audit.held_out_majority(human, min_human=2)
    # item 1: the b voter faces a, a (majority a); each a voter faces a, b (no strict plurality)
    # item 2: each tie voter faces tie, a (none); the a voter faces tie, tie (tie)
    assert held_out.where(held_out.notna(), None).tolist() == [None, None, "a", None, None, "tie"]
    assert audit.held_out_majority(human, min_human=3).isna().all()


def test_cohort_rows_are_computed_against_the_other_raters():
    raw, lengths = _study()
    contrarian = raw[(raw["judge"] == "r0")].assign(
        judge="contrarian", winner=lambda f: f["winner"].map({"a": "b", "b": "a"})
    )
    frame = pd.concat([raw[raw["judge_kind"] == "human"], contrarian], ignore_index=True)
    cohorts = frame["judge"].map(lambda judge: "odd" if judge == "contrarian" else "main")
    rows = {
        row["judge"]: row
        for row in audit.judge_audit(frame, lengths=lengths, cohorts=cohorts, n_boot=100)
    }
    assert rows["odd"]["kind"] == "cohort" and rows["odd"]["agreement"] == 0.0
    assert rows["main"]["agreement"] == 1.0
    assert rows["odd"]["flip_rate"] is None and rows["odd"]["cost_per_1000"] is None


def _ece_reference(q: np.ndarray, y: np.ndarray, bins: int) -> float:
    """The textbook definition, written apart: equal-width bins [k/B, (k+1)/B), 1.0 in the last."""
    total = 0.0
    for k in range(bins):
        low, high = k / bins, (k + 1) / bins
        inside = (q >= low) & ((q < high) if k < bins - 1 else (q <= high))
        if inside.any():
            total += inside.sum() / len(q) * abs(q[inside].mean() - y[inside].mean())
    return total


@pytest.mark.parametrize("seed", range(5))
def test_expected_calibration_error_equals_the_textbook_definition(seed):
    rng = np.random.default_rng(seed)
    q = np.round(rng.random(300), 3)
    q[:5] = [0.0, 1.0, 0.5, 0.1, 0.9]
    y = (rng.random(300) < q).astype(float)
    assert audit.expected_calibration_error(q, y) == pytest.approx(_ece_reference(q, y, 10))


def test_calibration_by_hand():
    # shares 0.9, 0.9, 0.2 against majorities a, b, b: Brier (0.01 + 0.81 + 0.04) / 3;
    # bins: {0.9, 0.9} mean 0.9 vs 0.5 (2/3 · 0.4), {0.2} 0.2 vs 0 (1/3 · 0.2)
    result = audit.calibration_pairs(np.array([0.9, 0.9, 0.2]), np.array(["a", "b", "b"], object))
    assert result["brier"] == pytest.approx(0.86 / 3)
    assert result["ece"] == pytest.approx(2 / 3 * 0.4 + 1 / 3 * 0.2)
    assert audit.calibration_pairs(np.array([0.5]), np.array(["tie"], object)) == {
        "ece": None,
        "brier": None,
    }


def _held_out_by_crosstab(human, min_human):
    """The held-out majority as pandas' crosstab defines it (what the counts by codes equal)."""
    winner = human["winner"].astype(object)
    counts = pd.crosstab(human["item"], winner).reindex(columns=["a", "tie", "b"], fill_value=0)
    others = counts.reindex(human["item"].to_numpy()).to_numpy(dtype=float)
    others = others - np.stack([(winner == c).to_numpy() for c in ("a", "tie", "b")], axis=1)
    ordered = np.sort(others, axis=1)
    strict = (ordered[:, -1] > ordered[:, -2]) & (others.sum(axis=1) >= max(min_human, 1))
    top = np.asarray(["a", "tie", "b"], dtype=object)[others.argmax(axis=1)]
    top[~strict] = None
    return pd.Series(top, index=human.index).astype(object)


@pytest.mark.parametrize("seed", range(5))
def test_the_held_out_majority_by_codes_equals_the_crosstab_one(seed):
    rng = np.random.default_rng(seed)
    n = 400
    human = pd.DataFrame(
        {
            "item": rng.integers(1000, 1060, n),
            "winner": pd.Categorical(
                rng.choice(["a", "tie", "b", None], n, p=[0.4, 0.2, 0.35, 0.05]),
                categories=["a", "b", "tie"],
            ),
        },
        index=rng.permutation(np.arange(5000, 5000 + n)),
    )
    for min_human in (1, 2, 3):
        pd.testing.assert_series_equal(
            audit.held_out_majority(human, min_human),
            _held_out_by_crosstab(human, min_human),
        )
    empty = human.iloc[:0]
    assert audit.held_out_majority(empty, 2).empty
