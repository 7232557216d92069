"""The bots a study's gates are held to: scores computed by hand on small item sets."""

from __future__ import annotations

from annotation.bots import GOLD_BAR, GateItem, bots_score, gate_problems, item_passed

SHORT, LONG = "Short reply here.", "A much longer reply with many more words in it than the other."


def _by_name(items):
    return {s.bot: s for s in bots_score(items)}


def test_a_set_whose_better_reply_is_always_the_longer_one_lets_the_longer_bot_through():
    items = [GateItem(text_a=LONG, text_b=SHORT, expected="a", order="stored")] * 2 + [
        GateItem(text_a=SHORT, text_b=LONG, expected="b", order="stored")
    ]
    scores = _by_name(items)
    assert scores["longer"].matched == 3 and scores["shorter"].matched == 0
    assert scores["always A"].matched == 2 and scores["always B"].matched == 1
    assert scores["first shown"].matched == 2  # the reply shown first: A, at either strength
    assert scores["always the middle"].matched == 0  # a tie never passes a gold item
    problems = gate_problems(qualification=list(scores.values()), pass_share=0.75, gold=[])
    assert problems == [
        "a bot that always picks the longer reply passes 3 of 3 qualification items "
        "(passing takes 75%)"
    ]


def test_a_balanced_set_stops_every_bot():
    items = [
        GateItem(text_a=LONG, text_b=SHORT, expected="a"),
        GateItem(text_a=SHORT, text_b=LONG, expected="a"),
        GateItem(text_a=LONG, text_b=SHORT, expected="b"),
        GateItem(text_a=SHORT, text_b=LONG, expected="b"),
    ]
    scores = bots_score(items)
    assert max(s.matched for s in scores) == 2
    assert gate_problems(qualification=scores, pass_share=0.75, gold=scores) == []


def test_a_drawn_order_scores_a_side_bot_at_half_an_item_whatever_the_stored_side():
    items = [GateItem(text_a=LONG, text_b=SHORT, expected="a", order="drawn")] * 4
    scores = _by_name(items)
    assert scores["always A"].matched == 2.0 and scores["always B"].matched == 2.0
    assert scores["longer"].matched == 4  # length does not care about the order
    [problem] = gate_problems(qualification=None, pass_share=0.75, gold=list(scores.values()))
    assert problem == (
        "a bot that always picks the longer reply matches 4 of 4 gold checks "
        f"(100%; the bar is {GOLD_BAR:.0%})"
    )


def test_an_attention_check_passes_only_at_its_exact_point():
    item = GateItem(text_a=SHORT, text_b=LONG, expected="b", expected_choice=4)
    assert [item_passed(item, choice, "a") for choice in range(1, 6)] == [
        False, False, False, True, False,
    ]  # fmt: skip
    scores = _by_name([item])
    # The longer bot presses 4 or 5 for B: at "slightly" it passes.
    assert scores["longer"].matched == 1 and scores["always B"].matched == 0
    assert scores["always B slightly"].matched == 1


def test_qualification_on_without_items_lets_everyone_through():
    scores = bots_score([])
    assert gate_problems(qualification=scores, pass_share=0.75, gold=[]) == [
        "qualification is on but has no qualification items: everyone passes it, a bot included"
    ]
