"""Reads for strategy labels: which labels an analysis uses, labeller queues, consensus."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Q, QuerySet

from completions import strategies
from completions.models import Study

from .models import (
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

AUTO, METADATA = "auto", "metadata"
COUNTS = {"n", "human_present", "llm_present", "tp", "fp", "fn"}


@dataclass(frozen=True)
class LabelSource:
    """Which labels an analysis uses: a label set, or the completions' own metadata."""

    kind: str  # "label_set" | "metadata" | "none"
    label_set: int | None
    run: int | None
    name: str
    description: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def label_sets(study: Study) -> QuerySet[LabelSet]:
    return (
        LabelSet.objects.filter(study=study)
        .annotate(n_rows=Count("rows"))
        .order_by("-created_at", "-id")
    )


def label_set_latest_finished(study: Study) -> LabelSet | None:
    return (
        LabelSet.objects.filter(study=study, status=LabelSetStatus.FINISHED)
        .order_by("-finished_at", "-id")
        .first()
    )


def _metadata_source(study: Study) -> LabelSource:
    return LabelSource(
        kind=METADATA,
        label_set=None,
        run=None,
        name="Completion metadata",
        description="strategy labels carried by the completions: the dataset's own annotation "
        "(ESConv) or imported metadata",
    )


def _set_source(label_set: LabelSet) -> LabelSource:
    return LabelSource(
        kind="label_set",
        label_set=label_set.pk,
        run=label_set.run_id,
        name=label_set.name,
        description=f"{label_set.get_kind_display()} '{label_set.name}' "
        f"(labeller {label_set.labeller or 'n/a'}, taxonomy {label_set.taxonomy_version}, "
        f"{label_set.status})",
    )


def label_source_resolve(study: Study, choice: str = AUTO) -> LabelSource:
    """``auto``: the latest finished label set, else the completions' metadata;
    ``metadata``; or a label set's id. Raises LabelSet.DoesNotExist for an unknown id."""
    if choice == METADATA:
        return _metadata_source(study)
    if choice == AUTO:
        latest = label_set_latest_finished(study)
        return _set_source(latest) if latest else _metadata_source(study)
    return _set_source(LabelSet.objects.get(study=study, pk=int(choice)))


def label_state(study: Study) -> dict[str, Any] | None:
    """The latest finished label set in one query (None without one): what the leaderboard
    uses by default, and part of its cache key so a new label set shows at once."""
    state = (
        LabelSet.objects.filter(study=study, status=LabelSetStatus.FINISHED)
        .annotate(n_rows=Count("rows"))
        .order_by("-finished_at", "-id")
        .values("id", "name", "kind", "run_id", "labeller", "taxonomy_version", "n_rows")
        .first()
    )
    return None if state is None else dict(state)


def source_from_state(study: Study, state: dict[str, Any] | None) -> LabelSource:
    """The default source (``auto``) from ``label_state``'s answer, without a query."""
    if state is None:
        return _metadata_source(study)
    kind = dict(LabelSetKind.choices).get(state["kind"], state["kind"])
    return LabelSource(
        kind="label_set",
        label_set=state["id"],
        run=state["run_id"],
        name=state["name"],
        description=f"{kind} '{state['name']}' (labeller {state['labeller'] or 'n/a'}, "
        f"taxonomy {state['taxonomy_version']}, {state['n_rows']} completions labelled)",
    )


def export_rows(label_set: LabelSet) -> Iterator[dict[str, Any]]:
    """The strategy-labels export, one dict a line (the format of docs/strategies.md)."""
    run = str(label_set.run_id) if label_set.run_id is not None else f"labelset-{label_set.pk}"
    rows = (
        CompletionLabels.objects.filter(label_set=label_set)
        .order_by("completion__context__external_id", "completion__system__name")
        .values_list("completion__context__external_id", "completion__system__name", "labels")
    )
    for context_id, system, labels in rows.iterator(chunk_size=2000):
        yield {
            "context_id": context_id,
            "system": system,
            "run": run,
            "labels": {name: labels[name] for name in strategies.STRATEGY_NAMES if name in labels},
        }


# --------------------------------------------------------------------------- validation


def samples_for_labeller(user: User) -> list[tuple[ValidationSample, int]]:
    """Open samples with items this labeller can still label, with how many remain."""
    result = []
    for sample in ValidationSample.objects.filter(is_open=True).order_by("id"):
        remaining = _open_items(sample, user).count()
        if remaining:
            result.append((sample, remaining))
    return result


def samples_remaining(sample: ValidationSample, user: User) -> int:
    return _open_items(sample, user).count()


def _open_items(sample: ValidationSample, user: User) -> QuerySet[SampleItem]:
    return (
        sample.items.annotate(n_labels=Count("human_labels"))
        .filter(n_labels__lt=sample.labellers_per_item)
        .exclude(human_labels__labeller=user)
    )


def next_item(sample: ValidationSample, user: User) -> SampleItem | None:
    """The item with the fewest labels this labeller has not labelled (ties: sample order)."""
    return (
        _open_items(sample, user)
        .select_related("completion__context")
        .order_by("n_labels", "position")  # type: ignore[misc]  # n_labels: _open_items' annotation
        .first()
    )


@dataclass
class ItemState:
    item: SampleItem
    labels: list[list[str]]
    agreed: list[str]  # present for every labeller
    disputed: list[str]  # present for some, not all
    consensus: list[str] | None  # None while pending


def item_states(sample: ValidationSample) -> list[ItemState]:
    """Every item with its human labels and consensus: unanimous labels once the quota of
    labellers is reached, else (or on any disagreement) the adjudication when there is one."""
    labels: dict[int, list[list[str]]] = {}
    for item_id, present in HumanLabel.objects.filter(item__sample=sample).values_list(
        "item_id", "present"
    ):
        labels.setdefault(item_id, []).append(present)
    items = sample.items.select_related("adjudication", "completion__context").order_by("position")
    return [_state(item, labels.get(item.pk, []), sample.labellers_per_item) for item in items]


def _state(item: SampleItem, labels: list[list[str]], quota: int) -> ItemState:
    sets = [set(x) for x in labels]
    union = set().union(*sets) if sets else set()
    common = set.intersection(*sets) if sets else set()
    ordered = strategies.STRATEGY_NAMES
    adjudication = item.adjudication if _has_adjudication(item) else None
    consensus = None
    if adjudication is not None:
        consensus = list(adjudication.present)
    elif len(sets) >= quota and union == common:
        consensus = [n for n in ordered if n in common]
    return ItemState(
        item=item,
        labels=labels,
        agreed=[n for n in ordered if n in common],
        disputed=[n for n in ordered if n in union - common],
        consensus=consensus,
    )


def _has_adjudication(item: SampleItem) -> bool:
    try:
        item.adjudication  # noqa: B018 - the reverse one-to-one raises when absent
    except SampleItem.adjudication.RelatedObjectDoesNotExist:
        return False
    return True


def sample_progress(states: list[ItemState], quota: int) -> dict[str, Any]:
    return {
        "items": len(states),
        "fully_labelled": sum(1 for s in states if len(s.labels) >= quota),
        "labels": sum(len(s.labels) for s in states),
        "needed": quota * len(states),
        "disagreements": sum(1 for s in states if len(s.labels) >= quota and s.disputed),
        "adjudicated": sum(1 for s in states if _has_adjudication(s.item)),
        "consensus": sum(1 for s in states if s.consensus is not None),
    }


def samples_of_study(study: Study) -> QuerySet[ValidationSample]:
    return study.label_samples.annotate(
        n_items=Count("items", distinct=True),
        n_labels=Count("items__human_labels", distinct=True),
        n_adjudicated=Count("items__adjudication", distinct=True, filter=Q(items__isnull=False)),
    ).order_by("-created_at")


def validation_report(sample: ValidationSample, label_set: LabelSet | None) -> dict[str, Any]:
    """Per-strategy and macro F1 and Cohen's kappa of a label set against the human consensus.

    Counts the sample items with a consensus that the label set labelled; "uncertain" is
    not present. Returns plain JSON.
    """
    from .agreement import label_agreement, present_table

    states = item_states(sample)
    consensus = {s.item.completion_id: s.consensus for s in states if s.consensus is not None}
    report: dict[str, Any] = {
        "sample": sample.name,
        "label_set": None if label_set is None else _set_source(label_set).as_dict(),
        "progress": sample_progress(states, sample.labellers_per_item),
        "n_items": 0,
        "macro_f1": None,
        "macro_kappa": None,
        "strategies": [],
    }
    if label_set is None or not consensus:
        return report
    llm = dict(
        CompletionLabels.objects.filter(
            label_set=label_set, completion_id__in=list(consensus)
        ).values_list("completion_id", "present")
    )
    shared = [pk for pk in consensus if pk in llm]
    names = strategies.STRATEGY_NAMES
    result = label_agreement(
        present_table({pk: llm[pk] for pk in shared}, names),
        present_table({pk: consensus[pk] for pk in shared}, names),
        names,
    )
    report.update(
        n_items=result.n_items,
        macro_f1=_num(result.macro_f1),
        macro_kappa=_num(result.macro_kappa),
        strategies=[
            {"strategy": name, **{k: int(v) if k in COUNTS else _num(v) for k, v in row.items()}}
            for name, row in result.per_strategy.iterrows()
        ],
    )
    return report


def _num(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    if number != number:  # NaN: the statistic is undefined here
        return None
    return round(number, 4)
