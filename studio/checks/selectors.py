"""Reads for the quality-checks page and the gate a study passes before it opens."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from annotation.bots import (
    BOTS,
    BotScore,
    GateItem,
    bots_score,
    gate_problems,
    qualification_passed,
)
from annotation.models import QualityCheckItem
from care.models import QualificationItem
from care.selectors import care_settings
from completions.models import Study


def check_rows(*, study: Study) -> QuerySet[QualityCheckItem]:
    """The study's checks, in use first, each with its answers and passes counted."""
    return (
        QualityCheckItem.objects.filter(study=study)
        .annotate(
            n_answers=Count("judgments"),
            n_passed=Count("judgments", filter=Q(judgments__passed_check=True)),
        )
        .order_by("retired_at", "kind", "pk")
    )


def _gate_item(item: QualityCheckItem | QualificationItem, order: str) -> GateItem:
    return GateItem(
        text_a=item.text_a,
        text_b=item.text_b,
        expected=item.expected,
        expected_choice=getattr(item, "expected_choice", None),
        order=order,
    )


@dataclass(frozen=True)
class BotRow:
    """One bot against each gate of the study (None where the study has no such gate)."""

    bot: str
    words: str
    qualification: BotScore | None
    qualifies: bool | None
    gold: BotScore
    attention: BotScore
    checks: BotScore  # all checks in use: fails half or more -> flagged (annotation.quality)


@dataclass(frozen=True)
class BotTable:
    rows: list[BotRow]
    qualification_on: bool
    pass_share: float
    problems: list[str]


def bot_table(*, study: Study) -> BotTable:
    """Every simple bot against the study's qualification (when on) and its checks in use."""
    checks = QualityCheckItem.objects.filter(study=study, retired_at__isnull=True)
    gold = [_gate_item(i, "drawn") for i in checks if i.kind == QualityCheckItem.Kind.GOLD]
    attention = [  # an attention check keeps its stored order (its instruction names a side)
        _gate_item(i, "stored") for i in checks if i.kind == QualityCheckItem.Kind.ATTENTION
    ]
    care = care_settings(study=study)
    qualification = None
    if care.qualification_enabled:
        items = QualificationItem.objects.filter(
            study=study, phase=QualificationItem.Phase.QUALIFICATION
        )
        qualification = bots_score([_gate_item(i, "stored") for i in items])
    gold_scores, attention_scores = bots_score(gold), bots_score(attention)
    all_scores = bots_score(gold + attention)
    rows = [
        BotRow(
            bot=bot.name,
            words=bot.words,
            qualification=qualification[i] if qualification else None,
            qualifies=qualification_passed(qualification[i], care.pass_share)
            if qualification
            else None,
            gold=gold_scores[i],
            attention=attention_scores[i],
            checks=all_scores[i],
        )
        for i, bot in enumerate(BOTS)
    ]
    problems = gate_problems(
        qualification=qualification, pass_share=care.pass_share, gold=gold_scores
    )
    return BotTable(
        rows=rows,
        qualification_on=care.qualification_enabled,
        pass_share=care.pass_share,
        problems=problems,
    )


def checks_in_use(*, study: Study) -> int:
    return QualityCheckItem.objects.filter(study=study, retired_at__isnull=True).count()
