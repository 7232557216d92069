"""A small study with known outcomes, shared by the ranking tests.

Two systems, "model-x" (a model) and "human-y" (the human writers), meet on four contexts
(the last two adversarial). Their completions are created in alternating order, so x is
completion_a on contexts 0-1 and completion_b on 2-3: the canonical orientation matters.

Counted human verdicts: x wins 3 times "significantly" (strength 2 of 2), y wins once
"slightly" (strength 1 of 2). With weights "none" the Elo gap is 400 log10(3) = 190.85;
with "normalized" weights x's wins weigh 2, y's 1: 400 log10(6) = 311.25. Noise that must
not count: a flagged rater voting y everywhere, and quality-check judgments voting y.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from annotation.models import Judgment, Pair
from completions.models import DialogueContext, Study, System
from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    JudgmentFactory,
    PairFactory,
    QualityCheckItemFactory,
    RaterFactory,
    StudyFactory,
    SystemFactory,
)

X, Y = "model-x", "human-y"


@dataclass
class Built:
    study: Study
    x: System
    y: System
    contexts: list[DialogueContext] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    x_side: list[str] = field(default_factory=list)

    def side(self, i: int, system: str) -> str:
        return self.x_side[i] if system == X else ("b" if self.x_side[i] == "a" else "a")


def judge(
    built: Built,
    i: int,
    winner_system: str | None,
    *,
    judge: str,
    kind: str = "human",
    rater=None,
    strength: int | None = 1,
    strength_max: int | None = 2,
    quality_check: bool = False,
    axes: dict | None = None,
    family: str = "",
) -> Judgment:
    winner = "tie" if winner_system is None else built.side(i, winner_system)
    return JudgmentFactory(
        study=built.study,
        pair=built.pairs[i],
        judge_kind=kind,
        rater=rater,
        judge=judge,
        judge_family=family,
        winner=winner,
        strength=None if winner == "tie" else strength,
        strength_max=strength_max,
        shown_left="a",
        submitted_at=timezone.now(),
        quality_check=quality_check,
        axes=axes or {},
    )


def build_study(*, slug: str | None = None) -> Built:
    study = StudyFactory(**({"slug": slug} if slug else {}))
    x = SystemFactory(study=study, name=X, kind="model", family="gpt", ttft_ms=500.0)
    y = SystemFactory(study=study, name=Y, kind="human", family="")
    built = Built(study=study, x=x, y=y)
    for i in range(4):
        context = DialogueContextFactory(study=study, adversarial=i >= 2)
        first, second = (x, y) if i < 2 else (y, x)
        c1 = CompletionFactory(
            context=context,
            system=first,
            text=f"first {i}",
            metadata={"strategies": ["Affirmation"]},
        )
        c2 = CompletionFactory(
            context=context,
            system=second,
            text=f"second {i}",
            metadata={"strategies": ["Clarification", "Affirmation"]},
        )
        built.contexts.append(context)
        built.pairs.append(
            PairFactory(study=study, context=context, completion_a=c1, completion_b=c2)
        )
        built.x_side.append("a" if i < 2 else "b")
    return built


def add_known_verdicts(built: Built) -> None:
    """x beats y on contexts 0, 1, 2 (strength 2 of 2); y beats x on context 3 (1 of 2)."""
    honest = RaterFactory(study=built.study)
    for i in range(3):
        judge(built, i, X, judge=honest.pseudonym, rater=honest, strength=2)
    judge(built, 3, Y, judge=honest.pseudonym, rater=honest, strength=1)


def add_noise_that_must_not_count(built: Built) -> None:
    flagged = RaterFactory(study=built.study, flagged=True, flag_reason="failed checks")
    for i in range(4):
        judge(built, i, Y, judge=flagged.pseudonym, rater=flagged, strength=2)
    checker = RaterFactory(study=built.study)
    for i in range(4):
        judge(built, i, Y, judge=checker.pseudonym, rater=checker, quality_check=True)
    item = QualityCheckItemFactory(study=built.study)
    JudgmentFactory(
        study=built.study,
        quality_item=item,
        shown_left="",
        judge_kind="human",
        rater=checker,
        judge=checker.pseudonym,
        winner="b",
        strength=2,
        strength_max=2,
        submitted_at=timezone.now(),
        quality_check=True,
    )
