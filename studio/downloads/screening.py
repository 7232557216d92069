"""The personal-data screen before a release: writer texts and rater rationales.

The same rules as the contexts at import (completions.esconv.identifying_kinds: e-mail
addresses, phone numbers, web addresses, street addresses), and phone numbers as written in
every region the study names (`Study.phone_regions`, else `PII_PHONE_REGIONS`:
completions.phones). What the screen flags becomes a
`ReleaseHold`: out of every bundle (its text null there) until a study admin releases it on the
downloads page. The datasheet reports what was screened and what was held (`ScreenSummary`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import JudgeKind, Judgment
from completions.esconv import identifying_kinds
from completions.models import Completion, Study, SystemKind
from completions.phones import regions_for
from studio.models import ReleaseHold

if TYPE_CHECKING:
    from django.contrib.auth.models import User

CHUNK = 5000


@dataclass
class ScreenSummary:
    writer_texts: int = 0
    rationales: int = 0
    decisions: dict[str, int] = field(default_factory=dict)  # decision -> holds
    withheld_completions: set[int] = field(default_factory=set)
    withheld_texts: set[str] = field(default_factory=set)
    withheld_judgments: set[int] = field(default_factory=set)

    @property
    def held(self) -> int:
        return sum(self.decisions.values())


def _writer_texts(study: Study) -> QuerySet[Completion, tuple[int, str]]:
    return (
        Completion.objects.filter(context__study=study, system__kind=SystemKind.HUMAN)
        .exclude(text="")
        .values_list("id", "text")
    )


def _rationales(study: Study) -> QuerySet[Judgment, tuple[int, str]]:
    return (
        Judgment.objects.filter(study=study, judge_kind=JudgeKind.HUMAN)
        .exclude(rationale="")
        .values_list("id", "rationale")
    )


@transaction.atomic
def release_screen(*, study: Study) -> ScreenSummary:
    """Screen every writer text and rationale; hold what is flagged (once); sum up."""
    summary = ScreenSummary()
    new = []
    regions = regions_for(study.phone_regions)
    for pk, text in _writer_texts(study).iterator(chunk_size=CHUNK):
        summary.writer_texts += 1
        if kinds := identifying_kinds(text, regions):
            new.append(_hold(study, ReleaseHold.Kind.WRITER_TEXT, kinds, completion_id=pk))
    for pk, text in _rationales(study).iterator(chunk_size=CHUNK):
        summary.rationales += 1
        if kinds := identifying_kinds(text, regions):
            new.append(_hold(study, ReleaseHold.Kind.RATIONALE, kinds, judgment_id=pk))
    ReleaseHold.objects.bulk_create(new, ignore_conflicts=True, batch_size=CHUNK)
    holds = ReleaseHold.objects.filter(study=study).select_related("completion")
    for hold in holds:
        summary.decisions[hold.decision] = summary.decisions.get(hold.decision, 0) + 1
        if hold.decision == ReleaseHold.Decision.RELEASE:
            continue
        if hold.completion is not None:
            summary.withheld_completions.add(hold.completion.pk)
            summary.withheld_texts.add(hold.completion.text)
        elif hold.judgment_id is not None:  # a hold is on a completion or on a judgment
            summary.withheld_judgments.add(hold.judgment_id)
    return summary


def _hold(study: Study, kind: str, kinds: list[str], **item: int) -> ReleaseHold:
    return ReleaseHold(study=study, kind=kind, found=", ".join(kinds)[:200], **item)


def release_hold_decide(*, hold: ReleaseHold, release: bool, user: User) -> ReleaseHold:
    """The admin's decision on one held item: release it into bundles, or keep it out."""
    hold.decision = ReleaseHold.Decision.RELEASE if release else ReleaseHold.Decision.KEEP_OUT
    hold.decided_by, hold.decided_at = user, timezone.now()
    hold.save(update_fields=["decision", "decided_by", "decided_at"])
    return hold


def release_holds_for_review(study: Study) -> list[ReleaseHold]:
    """The held items with their texts, waiting ones first (the downloads page's list)."""
    order = {"pending": 0, "keep_out": 1, "release": 2}
    holds = ReleaseHold.objects.filter(study=study).select_related("completion", "judgment")
    return sorted(holds.order_by("id"), key=lambda h: order.get(h.decision, 3))
