"""One rule for which verdicts count (ranking.verdicts), as the fit and agreement apply it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ranking import agreement, board, verdicts


def frame(rows) -> pd.DataFrame:
    """rows: (item, judge, kind, shown_left, winner[, strength])."""
    data = pd.DataFrame(
        [tuple(r) + (None,) * (6 - len(r)) for r in rows],
        columns=["item", "judge", "judge_kind", "shown_left", "winner", "strength"],
    )
    return data.assign(
        system_a="X",
        system_b="Y",
        strength_max=np.where(data["judge_kind"] == "llm", 5.0, 2.0),
        context=data["item"].map(lambda i: f"c{i}"),
        judge_family=np.where(data["judge_kind"] == "llm", "gpt", None),
    )


SWAPS = [
    # Pair 1: the LLM judge agrees with itself across the two orders; pair 2 it does not.
    (1, "llm-1", "llm", "a", "a", 4),
    (1, "llm-1", "llm", "b", "a", 2),
    (2, "llm-1", "llm", "a", "a", 5),
    (2, "llm-1", "llm", "b", "b", 3),
]


def test_both_orders_count_as_two_votes_and_neither_is_dropped():
    counted = verdicts.counted(frame(SWAPS), verdicts.VerdictRule(llm_games="both"))
    assert len(counted) == 4


def test_consistent_makes_one_verdict_per_pair_a_disagreement_a_tie():
    counted = verdicts.counted(frame(SWAPS), verdicts.VerdictRule(llm_games="consistent"))
    by_item = counted.set_index("item")
    assert len(counted) == 2
    assert by_item.loc[1, "winner"] == "a" and by_item.loc[1, "strength"] == 2  # the smaller
    assert by_item.loc[2, "winner"] == "tie" and np.isnan(by_item.loc[2, "strength"])


def test_a_human_counts_once_per_pair_with_their_latest_verdict():
    rows = [
        (1, "r1", "human", "a", "a"),
        (1, "r1", "human", "b", "b"),
        (1, "r2", "human", "a", "a"),
    ]
    counted = verdicts.counted(frame(rows), verdicts.VerdictRule())
    assert sorted(counted["winner"]) == ["a", "b"]  # r1's last (b) and r2's


def test_the_rule_is_checked():
    with pytest.raises(ValueError, match="llm_games"):
        verdicts.VerdictRule(llm_games="last")
    with pytest.raises(ValueError, match="human_share"):
        verdicts.VerdictRule(human_share=1.0)
    with pytest.raises(ValueError, match="human_min_verdicts"):
        verdicts.VerdictRule(human_min_verdicts=0)
    rule = verdicts.VerdictRule(llm_games="consistent", human_share=0.25)
    assert verdicts.VerdictRule.from_dict(rule.as_dict() | {"unknown": 1}) == rule


def test_sources_share_the_weight_as_the_rule_says_whatever_their_counts():
    kinds = pd.Series(["human"] * 2 + ["llm"] * 8)
    weight = np.ones(10)
    factors = verdicts.source_factors(kinds, weight, verdicts.VerdictRule(human_share=0.5))
    scaled = weight * factors
    assert scaled[:2].sum() == pytest.approx(5.0) and scaled[2:].sum() == pytest.approx(5.0)
    assert scaled.sum() == pytest.approx(10.0)  # the board's total weight is unchanged
    none = verdicts.source_factors(kinds, weight, verdicts.VerdictRule(human_share=None))
    assert (none == 1.0).all()
    only_llm = verdicts.source_factors(pd.Series(["llm"] * 3), np.ones(3), verdicts.VerdictRule())
    assert (only_llm == 1.0).all()


def test_the_combined_board_gives_humans_their_share():
    # Two human verdicts for X against twenty LLM verdicts for Y. By count, Y wins 20 to 2;
    # by source (half each), the two sources cancel out.
    rows = [(i, f"r{i}", "human", "a", "a") for i in range(2)]
    rows += [(10 + i, f"llm-{i}", "llm", "a", "b") for i in range(20)]
    judgments = frame(rows).assign(strength=np.nan)
    counted = board.comparisons_from_judgments(
        judgments, weights="none", rule=verdicts.VerdictRule(), combined="by_source"
    )
    x_share = counted.loc[counted["winner"] == "a", "weight"].sum() / counted["weight"].sum()
    assert x_share == pytest.approx(0.5)
    by_count = board.comparisons_from_judgments(judgments, weights="none", combined="by_count")
    assert by_count.loc[by_count["winner"] == "a", "weight"].sum() == 2


# --------------------------------------------------------------------------- agreement


def agreement_frame() -> pd.DataFrame:
    rows = [
        # Pair 1: humans say a (2 of 3); the LLM says a in both orders.
        (1, "r1", "human", "a", "a"),
        (1, "r2", "human", "a", "a"),
        (1, "r3", "human", "a", "b"),
        (1, "llm-1", "llm", "a", "a", 3),
        (1, "llm-1", "llm", "b", "a", 3),
        # Pair 2: humans tie (2 of 2); the LLM says b, then a: no LLM majority.
        (2, "r1", "human", "a", "tie"),
        (2, "r2", "human", "a", "tie"),
        (2, "llm-1", "llm", "a", "b", 2),
        (2, "llm-1", "llm", "b", "a", 2),
        # Pair 3: one human verdict only (no majority by default); the LLM says b twice.
        (3, "r1", "human", "a", "b"),
        (3, "llm-1", "llm", "a", "b", 4),
        (3, "llm-1", "llm", "b", "b", 4),
        # Pair 4: humans b (2 of 2); the LLM ties in both orders.
        (4, "r1", "human", "a", "b"),
        (4, "r2", "human", "a", "b"),
        (4, "llm-1", "llm", "a", "tie"),
        (4, "llm-1", "llm", "b", "tie"),
    ]
    return frame(rows)


def test_a_human_majority_needs_two_verdicts_by_default():
    data = agreement_frame()
    assert agreement.majority(data, "human", min_verdicts=2).dropna().to_dict() == {
        1: "a",
        2: "tie",
        4: "b",
    }
    # Pairs 1 and 4 have both majorities (pair 2 has no LLM majority, 3 no human one):
    # 1 agrees, 4 does not (b vs tie).
    rate = agreement.human_llm_agreement(data, n_boot=0)
    assert (rate.rate, rate.n) == (0.5, 2)
    one = agreement.human_llm_agreement(data, n_boot=0, min_human=1)
    assert (one.rate, one.n) == (2 / 3, 3)  # pair 3 joins, and agrees


def test_agreement_is_reported_with_and_without_ties():
    data = agreement_frame()
    without = agreement.human_llm_agreement(data, n_boot=0, ties=False)
    assert (without.rate, without.n) == (1.0, 1)  # pair 4's LLM tie is left out
    summary = agreement.agreement_summary(data, n_boot=0)
    assert summary["human_llm_agreement"]["rate"] == 0.5
    assert summary["human_llm_agreement_no_ties"]["rate"] == 1.0


def test_each_llm_verdict_counts_against_the_human_majority():
    by_judge = agreement.llm_judge_human_agreement(agreement_frame())
    # Pairs with a human majority: 1 (a: a, a), 2 (tie: b, a), 4 (b: tie, tie): 2 of 6.
    assert by_judge["llm-1"].rate == pytest.approx(2 / 6) and by_judge["llm-1"].n == 6
    no_ties = agreement.llm_judge_human_agreement(agreement_frame(), ties=False)
    assert no_ties["llm-1"].rate == 1.0 and no_ties["llm-1"].n == 2  # pair 1 only


def test_cross_judge_agreement_counts_every_pair_of_votes():
    rows = [
        (1, "A", "llm", "a", "a"),
        (1, "A", "llm", "b", "b"),  # A disagrees with itself on pair 1
        (1, "B", "llm", "a", "a"),
        (1, "B", "llm", "b", "a"),
        (2, "A", "llm", "a", "tie"),
        (2, "B", "llm", "a", "tie"),
    ]
    data = frame(rows)
    # Pair 1: A votes {a, b}, B {a, a}: 2 of the 4 vote pairs agree. Pair 2: tie = tie.
    cross = agreement.cross_judge_agreement(data)
    assert cross["A|B"].rate == pytest.approx((0.5 + 1.0) / 2) and cross["A|B"].n == 2
    no_ties = agreement.cross_judge_agreement(data, ties=False)
    assert no_ties["A|B"].rate == pytest.approx(0.5) and no_ties["A|B"].n == 1
    # The old rule kept one of A's two verdicts and dropped the other; both count now.
    assert len(agreement._verdicts(data, "llm")) == 6


def test_three_way_agreement_needs_every_vote_to_agree():
    rows = [(1, j, "llm", o, "a") for j in "ABC" for o in "ab"]
    rows += [(2, j, "llm", o, "a") for j in "ABC" for o in "ab"][:-1] + [(2, "C", "llm", "b", "b")]
    result = agreement.three_way_agreement(frame(rows))
    assert (result.rate, result.n) == (0.5, 2)


def test_krippendorffs_alpha_from_counts_matches_the_krippendorff_package():
    import krippendorff

    rng = np.random.default_rng(4)
    rows = []
    for item in range(40):
        lean = rng.choice(["a", "b"])
        for judge in rng.choice(12, rng.integers(1, 6), replace=False):
            winner = lean if rng.random() < 0.7 else rng.choice(["a", "b", "tie"])
            strength = None if winner == "tie" else float(rng.integers(1, 3))
            rows.append((item, f"r{judge}", "human", "a", winner, strength))
    data = frame(rows)
    scale = agreement.five_point_scale(data)
    matrix = data.assign(scale=scale).pivot(index="judge", columns="item", values="scale")
    # Every pair in both orientations: the mirrored items are the scale read backwards.
    matrix = pd.concat([matrix, (6.0 - matrix).add_prefix("turned-")], axis=1)
    for level in ("ordinal", "interval", "nominal"):
        expected = krippendorff.alpha(
            reliability_data=matrix.to_numpy(dtype=float),
            value_domain=[1.0, 2.0, 3.0, 4.0, 5.0],
            level_of_measurement=level,
        )
        assert agreement.krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=1e-12)


def test_position_bias_p_values_are_scipys_exact_binomial_test():
    from scipy.stats import binomtest

    k = np.arange(0, 31)
    got = agreement.two_sided_half_p(k, np.full(31, 30))
    assert got == pytest.approx([binomtest(int(i), 30, 0.5).pvalue for i in k], abs=1e-12)
