"""Quality control for human raters (paper 9.6): gold and attention items, and flagging.

Rules (docs/raters.md repeats them):
- a gold item passes when the rater prefers the known better reply, at either strength;
- an attention item passes only with the exact scale point its instruction asks for;
- a rater is flagged when they failed at least half of their checks, once at least
  `MIN_CHECKS` checks are answered;
- or when their median time on real items is anomalous: below the absolute floor
  `TIME_FLOOR_MS`, or below `RELATIVE_TIME_FLOOR` times the study's median of per-rater
  medians (counted only once `MIN_TIMED_ITEMS` items and `MIN_RATERS_FOR_MEDIAN` raters exist).
A flagged rater is excluded from analysis (`Rater.excluded`) unless an admin overrides it.
"""

from __future__ import annotations

import statistics
import threading
from typing import TYPE_CHECKING, Any

from cachetools import TTLCache
from django.db import connection, transaction

from completions.models import Study

from .models import AXES, AXIS_NAMES, QualityCheckItem, Rater
from .selectors import quality_item_count_forget, rater_stats

if TYPE_CHECKING:
    from django.db.models import Q

MIN_CHECKS = 2
FAIL_SHARE = 0.5
TIME_FLOOR_MS = 3000
RELATIVE_TIME_FLOOR = 0.25
MIN_TIMED_ITEMS = 3
MIN_RATERS_FOR_MEDIAN = 3

# Paper Table 2: descriptions and contrasting examples per axis.
RUBRIC = {
    "H": {
        "description": "Natural, human-like tone and flow (clear, grounded, non-robotic).",
        "high": "I hear you, and it sounds like you're feeling really stuck and disconnected "
        "right now. That heaviness can be so overwhelming.",
        "low": "Whats been going on. You are feeling bad. This is not good situation.",
    },
    "E": {
        "description": "Warm, non-judgmental acknowledgement and validation of feelings.",
        "high": "I'm so sorry you're going through this\u2014that must feel absolutely "
        "devastating, especially being separated from your kids.",
        "low": "That sucks. Anyway, lots of people go through this, so you'll probably get "
        "over it.",
    },
    "A": {
        "description": "Tracks this seeker's specific details and emotions, not just generic "
        "platitudes.",
        "high": "I hear you\u2014feeling stuck at home while your friends move on can drain "
        "your motivation and make everything feel overwhelming. You're not lazy; "
        "you're exhausted and discouraged.",
        "low": "I get that life can be hard sometimes. Just try to stay positive and things "
        "will work out eventually.",
    },
    "R": {
        "description": "Feels personally relevant and tailored to the seeker's goals, "
        "identity, and situation.",
        "high": "You've mentioned how much finishing this degree matters to you and your "
        "family. What if we pick one small step that fits your style\u2014like "
        "outlining just the first section tonight so it feels less impossible?",
        "low": "Everyone feels stressed about school. You should just work harder and stay "
        "motivated like other successful people do.",
    },
    "T": {
        "description": "Stays within role and safety boundaries while addressing the "
        "seeker's stated goals.",
        "high": "I understand your concerns about the vaccine\u2014that's ultimately your "
        "decision. Since I can't give medical advice, we could instead focus on ways "
        "to help you feel less isolated right now.",
        "low": "You should definitely get the vaccine; it's safe for almost everyone and will "
        "fix a lot of your problems. If your doctor disagrees, they're probably just "
        "being overly cautious.",
    },
}


def rubric_rows() -> list[dict[str, str]]:
    return [{"axis": axis, "name": AXIS_NAMES[axis], **RUBRIC[axis]} for axis in AXES]


# Short dialogue histories the rubric's examples answer (written for the checks).
_GOLD_TURNS = {
    "H": [
        "Hi, how are you doing today?",
        "Not great. I feel stuck and disconnected from everyone lately, and it's heavy.",
    ],
    "E": [
        "Hello, what would you like to talk about?",
        "My divorce went through and I only see my kids every other weekend now. "
        "I can't stop crying.",
    ],
    "A": [
        "Hi there, how has your week been?",
        "I'm stuck at home while all my friends are moving on with jobs and plans. "
        "I can't even get out of bed. Maybe I'm just lazy.",
    ],
    "R": [
        "Hi, what's on your mind?",
        "My thesis is due soon and I'm the first in my family to go to university. "
        "I'm so behind that I can't even start.",
    ],
    "T": [
        "Hello, how can I support you today?",
        "Everyone keeps pushing me to get the vaccine and I'm not sure. I already feel "
        "so isolated because of arguing about it.",
    ],
}
_ATTENTION: list[dict[str, Any]] = [
    {
        "turns": [
            "Hi, how are you feeling today?",
            "Pretty anxious. I have a job interview tomorrow and I can't sleep.",
        ],
        "text_a": "That sounds nerve-racking. Interviews can feel like so much is riding on "
        "them. What part of tomorrow worries you most?",
        "text_b": "To show you are reading carefully, please choose 'B is significantly better "
        "than A' for this item.",
        "expected": "b",
        "expected_choice": 5,
    },
    {
        "turns": [
            "Hello, what's been going on?",
            "My best friend stopped talking to me and I don't know why.",
        ],
        "text_a": "To show you are reading carefully, please choose 'A is slightly better "
        "than B' for this item.",
        "text_b": "Losing contact with a close friend without knowing why can really hurt. "
        "Have you had a chance to reach out to them?",
        "expected": "a",
        "expected_choice": 2,
    },
]


def _turns(supporter: str, seeker: str) -> list[dict[str, str]]:
    return [{"speaker": "supporter", "text": supporter}, {"speaker": "seeker", "text": seeker}]


# Rubric pairs for checks and qualification: (better, weaker) per axis. A script that always
# picks the longer reply must not pass them, so the better reply is the shorter one for E, A
# and T (a long dismissive, generic or off-role reply against a short attuned one) and the
# longer one for H and R, as the rubric's own examples are (annotation/bots.py scores this).
RUBRIC_PAIRS: dict[str, tuple[str, str]] = {
    "H": (RUBRIC["H"]["high"], RUBRIC["H"]["low"]),
    "E": (
        RUBRIC["E"]["high"],
        "That sucks. Anyway, lots of people go through divorces these days and they all get "
        "through it, so you'll probably get over it soon enough. Try to keep busy, maybe take "
        "up a hobby or go to the gym, and try not to cry in front of the kids because they "
        "will notice.",
    ),
    "A": (
        RUBRIC["A"]["high"],
        "I get that life can be hard sometimes, and lots of people feel this way at one point "
        "or another. Just try to stay positive, set yourself some goals, get up a bit earlier "
        "and things will work out eventually. Everyone has their own timeline, so there is no "
        "point comparing yourself to anyone else.",
    ),
    "R": (RUBRIC["R"]["high"], RUBRIC["R"]["low"]),
    "T": (
        "That's your decision to make, and I can't give medical advice. Could we talk about how "
        "isolated the arguments have left you feeling?",
        RUBRIC["T"]["low"],
    ),
}


@transaction.atomic
def quality_items_seed_from_rubric(*, study: Study) -> list[QualityCheckItem]:
    """Gold items from Table 2 (a better and a weaker reply per axis) plus attention items.

    Short two-turn conversations written for the rubric: a study's own checks
    (`annotation.services.checks`) look more like its items; these suit a quick trial.
    Idempotent: items are keyed by their note ("rubric:H", "attention:1", ...).
    """
    existing = set(QualityCheckItem.objects.filter(study=study).values_list("note", flat=True))
    created = []
    for i, axis in enumerate(AXES):
        note = f"rubric:{axis}"
        if note in existing:
            continue
        better, weaker = RUBRIC_PAIRS[axis]
        # Alternate the stored side so "a" is not always the better reply.
        text_a, text_b, expected = (better, weaker, "a") if i % 2 == 0 else (weaker, better, "b")
        created.append(
            QualityCheckItem(
                study=study,
                kind=QualityCheckItem.Kind.GOLD,
                turns=_turns(*_GOLD_TURNS[axis]),
                text_a=text_a,
                text_b=text_b,
                expected=expected,
                note=note,
            )
        )
    for i, spec in enumerate(_ATTENTION, start=1):
        if f"attention:{i}" in existing:
            continue
        created.append(
            QualityCheckItem(
                study=study,
                kind=QualityCheckItem.Kind.ATTENTION,
                turns=_turns(*spec["turns"]),
                text_a=spec["text_a"],
                text_b=spec["text_b"],
                expected=spec["expected"],
                expected_choice=spec["expected_choice"],
                note=f"attention:{i}",
            )
        )
    items = QualityCheckItem.objects.bulk_create(created)
    quality_item_count_forget(study=study)
    return items


# --- Flagging -----------------------------------------------------------------------------


# The same median computed by PostgreSQL: every rater's finish (the done page) asks for it, and
# reading every human judgment of the study into Python on each finish made the done page the
# dearest page of a launch burst (docs/benchmarks.md, "Launch burst").
_STUDY_MEDIAN_SQL = """
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY median_ms), count(*) FROM (
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY j.duration_ms) AS median_ms
        FROM annotation_judgment j JOIN annotation_rater r ON r.id = j.rater_id
        WHERE j.study_id = %s AND r.study_id = %s AND j.judge_kind = 'human'
          AND NOT j.quality_check
        GROUP BY j.rater_id
        HAVING count(*) >= %s AND count(j.duration_ms) > 0
    ) per_rater
"""


#: A finishing rater is compared with the study median as it was up to this long ago, kept
#: per process: the median of per-rater medians moves slowly, and computing it sorts every
#: human judgment of the study, which on each finish made the done page a launch burst's
#: slowest page (1,000 raters: the database spent 93 % of its time on this one query).
MEDIAN_TTL = 60.0
_medians: TTLCache[tuple[Any, ...], float] = TTLCache(maxsize=1024, ttl=MEDIAN_TTL)
_medians_lock = threading.Lock()  # a TTLCache is not safe across threads (gthread workers)


def study_median_time_ms_recent(*, study: Study) -> float | None:
    """`study_median_time_ms`, as computed by this process within the last `MEDIAN_TTL`
    seconds. "Too few raters" is not kept: it is cheap to ask again, and the first raters
    past the minimum are then compared with a median as soon as there is one."""
    key = (study.pk, study.created_at)
    with _medians_lock:
        median = _medians.get(key)
    if median is None:
        median = study_median_time_ms(study=study)
        if median is not None:
            with _medians_lock:
                _medians[key] = median
    return median


def study_median_time_ms(*, study: Study) -> float | None:
    """Median over raters of each rater's median time on real items (None if too few)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_STUDY_MEDIAN_SQL, [study.pk, study.pk, MIN_TIMED_ITEMS])
            median, n_raters = cursor.fetchone()
        return float(median) if n_raters >= MIN_RATERS_FOR_MEDIAN else None
    medians = [
        s.median_ms
        for s in rater_stats(study=study)
        if s.median_ms is not None and s.n_real >= MIN_TIMED_ITEMS
    ]
    return statistics.median(medians) if len(medians) >= MIN_RATERS_FOR_MEDIAN else None


def flag_reason(
    *,
    n_checks: int,
    n_passed: int,
    n_real: int,
    median_ms: float | None,
    study_median_ms: float | None,
) -> str:
    """Why a rater is flagged, or "" when they are not (pure: the rules in one place)."""
    reasons = []
    failed = n_checks - n_passed
    if n_checks >= MIN_CHECKS and failed >= FAIL_SHARE * n_checks:
        reasons.append(f"failed {failed} of {n_checks} quality checks")
    if median_ms is not None and n_real >= MIN_TIMED_ITEMS:
        if median_ms < TIME_FLOOR_MS:
            reasons.append(
                f"median time {median_ms / 1000:.1f} s is below the "
                f"{TIME_FLOOR_MS / 1000:.0f} s floor"
            )
        elif study_median_ms and median_ms < RELATIVE_TIME_FLOOR * study_median_ms:
            reasons.append(
                f"median time {median_ms / 1000:.1f} s is under "
                f"{RELATIVE_TIME_FLOOR:.0%} of the study median "
                f"{study_median_ms / 1000:.1f} s"
            )
    return "; ".join(reasons)


def rater_quality_update(
    *, rater: Rater, with_timing: bool = True, study_median_ms: float | None = None
) -> Rater:
    """Recompute one rater's flag.

    Without `with_timing` the relative-time rule (which needs the whole study's timings) is
    skipped, which keeps this cheap enough to run after every quality-check submit.
    """
    stats = rater_stats(study=rater.study, raters=[rater])[0]
    if with_timing and study_median_ms is None:
        study_median_ms = study_median_time_ms_recent(study=rater.study)
    reason = flag_reason(
        n_checks=stats.n_checks,
        n_passed=stats.n_passed,
        n_real=stats.n_real,
        median_ms=stats.median_ms,
        study_median_ms=study_median_ms if with_timing else None,
    )
    if (rater.flagged, rater.flag_reason) != (bool(reason), reason[:300]):
        rater.flagged, rater.flag_reason = bool(reason), reason[:300]
        rater.save(update_fields=["flagged", "flag_reason"])
    return rater


def study_quality_update(*, study: Study) -> int:
    """Re-flag every rater of a study (on demand); returns how many are flagged."""
    median = study_median_time_ms(study=study)
    raters = list(Rater.objects.filter(study=study).select_related("study"))
    for rater in raters:
        rater_quality_update(rater=rater, with_timing=True, study_median_ms=median)
    return sum(r.flagged for r in raters)


def judgments_excluded_q() -> Q:
    """Judgments of excluded raters (flagged without an include override, or excluded)."""
    from django.db.models import Q

    return (Q(rater__flagged=True) & ~Q(rater__exclusion_override=False)) | Q(
        rater__exclusion_override=True
    )
