"""A study's contexts and completions in their contract form (completions.formats), streamed.

Used by the API, the downloads page and the release bundle. Rows come from `values()` over the
joins, read with `iterator()` (a server-side cursor on PostgreSQL): constant memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from django.db.models import QuerySet

from .models import Completion, DialogueContext, Study

CHUNK = 2000
CONTEXT_FIELDS = [
    "id",
    "turns",
    "emotion_type",
    "problem_type",
    "adversarial",
    "escalation_profile",
    "source",
    "source_id",
    "metadata",
]
CONTEXT_VALUES = {"id": "external_id", **{f: f for f in CONTEXT_FIELDS if f != "id"}}
COMPLETION_VALUES = {
    "context_id": "context__external_id",
    "system": "system__name",
    "family": "system__family",
    "kind": "system__kind",
    "text": "text",
    "text_unknown": "text_unknown",
    "ttft_ms": "ttft_ms",
    "latency_ms": "latency_ms",
    "provenance": "provenance",
    "metadata": "metadata",
}
COMPLETION_FIELDS = list(COMPLETION_VALUES)


def context_values(study: Study) -> QuerySet[DialogueContext, dict[str, Any]]:
    rows = DialogueContext.objects.filter(study=study).values("id", *CONTEXT_VALUES.values())
    # The django-stubs plugin types values() of unpacked field names as Any.
    return cast(QuerySet[DialogueContext, dict[str, Any]], rows)


def context_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {name: row[column] for name, column in CONTEXT_VALUES.items()}
    out["escalation_profile"] = out["escalation_profile"] or None
    return out


def completion_values(study: Study) -> QuerySet[Completion, dict[str, Any]]:
    rows = Completion.objects.filter(context__study=study).values("id", *COMPLETION_VALUES.values())
    # The django-stubs plugin types values() of unpacked field names as Any.
    return cast(QuerySet[Completion, dict[str, Any]], rows)


def completion_row(row: dict[str, Any]) -> dict[str, Any]:
    """A completion in the completions format plus `text_unknown` (a placeholder's text is
    null: unknown, never shown to raters)."""
    out = {name: row[column] for name, column in COMPLETION_VALUES.items()}
    if out["text_unknown"]:
        out["text"] = None
    return out


def context_rows(study: Study) -> Iterator[dict[str, Any]]:
    for row in context_values(study).order_by("id").iterator(chunk_size=CHUNK):
        yield context_row(row)


def completion_rows(study: Study) -> Iterator[dict[str, Any]]:
    for row in completion_values(study).order_by("id").iterator(chunk_size=CHUNK):
        yield completion_row(row)
