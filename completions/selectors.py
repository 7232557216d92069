"""Reads for the study material (contexts, systems, completions)."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from .models import Completion, DialogueContext, Study, System


def study_get(*, slug: str) -> Study | None:
    return Study.objects.filter(slug=slug).first()


def context_list(*, study: Study) -> QuerySet[DialogueContext]:
    """A study's contexts with their completions and systems (no per-row queries)."""
    return (
        DialogueContext.objects.filter(study=study)
        .order_by("id")
        .prefetch_related("completions__system")
    )


def system_list(*, study: Study) -> QuerySet[System]:
    """A study's systems with how many completions each has."""
    return (
        System.objects.filter(study=study)
        .annotate(n_completions=Count("completions"))
        .order_by("name")
    )


def completion_for(*, context: DialogueContext, system_name: str) -> Completion | None:
    return (
        Completion.objects.select_related("system")
        .filter(context=context, system__name=system_name)
        .first()
    )


def contexts_without_turns(*, study: Study) -> QuerySet[DialogueContext]:
    """Placeholders made by a judgments import (turns unknown until a contexts import)."""
    return DialogueContext.objects.filter(study=study, turns=[])
