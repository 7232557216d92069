"""Writes for strategy labels: label sets, stored replies, validation samples, human labels."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.utils import timezone

from completions import strategies
from completions.models import Completion, Study
from completions.sampling import stratified_round_robin

from .models import (
    Adjudication,
    CompletionLabels,
    HumanLabel,
    LabelSet,
    LabelSetKind,
    LabelSetStatus,
    SampleItem,
    ValidationSample,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from llm.models import Run


class LabellingError(ValueError):
    """Bad input from a user; the message says what to change."""


def label_set_create(
    *,
    study: Study,
    name: str,
    labeller: str = "",
    kind: str = LabelSetKind.LLM,
    run: Run | None = None,
) -> LabelSet:
    return LabelSet.objects.create(
        study=study,
        name=name,
        kind=kind,
        labeller=labeller,
        run=run,
        taxonomy_version=strategies.TAXONOMY_VERSION,
        taxonomy_hash=strategies.TAXONOMY_HASH,
        prompt_version=strategies.PROMPT_VERSION if kind == LabelSetKind.LLM else "",
        prompt_hash=strategies.PROMPT_HASH if kind == LabelSetKind.LLM else "",
    )


def labels_store(
    *, label_set: LabelSet, completion: Completion, raw_reply: str
) -> CompletionLabels:
    """Read a classifier reply against the completion and store it (once per set).

    Raises LabelReplyError (message fit for a repair prompt) when the reply breaks the schema;
    what the schema cannot state is normalised and flagged (see strategies.label_reply_read).
    """
    labels = strategies.label_reply_read(raw_reply, completion.text).labels
    row, _ = CompletionLabels.objects.get_or_create(
        label_set=label_set,
        completion=completion,
        defaults={
            "labels": labels,
            "present": strategies.present_strategies(labels),
            "raw_reply": raw_reply,
        },
    )
    return row


def label_set_finish(*, label_set: LabelSet, failed: bool = False) -> None:
    label_set.status = LabelSetStatus.FAILED if failed else LabelSetStatus.FINISHED
    label_set.finished_at = timezone.now()
    label_set.save(update_fields=["status", "finished_at"])


# --------------------------------------------------------------------------- validation


def _stratum(completion: Completion) -> str:
    system = completion.system
    if system.kind == "model":
        return f"model/{system.family or system.name}"
    return system.kind


@transaction.atomic
def sample_create(
    *,
    study: Study,
    size: int,
    labellers_per_item: int = 2,
    seed: int = 0,
    name: str = "",
    created_by: User | None = None,
) -> ValidationSample:
    """Sample ``size`` completions, spread evenly over (system kind, model family) strata."""
    if size < 1:
        raise LabellingError("The sample needs at least one completion.")
    if labellers_per_item < 2:
        raise LabellingError("Each completion needs at least two labellers.")
    completions = (
        Completion.objects.filter(system__study=study).exclude(text="").select_related("system")
    )
    strata: dict[str, list[int]] = defaultdict(list)
    for completion in completions.order_by("id"):
        strata[_stratum(completion)].append(completion.pk)
    if not strata:
        raise LabellingError("The study has no completions to sample.")
    picks = stratified_round_robin(strata, size, seed=seed)
    sample = ValidationSample.objects.create(
        study=study,
        name=name or f"Sample of {len(picks)} ({timezone.now():%Y-%m-%d %H:%M})",
        size=len(picks),
        seed=seed,
        labellers_per_item=labellers_per_item,
        created_by=created_by,
    )
    SampleItem.objects.bulk_create(
        SampleItem(sample=sample, completion_id=pk, position=i, stratum=stratum)
        for i, (stratum, pk) in enumerate(picks)
    )
    return sample


def _checked(present: list[str]) -> list[str]:
    unknown = sorted(set(present) - set(strategies.STRATEGY_NAMES))
    if unknown:
        raise LabellingError(f"Not in the taxonomy: {', '.join(unknown)}")
    return [name for name in strategies.STRATEGY_NAMES if name in set(present)]


def human_label_submit(
    *, item: SampleItem, labeller: User, present: list[str], note: str = ""
) -> HumanLabel:
    """Store one labeller's labels; a second submission of the same item is refused."""
    if not item.sample.is_open:
        raise LabellingError("This sample is closed.")
    try:
        with transaction.atomic():
            return HumanLabel.objects.create(
                item=item, labeller=labeller, present=_checked(present), note=note[:2000]
            )
    except IntegrityError:
        raise LabellingError("You have already labelled this response.") from None


def adjudicate(*, item: SampleItem, present: list[str], decided_by: User) -> Adjudication:
    adjudication, _ = Adjudication.objects.update_or_create(
        item=item, defaults={"present": _checked(present), "decided_by": decided_by}
    )
    return adjudication
