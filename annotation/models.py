"""The judging: pairs, raters, assignments, quality checks and judgments (human and LLM)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from completions.models import Completion, DialogueContext, Participant, Study, new_token

AXES = ("H", "E", "A", "R", "T")
AXIS_NAMES = {
    "H": "Human alignment",
    "E": "Empathic responsiveness",
    "A": "Attunement",
    "R": "Resonance",
    "T": "Task-following",
}


class Winner(models.TextChoices):
    A = "a"
    B = "b"
    TIE = "tie"


class Side(models.TextChoices):
    A = "a"
    B = "b"


class JudgeKind(models.TextChoices):
    HUMAN = "human"
    LLM = "llm"


class Pair(models.Model):
    """Two completions of the same context, stored unordered (a has the smaller id).

    The database also holds composite foreign keys (completion, context) -> Completion(id,
    context) so that a pair's two completions always share its context (migration 0002).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="pairs")
    context = models.ForeignKey(DialogueContext, on_delete=models.CASCADE, related_name="pairs")
    completion_a = models.ForeignKey(Completion, on_delete=models.CASCADE, related_name="+")
    completion_b = models.ForeignKey(Completion, on_delete=models.CASCADE, related_name="+")
    token = models.CharField(max_length=64, unique=True, default=new_token)
    # Human judgments stored so far, kept by the assignment engine in the same transaction as
    # the judgment; the check constraint makes an over-quota judgment impossible.
    n_judgments = models.PositiveIntegerField(default=0)
    quota = models.PositiveSmallIntegerField(default=5)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["completion_a", "completion_b"], name="pair_unique"),
            models.CheckConstraint(
                condition=Q(completion_a__lt=F("completion_b")), name="pair_canonical_order"
            ),
            models.CheckConstraint(
                condition=Q(n_judgments__lte=F("quota")), name="pair_within_quota"
            ),
        ]
        indexes = [models.Index(fields=["study", "n_judgments"], name="pair_study_fill")]

    def __str__(self) -> str:
        return f"pair {self.pk}"


class Rater(Participant):
    """A crowd rater in one study (the participant's fields: completions.models.Participant)."""

    # Quality control: computed flag plus an admin override (None = follow the flag).
    flagged = models.BooleanField(default=False)
    flag_reason = models.CharField(max_length=300, blank=True)
    exclusion_override = models.BooleanField(null=True, blank=True)
    # Who set the override, when and why (the per-rater payment table shows it).
    exclusion_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    exclusion_reason = models.CharField(max_length=500, blank=True)
    exclusion_at = models.DateTimeField(null=True, blank=True)
    # The rater withdrew from the study (where it allows that): their judgments were deleted
    # then, so they leave every board and export; the rater row stays for payment.
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta(Participant.Meta):
        pass

    @property
    def excluded(self) -> bool:
        return self.flagged if self.exclusion_override is None else self.exclusion_override


class QualityCheckItem(models.Model):
    """A gold item (known better reply) or an attention check, shown like a real pair."""

    class Kind(models.TextChoices):
        GOLD = "gold"
        ATTENTION = "attention"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="quality_items")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    token = models.CharField(max_length=64, unique=True, default=new_token)
    turns = models.JSONField()
    text_a = models.TextField()
    text_b = models.TextField()
    # Gold: the better reply. Attention: the side the instruction asks for.
    expected = models.CharField(max_length=1, choices=Side.choices)
    # Attention checks ask for an exact scale point (1..5 as on the page); null for gold items.
    expected_choice = models.PositiveSmallIntegerField(null=True, blank=True)
    note = models.CharField(max_length=300, blank=True)
    # Retired checks are handed out no more; their answers stay (and keep their result).
    retired_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.kind} check {self.pk}"


class Assignment(models.Model):
    """An item leased to one rater, with the left/right order drawn for that rater."""

    class Status(models.TextChoices):
        LEASED = "leased"
        SUBMITTED = "submitted"
        EXPIRED = "expired"
        # Freed when the rater stopped: others may take the pair, and a later submit of this
        # item is refused (it is never stored), unlike an expired lease's late answer.
        RELEASED = "released"

    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="assignments")
    pair = models.ForeignKey(
        Pair, null=True, blank=True, on_delete=models.CASCADE, related_name="assignments"
    )
    quality_item = models.ForeignKey(
        QualityCheckItem,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="assignments",
    )
    token = models.CharField(max_length=64, unique=True, default=new_token)
    shown_left = models.CharField(max_length=1, choices=Side.choices)
    position = models.PositiveIntegerField(help_text="Order in the rater's queue.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LEASED)
    served_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(pair__isnull=False) & Q(quality_item__isnull=True))
                | (Q(pair__isnull=True) & Q(quality_item__isnull=False)),
                name="assignment_pair_xor_check",
            ),
            models.UniqueConstraint(
                fields=["rater", "pair"],
                condition=Q(pair__isnull=False),
                name="assignment_rater_pair_once",
            ),
            models.UniqueConstraint(
                fields=["rater", "quality_item"],
                condition=Q(quality_item__isnull=False),
                name="assignment_rater_check_once",
            ),
        ]
        indexes = [
            models.Index(fields=["rater", "status"], name="assignment_rater_status"),
            models.Index(fields=["status", "lease_expires_at"], name="assignment_lease"),
            # The assignment engine counts a pair's running leases on every claim.
            models.Index(
                fields=["pair", "lease_expires_at"],
                condition=Q(status="leased"),
                name="assignment_pair_active_lease",
            ),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.status})"


class Judgment(models.Model):
    """One judge's verdict on a pair, human or LLM, in the pair's canonical orientation.

    `winner` is "a"/"b" relative to Pair.completion_a/_b, never to the shown order; `shown_left`
    records which of the two was on the left. `strength` is on the judge's own scale,
    `strength_max` says which (2: the human 5-point scale; 5: an LLM's 1-5).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judgments")
    pair = models.ForeignKey(
        Pair, null=True, blank=True, on_delete=models.CASCADE, related_name="judgments"
    )
    quality_item = models.ForeignKey(
        QualityCheckItem, null=True, blank=True, on_delete=models.CASCADE, related_name="judgments"
    )
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="judgment"
    )
    judge_kind = models.CharField(max_length=8, choices=JudgeKind.choices)
    rater = models.ForeignKey(
        Rater, null=True, blank=True, on_delete=models.CASCADE, related_name="judgments"
    )
    # Opaque, stable judge id: the rater's pseudonym, or the LLM judge's configured name.
    judge = models.CharField(max_length=200)
    judge_family = models.CharField(max_length=100, blank=True)
    winner = models.CharField(max_length=3, choices=Winner.choices)
    strength = models.PositiveSmallIntegerField(null=True, blank=True)
    strength_max = models.PositiveSmallIntegerField(null=True, blank=True)
    axes = models.JSONField(
        default=dict, blank=True, help_text='{"H": {"winner": "a", "strength": 2}, ...}'
    )
    rationale = models.TextField(blank=True)
    shown_left = models.CharField(max_length=1, choices=Side.choices, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # Null: unknown (an imported judgment whose file had no time; never invented).
    submitted_at = models.DateTimeField(null=True, blank=True)
    quality_check = models.BooleanField(default=False)
    passed_check = models.BooleanField(null=True, blank=True)
    raw_output = models.TextField(blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    source = models.CharField(
        max_length=32, default="platform", help_text="platform, import, or llm"
    )
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(pair__isnull=False) & Q(quality_item__isnull=True))
                | (Q(pair__isnull=True) & Q(quality_item__isnull=False)),
                name="judgment_pair_xor_check",
            ),
            # A human judges a pair once; an LLM judge once in each order shown (position swap).
            models.UniqueConstraint(
                fields=["pair", "judge"],
                condition=Q(pair__isnull=False) & ~Q(judge_kind="llm"),
                name="judgment_judge_pair_once",
            ),
            models.UniqueConstraint(
                fields=["pair", "judge", "shown_left"],
                condition=Q(pair__isnull=False) & Q(judge_kind="llm"),
                name="judgment_llm_pair_order_once",
            ),
            models.UniqueConstraint(
                fields=["quality_item", "judge"],
                condition=Q(quality_item__isnull=False),
                name="judgment_judge_check_once",
            ),
            models.CheckConstraint(
                condition=Q(strength__isnull=True) | Q(strength_max__isnull=False),
                name="judgment_strength_has_scale",
            ),
            models.CheckConstraint(
                condition=Q(strength__isnull=True) | Q(strength__lte=F("strength_max")),
                name="judgment_strength_within_scale",
            ),
            models.CheckConstraint(
                condition=~Q(winner="tie") | Q(strength__isnull=True),
                name="judgment_tie_has_no_strength",
            ),
        ]
        indexes = [models.Index(fields=["study", "judge_kind"], name="judgment_study_kind")]

    def __str__(self) -> str:
        return f"{self.judge} on pair {self.pair_id}: {self.winner}"


class PairPriority(models.Model):
    """Where a pair stands in an adaptive study's draw (annotation.services.adaptive).

    The refit writes one row per pair: ``rate`` is its system pair's planned share of the next
    judgments divided by that system pair's open pairs, ``rank`` an exponential clock
    (``Exp(1) / rate``). The claim takes the open pair of smallest rank, and a lease moves the
    rank on by a fresh ``Exp(1) / rate``: pairs come up in proportion to their rates (an
    exponential race), so the plan is followed between refits without one pair taking all.
    """

    pair = models.OneToOneField(
        Pair, primary_key=True, on_delete=models.CASCADE, related_name="priority"
    )
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    rank = models.FloatField()
    rate = models.FloatField()

    class Meta:
        indexes = [models.Index(fields=["study", "rank"], name="pairpriority_study_rank")]
        constraints = [
            models.CheckConstraint(condition=models.Q(rate__gt=0), name="pairpriority_rate_pos")
        ]

    def __str__(self) -> str:
        return f"pair {self.pair_id}: rank {self.rank:.3g}"
