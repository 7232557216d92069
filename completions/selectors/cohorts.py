"""Reads about cohorts for the studio: each cohort's entry link and how many people it has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Model, Q, QuerySet

from .. import cohorts
from ..models import Study


@dataclass(frozen=True)
class CohortRow:
    label: str
    link: str
    total: int  # everyone who entered by this cohort's link
    consented: int
    finished: int


def cohort_rows(*, study: Study, people: QuerySet[Model, Any], base_url: str) -> list[CohortRow]:
    """One row per cohort of the study (the built-ins and the admin's labels), plus any label
    people still carry after the admin removed it. `people` is the study's raters or writers."""
    counts = {
        row["cohort"]: row
        for row in people.values("cohort").annotate(
            total=Count("id"),
            consented=Count("id", filter=Q(consented_at__isnull=False)),
            finished=Count("id", filter=Q(finished_at__isnull=False)),
        )
    }
    links = dict(cohorts.cohort_links(study, base_url))
    labels = [*links, *sorted(set(counts) - set(links))]
    empty = {"total": 0, "consented": 0, "finished": 0}
    return [
        CohortRow(
            label=label,
            link=links.get(label, ""),
            total=counts.get(label, empty)["total"],
            consented=counts.get(label, empty)["consented"],
            finished=counts.get(label, empty)["finished"],
        )
        for label in labels
    ]
