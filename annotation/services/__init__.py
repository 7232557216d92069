"""The rater workflow: entry, consent, the assignment engine and judgment submission.

Public services (keyword-only, transactional) are re-exported here:
`annotation.services.assignment_next`, `judgment_submit`, `judgment_submit_and_next`, ...
"""

from __future__ import annotations

from .assignments import assignment_keepalive, assignment_next
from .common import (
    HUMAN_STRENGTH_MAX,
    LEASE_RAN_OUT,
    PAIR_FULL,
    SCALE,
    STOPPED,
    AssignmentNotFound,
    ClaimBusy,
    SubmitResult,
)
from .judgments import (
    axes_to_canonical,
    choice_to_verdict,
    judgment_submit,
    judgment_submit_and_next,
)
from .raters import (
    ProlificMismatch,
    StudyFull,
    active_rater_count,
    prolific_rater_resumable,
    rater_consent,
    rater_enter,
    rater_finish,
    rater_join,
    rater_set_exclusion,
    rater_withdraw,
)

__all__ = [
    "LEASE_RAN_OUT",
    "PAIR_FULL",
    "HUMAN_STRENGTH_MAX",
    "SCALE",
    "STOPPED",
    "AssignmentNotFound",
    "ClaimBusy",
    "ProlificMismatch",
    "StudyFull",
    "active_rater_count",
    "assignment_keepalive",
    "prolific_rater_resumable",
    "rater_join",
    "SubmitResult",
    "assignment_next",
    "axes_to_canonical",
    "choice_to_verdict",
    "judgment_submit",
    "judgment_submit_and_next",
    "rater_consent",
    "rater_enter",
    "rater_finish",
    "rater_set_exclusion",
    "rater_withdraw",
]
