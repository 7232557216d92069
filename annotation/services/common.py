"""Shared definitions of the rater services: the scale, results and errors."""

from __future__ import annotations

from dataclasses import dataclass

from ..models import Judgment

SCALE = {
    1: "A is significantly better than B",
    2: "A is slightly better than B",
    3: "A and B are about the same",
    4: "B is slightly better than A",
    5: "B is significantly better than A",
}
HUMAN_STRENGTH_MAX = 2


class AssignmentNotFound(Exception):
    """The assignment does not exist or is not this rater's."""


@dataclass(frozen=True)
class SubmitResult:
    """`judgment` is None when a late submit was refused (its pair filled up meanwhile)."""

    judgment: Judgment | None
    created: bool

    @property
    def refused(self) -> bool:
        return self.judgment is None
