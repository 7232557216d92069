"""Simple bots against a study's gates: would a script pass its qualification or its checks?

Pure (no Django): items in, scores out. Each bot answers from what a rater's page shows (the
left reply is "A") without reading a word: always the longer or the shorter reply, always one
point of the 5-point scale, or the reply shown first. A gate that such a bot passes tells a
careful rater from a careless one no better than a coin would.

An item's `order` says how the page shows it: "stored" keeps reply a on the left (qualification
items, attention checks, whose instruction names a page side), "drawn" draws the side per rater
(gold checks, as real pairs); a bot's score on a drawn item is its expected score over both
orders. Bots that pick a side may press either strength (1 or 2, 4 or 5): each is scored at
its better one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

# The bar (docs/raters.md): no bot matches more than this share of the gold checks.
GOLD_BAR = 0.6

Policy = Callable[[str, str], int]  # (left text, right text) -> the scale point pressed


@dataclass(frozen=True)
class GateItem:
    """One qualification item or quality check as a bot meets it."""

    text_a: str
    text_b: str
    expected: str  # "a" or "b": the better reply, or the side an attention check asks for
    expected_choice: int | None = None  # an exact scale point (attention checks)
    order: str = "stored"  # "stored" (a on the left) or "drawn" (per rater)


@dataclass(frozen=True)
class Bot:
    name: str
    words: str  # "always picks the longer reply", for messages
    policies: tuple[Policy, ...]  # its variants (strengths); scored at the best


@dataclass(frozen=True)
class BotScore:
    bot: str
    words: str
    matched: float  # items passed (expected number, for drawn orders)
    n: int

    @property
    def share(self) -> float:
        return self.matched / self.n if self.n else 0.0


def _n_words(text: str) -> int:
    return len(text.split())


def _by_length(longer: bool, strong: bool) -> Policy:
    def policy(left: str, right: str) -> int:
        n_left, n_right = _n_words(left), _n_words(right)
        if n_left == n_right:
            return 3
        left_wins = (n_left > n_right) == longer
        return (1 if strong else 2) if left_wins else (5 if strong else 4)

    return policy


def _always(point: int) -> Policy:
    return lambda left, right: point


_LONGER = (_by_length(True, True), _by_length(True, False))
_SHORTER = (_by_length(False, True), _by_length(False, False))
BOTS: tuple[Bot, ...] = (
    Bot("longer", "always picks the longer reply", _LONGER),
    Bot("shorter", "always picks the shorter reply", _SHORTER),
    Bot("always A", "always answers 1, A significantly better", (_always(1),)),
    Bot("always A slightly", "always answers 2, A slightly better", (_always(2),)),
    Bot("always the middle", "always answers 3, about the same (a tie)", (_always(3),)),
    Bot("always B slightly", "always answers 4, B slightly better", (_always(4),)),
    Bot("always B", "always answers 5, B significantly better", (_always(5),)),
    Bot("first shown", "always picks the reply shown first", (_always(1), _always(2))),
)


def _verdict(choice: int, shown_left: str) -> str:
    """The page's scale point as the item's side ("a", "b" or "tie")."""
    if choice == 3:
        return "tie"
    return shown_left if choice < 3 else ("b" if shown_left == "a" else "a")


def item_passed(item: GateItem, choice: int, shown_left: str) -> bool:
    """The platform's rule: an exact point for an attention check, else the better side at
    either strength (annotation.services.judgments, care.services)."""
    if item.expected_choice is not None:
        return choice == item.expected_choice
    return _verdict(choice, shown_left) == item.expected


def _policy_score(policy: Policy, items: Iterable[GateItem]) -> float:
    total = 0.0
    for item in items:
        orders = ("a",) if item.order == "stored" else ("a", "b")
        for shown_left in orders:
            left, right = (
                (item.text_a, item.text_b) if shown_left == "a" else (item.text_b, item.text_a)
            )
            total += item_passed(item, policy(left, right), shown_left) / len(orders)
    return total


def bots_score(items: list[GateItem], bots: tuple[Bot, ...] = BOTS) -> list[BotScore]:
    """Each bot's (expected) number of items passed, at its best variant."""
    return [
        BotScore(
            bot=bot.name,
            words=bot.words,
            matched=max(_policy_score(policy, items) for policy in bot.policies),
            n=len(items),
        )
        for bot in bots
    ]


def qualification_passed(score: BotScore, pass_share: float) -> bool:
    """The care rule: pass with at least `pass_share` right (no items: everyone passes)."""
    return score.n == 0 or score.matched >= pass_share * score.n - 1e-9


def gate_problems(
    *,
    qualification: list[BotScore] | None,
    pass_share: float,
    gold: list[BotScore],
) -> list[str]:
    """Why the gates let a bot through, one sentence each with the numbers ([] when none).

    `qualification` is None when the study asks for no qualification."""
    problems = []
    for score in qualification or []:
        if score.n == 0:
            problems.append(
                "qualification is on but has no qualification items: everyone passes it, "
                "a bot included"
            )
            break
        if qualification_passed(score, pass_share):
            problems.append(
                f"a bot that {score.words} passes {_count(score.matched)} of {score.n} "
                f"qualification items (passing takes {pass_share:.0%})"
            )
    for score in gold:
        if score.n and score.share > GOLD_BAR:
            problems.append(
                f"a bot that {score.words} matches {_count(score.matched)} of {score.n} gold "
                f"checks ({score.share:.0%}; the bar is {GOLD_BAR:.0%})"
            )
    return problems


def _count(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:.1f}"
