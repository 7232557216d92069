"""Reads for the study material (contexts, systems, completions)."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from ..models import Study, System


def study_get(*, slug: str) -> Study | None:
    return Study.objects.filter(slug=slug).first()


def system_list(*, study: Study) -> QuerySet[System]:
    """A study's systems with how many completions each has."""
    return (
        System.objects.filter(study=study)
        .annotate(n_completions=Count("completions"))
        .order_by("name")
    )
