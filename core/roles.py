"""The roles a view serves: every view declares one, so none is reachable by accident."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

# Every view declares who it is for: its decorator sets `view.heart_role` to one of these, and
# tests/heart_site/test_url_roles.py walks every URL the resolver knows and fails for a view
# without one. DRF views declare it as a class attribute `heart_role`.
# "monitoring" is the Prometheus scraper (core/metrics.py: a bearer token or an address
# allow-list, no account).
ROLES = ("public", "rater", "writer", "labeller", "study_admin", "monitoring")

# A view function, kept as it is by the decorators below (they only add an attribute).
View = TypeVar("View", bound=Callable[..., Any])


def role(name: str) -> Callable[[View], View]:
    """Mark a view with the role it serves (for views whose access check is inside)."""
    if name not in ROLES:
        raise ValueError(f"unknown role {name!r}")

    def mark(view: View) -> View:
        view.heart_role = name  # type: ignore[attr-defined]
        return view

    return mark
