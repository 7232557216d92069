"""Cohorts: which group of people a rater or writer belongs to (crowd, clinician, or a label
the study admin defines), set by the entry link the admin hands out.

An entry link names its cohort in a signed ``cohort`` query parameter (``clinician:<signature>``),
so a participant cannot move themselves into another cohort by editing the link; the signature
is bound to the study. A study may also name a URL parameter (e.g. one its Prolific study URL
carries) whose plain value is a cohort label. A link without either is the "crowd" cohort, so
links handed out before cohorts existed keep working.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from django.core import signing

if TYPE_CHECKING:
    from .models import Study

CROWD = "crowd"
CLINICIAN = "clinician"
BUILT_IN = (CROWD, CLINICIAN)
DEFAULT = CROWD
#: The query parameter of a cohort entry link.
PARAMETER = "cohort"
LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


class CohortRefused(Exception):
    """An entry link's cohort is unknown to the study or its signature does not match."""


def parse_labels(text: str) -> list[str]:
    """The study's own cohort labels from a comma- or line-separated text (lower case).

    Raises ValueError naming a label that is not 1-40 letters, digits, dashes or underscores.
    """
    labels: list[str] = []
    for raw in re.split(r"[,\n]", text or ""):
        label = raw.strip().lower()
        if not label:
            continue
        if not LABEL_RE.match(label):
            raise ValueError(
                f"{raw.strip()!r} is not a cohort label: use 1-40 lower-case letters, digits, "
                "dashes or underscores, starting with a letter or digit."
            )
        if label not in labels and label not in BUILT_IN:
            labels.append(label)
    return labels


def study_cohorts(study: Study) -> list[str]:
    """Every cohort of the study: the built-ins first, then the admin's labels."""
    return [*BUILT_IN, *parse_labels(study.cohort_labels)]


def _signer(study: Study) -> signing.Signer:
    return signing.Signer(salt=f"heart.cohort.{study.pk}")


def cohort_link_value(study: Study, label: str) -> str:
    """The signed value of the ``cohort`` parameter of an entry link for ``label``."""
    return _signer(study).sign(label)


def cohort_links(study: Study, base_url: str) -> list[tuple[str, str]]:
    """(label, entry URL) per cohort; the crowd's link is the plain link (no parameter)."""
    joiner = "&" if "?" in base_url else "?"
    links = [(CROWD, base_url)]
    for label in study_cohorts(study)[1:]:
        links.append((label, f"{base_url}{joiner}{PARAMETER}={cohort_link_value(study, label)}"))
    return links


def cohort_from_params(study: Study, params: Mapping[str, str]) -> str:
    """The cohort an entry request asks for: signed ``cohort`` parameter, else the study's
    named URL parameter, else the default. Raises CohortRefused for an unknown or forged one."""
    known = study_cohorts(study)
    signed = (params.get(PARAMETER) or "").strip()
    if signed:
        try:
            label = _signer(study).unsign(signed[:200])
        except signing.BadSignature as exc:
            raise CohortRefused("This link's cohort does not belong to this study.") from exc
        if label not in known:
            raise CohortRefused(f"This study has no cohort {label!r} any more.")
        return label
    name = (study.cohort_parameter or "").strip()
    plain = (params.get(name) or "").strip().lower() if name else ""
    if plain:
        if plain not in known:
            raise CohortRefused(f"This study has no cohort {plain[:40]!r}.")
        return plain
    return DEFAULT
