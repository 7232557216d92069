from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from ranking import agreement as ag

# Wikipedia's Fleiss' kappa example: 10 subjects, 14 raters, 5 categories, kappa = 0.210.
WIKIPEDIA_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C: 4 observers,
# 12 units, values 1..5, missing as None. Published: nominal 0.743, interval 0.849, ordinal 0.815.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]

SCALE_TO_VERDICT = {1: ("a", 2.0), 2: ("a", 1.0), 3: ("tie", np.nan), 4: ("b", 1.0), 5: ("b", 2.0)}


def judgment(item, judge, winner, kind="human", **extra) -> dict:
    row = {
        "item": item,
        "judge": judge,
        "judge_kind": kind,
        "winner": winner,
        "strength": np.nan,
        "strength_max": 2.0 if kind == "human" else 5.0,
        "shown_left": None,
    }
    row.update(extra)
    return row


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def votes(item, winners, kind="human", prefix="h") -> list[dict]:
    return [judgment(item, f"{prefix}{i}", w, kind) for i, w in enumerate(winners)]


def test_fleiss_kappa_reproduces_the_wikipedia_example():
    assert ag.fleiss_kappa_table(WIKIPEDIA_TABLE) == pytest.approx(0.210, abs=5e-4)


def test_fleiss_kappa_with_unequal_rater_counts_matches_the_hand_computation():
    # P-bar = (1 + 0 + 1/3) / 3 = 4/9; category shares 5/8, 1/8, 2/8 -> Pe = 15/32.
    table = [[2, 0, 0], [1, 1, 1], [2, 0, 1]]
    expected = (4 / 9 - 15 / 32) / (1 - 15 / 32)
    assert ag.fleiss_kappa_table(table) == pytest.approx(expected)


def test_fleiss_kappa_of_judgments_agrees_with_statsmodels():
    rng = np.random.default_rng(0)
    rows = []
    for item in range(40):
        leaning = rng.choice(["a", "tie", "b"])
        for judge in range(5):
            winner = leaning if rng.random() < 0.6 else rng.choice(["a", "tie", "b"])
            rows.append(judgment(item, f"h{judge}", winner))
    judgments = pd.DataFrame(rows)
    wide = judgments.pivot(index="item", columns="judge", values="winner")
    table, _ = aggregate_raters(wide.to_numpy())
    assert ag.fleiss_kappa(judgments) == pytest.approx(sm_fleiss_kappa(table))


def test_fleiss_kappa_counts_only_the_requested_kind_and_column():
    rows = votes(1, ["a", "a", "b"]) + votes(2, ["b", "b", "b"]) + votes(1, ["tie"] * 3, "llm", "m")
    judgments = frame(*rows)
    judgments["axis_H"] = ["a", "a", "a", "b", "b", "b", None, None, None]
    # Every pair counted as stored and the other way round (a and b swapped).
    assert ag.fleiss_kappa(judgments) == pytest.approx(
        ag.fleiss_kappa_table([[2, 0, 1], [0, 0, 3], [1, 0, 2], [3, 0, 0]])
    )
    assert ag.fleiss_kappa(judgments, column="axis_H") == pytest.approx(1.0)


def test_fleiss_kappa_is_nan_without_items():
    assert math.isnan(ag.fleiss_kappa(frame(judgment(1, "h1", "a"))))
    assert math.isnan(ag.fleiss_kappa_table(np.zeros((0, 3))))


def krippendorff_judgments() -> pd.DataFrame:
    rows = []
    for judge, values in enumerate(KRIPPENDORFF_2011):
        for item, value in enumerate(values):
            if value is not None:
                winner, strength = SCALE_TO_VERDICT[value]
                rows.append(judgment(item, f"obs{judge}", winner, strength=strength))
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("level", "published"), [("ordinal", 0.815), ("nominal", 0.743), ("interval", 0.849)]
)
def test_krippendorff_alpha_reproduces_the_published_example(level, published):
    # The published example is values on a scale, not pairs stored one way round: alpha from
    # its counts as they are (the statistic itself), then the pairs' version below.
    data = krippendorff_judgments()
    counts = data.assign(scale=ag.five_point_scale(data)).groupby(["item", "scale"]).size()
    table = counts.unstack(fill_value=0).reindex(columns=[1.0, 2.0, 3.0, 4.0, 5.0], fill_value=0)
    assert ag.alpha_from_counts(table.to_numpy(float), level=level) == pytest.approx(
        published, abs=5e-4
    )


def _stored_the_other_way_round(judgments: pd.DataFrame, items: set) -> pd.DataFrame:
    """``judgments`` as if the pairs ``items`` had been stored with their sides swapped."""
    flip = {"a": "b", "b": "a", "tie": "tie", None: None}
    out = judgments.copy()
    turned = out["item"].isin(items)
    columns = [c for c in out.columns if c in ("winner", "shown_left") or c.startswith("axis_")]
    for column in columns:
        out.loc[turned, column] = out.loc[turned, column].map(lambda v: flip.get(v, v))
    return out


def test_kappa_and_alpha_do_not_move_when_pairs_are_stored_the_other_way_round():
    data = krippendorff_judgments()
    # Storage order is per pair: turn every other pair round (turning all is a relabelling).
    turned = _stored_the_other_way_round(data, set(data["item"].unique()[::2]))
    for level in ("ordinal", "interval", "nominal"):
        assert ag.krippendorff_alpha(turned, level=level) == pytest.approx(
            ag.krippendorff_alpha(data, level=level), abs=1e-12
        )
    assert ag.fleiss_kappa(turned) == pytest.approx(ag.fleiss_kappa(data), abs=1e-12)
    # Counted once, the shares of "a" and "b" (and so chance agreement) would have moved.
    once = data.groupby(["item", "winner"]).size().unstack(fill_value=0)
    once_turned = turned.groupby(["item", "winner"]).size().unstack(fill_value=0)
    assert ag.fleiss_kappa_table(once.reindex(columns=ag.CATEGORIES, fill_value=0)) != (
        pytest.approx(
            ag.fleiss_kappa_table(once_turned.reindex(columns=ag.CATEGORIES, fill_value=0))
        )
    )


def test_five_point_scale_sends_unknown_strength_to_slightly():
    judgments = frame(
        judgment(1, "h", "a", strength=2.0),
        judgment(1, "h", "a", strength=1.0),
        judgment(1, "h", "a"),
        judgment(1, "h", "tie"),
        judgment(1, "h", "b"),
        judgment(1, "m", "b", "llm", strength=4.0),
    )
    assert ag.five_point_scale(judgments).tolist() == [1.0, 2.0, 2.0, 3.0, 4.0, 5.0]


def test_krippendorff_alpha_is_nan_without_pairable_items():
    assert math.isnan(ag.krippendorff_alpha(frame(judgment(1, "h1", "a"), judgment(2, "h1", "b"))))


def test_inter_human_agreement_is_the_mean_share_of_agreeing_pairs():
    # item 1: a a a b -> 3 of 6 pairs agree; item 2: tie tie -> 1 of 1; item 3 has one judge.
    rows = votes(1, ["a", "a", "a", "b"]) + votes(2, ["tie", "tie"]) + votes(3, ["a"])
    result = ag.inter_human_agreement(frame(*rows))
    assert result.rate == pytest.approx((0.5 + 1.0) / 2)
    assert result.n == 2


def test_majority_needs_a_strict_plurality():
    rows = (
        votes(1, ["a", "a", "b"])
        + votes(2, ["a", "a", "b", "b", "tie"])
        + votes(3, ["tie", "tie", "a"])
        + votes(4, ["a", "b"])
    )
    result = ag.majority(frame(*rows), "human")
    assert result.to_dict() == {1: "a", 2: None, 3: "tie", 4: None}


def human_llm_fixture() -> pd.DataFrame:
    rows = (
        votes(1, ["a"] * 5)
        + votes(1, ["a", "a", "b"], "llm", "m")  # agree, clear
        + votes(2, ["b", "b", "b", "a", "a"])
        + votes(2, ["a", "a", "a"], "llm", "m")  # disagree, ambiguous (3 of 5)
        + votes(3, ["tie", "tie", "tie", "a", "b"])
        + votes(3, ["tie", "b", "tie"], "llm", "m")  # agree, ambiguous
        + votes(4, ["a", "a", "b", "b", "tie"])
        + votes(4, ["a"] * 3, "llm", "m")  # no human majority: not counted
    )
    return frame(*rows)


def test_human_llm_agreement_compares_the_two_majorities():
    result = ag.human_llm_agreement(human_llm_fixture(), n_boot=200)
    assert result.rate == pytest.approx(2 / 3)
    assert result.n == 3
    assert 0.0 <= result.ci_low <= result.rate <= result.ci_high <= 1.0


def test_human_llm_agreement_on_ambiguous_items_keeps_items_without_a_clear_majority():
    result = ag.human_llm_agreement(human_llm_fixture(), n_boot=0, ambiguous=True)
    assert result.rate == pytest.approx(1 / 2)
    assert result.n == 2
    assert math.isnan(result.ci_low)


def test_human_llm_agreement_bootstrap_resamples_contexts():
    # All items share one context: every resample is the whole data, so the CI collapses.
    judgments = human_llm_fixture().assign(context="c1")
    result = ag.human_llm_agreement(judgments, n_boot=100)
    assert result.ci_low == pytest.approx(result.rate)
    assert result.ci_high == pytest.approx(result.rate)


def test_llm_judge_human_agreement_scores_each_judge_against_the_human_majority():
    result = ag.llm_judge_human_agreement(human_llm_fixture())
    # human majorities: 1 -> a, 2 -> b, 3 -> tie (item 4 has none).
    assert result["m0"].rate == pytest.approx(2 / 3)  # a, a, tie
    assert result["m1"].rate == pytest.approx(1 / 3)  # a, a, b
    assert result["m2"].rate == pytest.approx(1 / 3)  # b, a, tie
    assert result["m0"].n == 3


def test_cross_judge_and_three_way_agreement():
    rows = []
    for item, verdicts in enumerate([("a", "a", "a"), ("a", "b", "a"), ("tie", "tie", "b")]):
        for judge, winner in zip(["gpt", "claude", "gemini"], verdicts, strict=True):
            rows.append(judgment(item, judge, winner, "llm"))
    rows.append(judgment(9, "gpt", "a", "llm"))  # judged by one model only
    judgments = frame(*rows)
    cross = ag.cross_judge_agreement(judgments)
    assert set(cross) == {"claude|gemini", "claude|gpt", "gemini|gpt"}
    assert cross["gemini|gpt"].rate == pytest.approx(2 / 3)
    assert cross["claude|gpt"].rate == pytest.approx(2 / 3)
    assert cross["claude|gemini"].rate == pytest.approx(1 / 3)
    assert cross["gemini|gpt"].n == 3
    three = ag.three_way_agreement(judgments)
    assert three.rate == pytest.approx(1 / 3)
    assert three.n == 3


def test_cross_judge_agreement_by_family_uses_each_familys_plurality():
    rows = [
        judgment(1, "gpt-a", "a", "llm", judge_family="gpt"),
        judgment(1, "gpt-b", "a", "llm", judge_family="gpt"),
        judgment(1, "claude", "a", "llm", judge_family="claude"),
        judgment(2, "gpt-a", "b", "llm", judge_family="gpt"),
        judgment(2, "claude", "a", "llm", judge_family="claude"),
    ]
    cross = ag.cross_judge_agreement(frame(*rows), by="judge_family")
    assert cross["claude|gpt"].rate == pytest.approx(0.5)


def test_position_bias_counts_left_choices_among_non_tie_verdicts():
    rows = [judgment(i, "h1", "a", shown_left="a") for i in range(7)]
    rows += [judgment(i, "h1", "b", shown_left="a") for i in range(7, 10)]
    rows += [judgment(10, "h1", "tie", shown_left="a"), judgment(11, "h1", "a")]
    result = ag.position_bias(frame(*rows))
    assert result.loc["h1", "n"] == 10
    assert result.loc["h1", "left_share"] == pytest.approx(0.7)
    assert result.loc["h1", "p_value"] == pytest.approx(binomtest(7, 10, 0.5).pvalue)
    assert result.loc["h1", "judge_kind"] == "human"


def test_agreement_summary_is_json_serialisable_with_nan_as_null():
    judgments = human_llm_fixture()
    judgments["axis_H"] = judgments["winner"]
    judgments["shown_left"] = "a"
    summary = ag.agreement_summary(judgments, n_boot=50)
    text = json.dumps(summary, allow_nan=False)
    assert json.loads(text)["human_llm_agreement"]["n"] == 3
    assert set(summary["fleiss_kappa_axes"]) == {"H"}
    assert summary["three_way_agreement"] == pytest.approx(2 / 4)  # items 2 and 4
    assert summary["krippendorff_alpha"] is not None


def test_position_bias_without_a_shown_left_column_is_empty():
    judgments = frame(judgment(1, "h1", "a")).drop(columns="shown_left")
    assert ag.position_bias(judgments).empty


def test_agreement_summary_of_no_judgments_gives_nulls():
    empty = pd.DataFrame(
        columns=["item", "judge", "judge_kind", "winner", "strength", "strength_max", "shown_left"]
    )
    summary = ag.agreement_summary(empty, n_boot=10)
    json.dumps(summary, allow_nan=False)
    assert summary["fleiss_kappa"] is None
    assert summary["human_llm_agreement"]["rate"] is None
