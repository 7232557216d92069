"""What a study's target separability needs, read from its stored grade: pure Python, so the
leaderboard page serves the grade without loading numpy, pandas or SciPy (the grade itself is
computed in ``ranking.study_quality`` when the board is refitted, in a worker).

``separation_factors`` (in ``ranking.study_quality``) gives, for each pair of systems, the
multiple of today's judgments at which their 95 % intervals stop overlapping (intervals narrow as
1/√n); ``judgments_needed`` turns those into the judgments a target share of separated pairs
needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def judgments_needed(
    factors: Sequence[float | None], n_judgments: int, target: float
) -> dict[str, Any]:
    """The judgments a board would need for ``target`` separability (share of system pairs),
    projected from ``separation_factors``: the smallest multiple of the study's judgments at
    which that share of pairs no longer overlap. ``additional`` is what remains to be
    collected (0 when the target is met); None when the target needs pairs whose estimates are
    equal (no number of judgments separates them)."""
    result: dict[str, Any] = {"target": target, "judgments": n_judgments}
    if not factors:
        return dict(result, needed=None, additional=None)
    k = max(1, math.ceil(target * len(factors) - 1e-9))
    factor = factors[k - 1]
    if factor is None:
        return dict(result, needed=None, additional=None)
    needed = math.ceil(n_judgments * max(factor, 1.0))
    return dict(result, needed=needed, additional=max(needed - n_judgments, 0))


def section_judgments_needed(
    section: dict[str, Any], target: float, board_name: str = "human"
) -> dict[str, Any]:
    """What the admin's ``target`` separability needs on ``board_name`` (from a stored
    ``study_quality`` section: its separation factors)."""
    separation = (section.get("separation") or {}).get(board_name)
    if not separation:
        return {
            "board": board_name,
            "target": target,
            "judgments": 0,
            "needed": None,
            "additional": None,
        }
    result = judgments_needed(separation["factors"], separation["judgments"], target)
    current = (section.get("separability") or {}).get(board_name) or {}
    return dict(result, board=board_name, separability=current.get("value"))


def study_quality_served(section: dict[str, Any], target: float) -> dict[str, Any]:
    """The contract's shape of a stored ``study_quality`` section for the study's target."""
    served = {k: v for k, v in section.items() if k != "separation"}
    served["judgments_needed"] = section_judgments_needed(section, target)
    return served
