"""A study's Prolific settings (token stored encrypted), its submissions as Prolific reports
them, and every payment action sent (so none is sent twice)."""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Q

from annotation.models import Rater
from completions.models import Study


class CompletedAction(models.TextChoices):
    AUTOMATICALLY_APPROVE = "AUTOMATICALLY_APPROVE", "Approve automatically"
    MANUALLY_REVIEW = "MANUALLY_REVIEW", "Review by hand (approve with Pay)"


class ProlificSettings(models.Model):
    """One study's Prolific link: the token, the pay and the study on Prolific once published."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="prolific")
    api_token_encrypted = models.TextField(
        blank=True, help_text="The Prolific API token, encrypted (never shown)."
    )
    api_token_hint = models.CharField(max_length=20, blank=True)
    currency = models.CharField(max_length=3, default="GBP")
    hourly_rate = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("9.00"),
        help_text="Pay per hour worked, in the currency above (Prolific's reward is set from it).",
    )  # fmt: skip
    estimated_minutes = models.PositiveSmallIntegerField(
        default=20, help_text="How long the study takes (Prolific shows it; the reward follows)."
    )
    places = models.PositiveIntegerField(default=50, help_text="Participants to recruit.")
    completed_action = models.CharField(
        max_length=24, choices=CompletedAction.choices, default=CompletedAction.MANUALLY_REVIEW
    )
    participant_group = models.BooleanField(
        default=True,
        help_text="Add raters who complete the study to a participant group the next study "
        "can invite.",
    )
    bonus_per_rater = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0.00"),
        help_text="Bonus for every rater who completes the study and is not rejected.",
    )  # fmt: skip
    bonus_per_writing = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0.00"),
        help_text="Bonus for every accepted writer text (writers who came from Prolific).",
    )  # fmt: skip
    prolific_study_id = models.CharField(max_length=64, blank=True)
    participant_group_id = models.CharField(max_length=64, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(hourly_rate__gte=0)
                & Q(bonus_per_rater__gte=0)
                & Q(bonus_per_writing__gte=0),
                name="prolific_amounts_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return f"Prolific settings of {self.study}"

    @property
    def reward_cents(self) -> int:
        """Prolific's reward (in cents/pence) for the estimated time at the hourly rate."""
        return int((self.hourly_rate * self.estimated_minutes * 100 / 60).quantize(Decimal(1)))


class ProlificSubmission(models.Model):
    """A submission as Prolific last reported it (`prolific sync`)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    submission_id = models.CharField(max_length=64)
    participant_id = models.CharField(max_length=200)
    rater = models.ForeignKey(
        Rater, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=32)
    study_code = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "submission_id"], name="prolific_submission_once"
            ),
        ]
        indexes = [models.Index(fields=["study", "participant_id"], name="prolific_sub_pid")]

    def __str__(self) -> str:
        return f"submission {self.submission_id} ({self.status})"


class ProlificAction(models.Model):
    """One thing sent to Prolific for one participant: approve, screen out, reject, a bonus,
    adding to the participant group. Unique per participant and kind: never sent twice."""

    class Kind(models.TextChoices):
        APPROVE = "APPROVE"
        SCREEN_OUT = "SCREEN_OUT"
        REJECT = "REJECT"
        BONUS = "BONUS"
        GROUP = "GROUP"

    class Status(models.TextChoices):
        SENDING = "sending"  # claimed; a failure leaves it here, to be checked on Prolific
        DONE = "done"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    participant_id = models.CharField(max_length=200)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    amount = models.DecimalField(max_digits=10, decimal_places=2, default=Decimal("0.00"))
    reason = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.SENDING)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "participant_id", "kind"], name="prolific_action_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.participant_id}"
