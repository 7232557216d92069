"""Reads: each rater's outcome and what Prolific should do with them, the pay plan, the costs.

`rater_outcomes` is the one place an outcome is decided; the raters page, the API, the CSV and
`prolific pay` all read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Judgment, QualityCheckItem, Rater
from care.models import Outcome as CareOutcome
from care.models import RaterCare
from care.selectors import care_settings, rater_time_rows
from completions.models import Study

from .models import ProlificAction, ProlificSettings, ProlificSubmission

OUTCOMES = ("completed", "screened_out", "stopped", "excluded", "returned", "timed_out")
ACTIONS = ("APPROVE", "SCREEN_OUT", "REJECT", "NONE")
#: Prolific lets a researcher reject for failed attention checks only when at least two fair
#: ones (an explicit instruction, not a matter of judgment) were failed.
REJECT_MIN_FAILED_ATTENTION = 2
PROLIFIC_GONE = {"RETURNED": "returned", "TIMED-OUT": "timed_out"}
CENT = Decimal("0.01")


@dataclass(frozen=True)
class RaterOutcome:
    """One rater: the outcome (None while still working), the Prolific action and why."""

    rater: Rater
    outcome: str | None
    action: str
    excluded_from_analysis: bool
    reason: str
    seconds_worked: int
    failed_attention: int
    bonus: Decimal
    submission: ProlificSubmission | None

    @property
    def participant_id(self) -> str:
        return self.rater.external_id

    @property
    def minutes_worked(self) -> float:
        return round(self.seconds_worked / 60, 1)


def prolific_settings(*, study: Study) -> ProlificSettings:
    """The study's Prolific settings (unsaved defaults when none were saved)."""
    found = ProlificSettings.objects.filter(study=study).first()
    return found if found is not None else ProlificSettings(study=study)


def rater_outcomes(*, study: Study) -> list[RaterOutcome]:
    """Every rater of the study, in the order they came, with their outcome and action.

    Precedence: what the rater did here (screened out, stopped: they are then asked to return
    the submission, so Prolific's "returned" says less), over what Prolific says (returned,
    timed out), over the quality rules (excluded), over finishing (completed).
    """
    raters = list(
        Rater.objects.filter(study=study).select_related("care").order_by("created_at", "pk")
    )
    worked = {row.pseudonym: row.seconds_worked or 0 for row in rater_time_rows(study=study)}
    failed = dict(
        Judgment.objects.filter(
            study=study,
            quality_item__kind=QualityCheckItem.Kind.ATTENTION,
            passed_check=False,
            rater__isnull=False,
        )
        .values_list("rater_id")
        .annotate(n=Count("pk"))
    )
    submissions: dict[str, ProlificSubmission] = {}
    for sub in ProlificSubmission.objects.filter(study=study).order_by("started_at", "pk"):
        submissions[sub.participant_id] = sub  # the latest attempt counts
    care = care_settings(study=study)
    pay = prolific_settings(study=study)
    return [
        _outcome(
            rater,
            seconds=worked.get(rater.pseudonym, 0),
            failed_attention=failed.get(rater.pk, 0),
            submission=submissions.get(rater.external_id) if rater.external_id else None,
            fail_outcome=care.fail_outcome,
            stop_outcome=care.stop_outcome,
            pay=pay,
        )
        for rater in raters
    ]


Decision = tuple[str | None, str, str, Decimal]  # outcome, action, reason, bonus


def _outcome(
    rater: Rater,
    *,
    seconds: int,
    failed_attention: int,
    submission: ProlificSubmission | None,
    fail_outcome: str,
    stop_outcome: str,
    pay: ProlificSettings,
) -> RaterOutcome:
    outcome, action, reason, bonus = _decide(
        rater,
        failed_attention=failed_attention,
        submission=submission,
        fail_outcome=fail_outcome,
        stop_outcome=stop_outcome,
        time_pay=(pay.hourly_rate * seconds / 3600).quantize(CENT, ROUND_HALF_UP),
        bonus=pay.bonus_per_rater,
    )
    # A rater who withdrew has no answer left in the study: out of the analysis, whatever flags.
    excluded = rater.excluded or rater.withdrawn_at is not None
    return RaterOutcome(
        rater=rater, outcome=outcome, action=action, excluded_from_analysis=excluded,
        reason=reason, seconds_worked=seconds, failed_attention=failed_attention, bonus=bonus,
        submission=submission,
    )  # fmt: skip


def _decide(
    rater: Rater,
    *,
    failed_attention: int,
    submission: ProlificSubmission | None,
    fail_outcome: str,
    stop_outcome: str,
    time_pay: Decimal,
    bonus: Decimal,
) -> Decision:
    care: RaterCare | None = getattr(rater, "care", None)
    none = Decimal(0)
    if care is not None and care.qualification == RaterCare.Qualification.FAILED:
        return _left_early("screened_out", fail_outcome, time_pay)
    if rater.withdrawn_at is not None:  # they left early, taking their answers with them
        on = timezone.localdate(rater.withdrawn_at).isoformat()
        return _left_early(
            "stopped", stop_outcome, time_pay, what=f"withdrew their answers on {on}"
        )
    if care is not None and care.stopped_at is not None:
        return _left_early("stopped", stop_outcome, time_pay)
    if submission is not None and submission.status in PROLIFIC_GONE:
        gone = PROLIFIC_GONE[submission.status]
        words = "returned the study" if gone == "returned" else "ran out of Prolific's time"
        return gone, "NONE", f"{words} on Prolific: nothing to approve", none
    if rater.finished_at is None:
        return None, "NONE", "still working", none
    if not rater.excluded:
        return "completed", "APPROVE", "finished the study", bonus
    why = rater.exclusion_reason or rater.flag_reason or "excluded by the quality rules"
    if failed_attention >= REJECT_MIN_FAILED_ATTENTION:
        reason = f"excluded ({why}); failed {failed_attention} attention checks: reject"
        return "excluded", "REJECT", reason, none
    reason = (
        f"excluded from the analysis ({why}), but failed {failed_attention} attention "
        f"check(s), fewer than the {REJECT_MIN_FAILED_ATTENTION} Prolific requires to "
        "reject: approve"
    )
    return "excluded", "APPROVE", reason, bonus


def _left_early(outcome: str, paid_as: str, time_pay: Decimal, *, what: str = "") -> Decision:
    what = what or ("failed the qualification" if outcome == "screened_out" else "stopped early")
    none = Decimal(0)
    if paid_as == CareOutcome.COMPLETION:
        return outcome, "APPROVE", f"{what}; the study pays this as complete (care settings)", none
    if paid_as == CareOutcome.RETURN:
        return outcome, "NONE", f"{what}; asked to return the study (care settings)", none
    if outcome == "screened_out":
        return outcome, "SCREEN_OUT", f"{what}: screen out (Prolific's screen-out pay)", none
    reason = f"{what}: asked to return the submission, the time worked paid as a bonus"
    return outcome, "NONE", reason, time_pay


def outcome_counts(rows: list[RaterOutcome]) -> dict[str, int]:
    counts = dict.fromkeys((*OUTCOMES, "working"), 0)
    for row in rows:
        counts[row.outcome or "working"] += 1
    return counts


# --- What a study costs -------------------------------------------------------------------


@dataclass(frozen=True)
class StudyCosts:
    """Money spent and committed, and a projection to the end of the study.

    Rater pay and bonuses are in the study's Prolific currency, LLM cost in US dollars (as the
    providers price it): the two are never added up.
    """

    currency: str
    hourly_rate: Decimal
    rater_minutes: float
    rater_pay: Decimal
    bonuses_due: Decimal
    bonuses_paid: Decimal
    llm_spent_usd: float
    llm_committed_usd: float
    judgments_done: int
    judgments_target: int

    @property
    def people_spent(self) -> Decimal:
        return self.rater_pay + self.bonuses_paid

    @property
    def people_committed(self) -> Decimal:
        return max(Decimal(0), self.bonuses_due - self.bonuses_paid).quantize(CENT)

    @property
    def done_fraction(self) -> float | None:
        if not self.judgments_target:
            return None
        return min(1.0, self.judgments_done / self.judgments_target)

    @property
    def people_projected(self) -> Decimal | None:
        """People's pay at the end: what the judgments so far cost, scaled to all of them."""
        done = self.done_fraction
        if not done:
            return None
        spent = self.people_spent + self.people_committed
        return (spent / Decimal(str(done))).quantize(CENT, ROUND_HALF_UP)

    @property
    def llm_projected_usd(self) -> float:
        # LLM runs are planned in advance: their cost at the end is what ran plus the budgets
        # still open, not a share of the human judgments.
        return round(self.llm_spent_usd + self.llm_committed_usd, 2)


def study_costs(*, study: Study) -> StudyCosts:
    from django.db.models import F, Sum
    from django.db.models.functions import Coalesce

    from annotation.models import Pair
    from llm.models import Run

    pay = prolific_settings(study=study)
    seconds = sum(row.seconds_worked or 0 for row in rater_time_rows(study=study))
    bonuses_due = sum((b.amount for b in bonus_plan(study=study)), Decimal(0))
    paid = ProlificAction.objects.filter(
        study=study, kind=ProlificAction.Kind.BONUS, status=ProlificAction.Status.DONE
    ).aggregate(s=Sum("amount"))["s"] or Decimal(0)
    runs = Run.objects.filter(study=study).aggregate(
        spent=Coalesce(Sum("cost"), 0.0),
        left=Coalesce(
            Sum(
                F("budget_usd") - F("cost"),
                filter=Q(status__in=["planned", "running"], budget_usd__gt=F("cost")),
            ),
            0.0,
        ),
    )
    pairs = Pair.objects.filter(study=study).aggregate(
        done=Coalesce(Sum("n_judgments"), 0), target=Coalesce(Sum("quota"), 0)
    )
    return StudyCosts(
        currency=pay.currency,
        hourly_rate=pay.hourly_rate,
        rater_minutes=round(seconds / 60, 1),
        rater_pay=(pay.hourly_rate * seconds / 3600).quantize(CENT, ROUND_HALF_UP),
        bonuses_due=bonuses_due.quantize(CENT),
        bonuses_paid=paid.quantize(CENT),
        llm_spent_usd=round(float(runs["spent"]), 4),
        llm_committed_usd=round(float(runs["left"]), 4),
        judgments_done=pairs["done"],
        judgments_target=pairs["target"],
    )


# --- The pay plan -------------------------------------------------------------------------


@dataclass(frozen=True)
class BonusLine:
    participant_id: str
    amount: Decimal
    reason: str


def bonus_plan(*, study: Study, rows: list[RaterOutcome] | None = None) -> list[BonusLine]:
    """Bonuses due: per rater (the outcome's bonus: the per-rater bonus, or the time worked of
    one who stopped) and per accepted writer text, for participants who came from Prolific."""
    from writing.models import Writer, Writing

    rows = rows if rows is not None else rater_outcomes(study=study)
    lines = [
        BonusLine(row.participant_id, row.bonus, row.reason)
        for row in rows
        if row.participant_id and row.bonus > 0
    ]
    per_text = prolific_settings(study=study).bonus_per_writing
    if per_text > 0:
        writers = (
            Writer.objects.filter(study=study)
            .exclude(external_id="")
            .annotate(n=Count("writings", filter=Q(writings__status=Writing.Status.ACCEPTED)))
            .filter(n__gt=0)
            .order_by("pk")
        )
        lines += [
            BonusLine(w.external_id, per_text * w.n, f"{w.n} accepted text(s) × {per_text}")
            for w in writers
        ]
    return lines
