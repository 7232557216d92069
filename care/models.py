"""Care for raters and writers: a study's care settings, qualification before real items,
content notes, skips and early stops (with the time worked, for payment)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Assignment, Pair, Rater, Side
from completions.models import DialogueContext, Study, new_completion_code
from writing.models import Writer, Writing

DEFAULT_SUPPORT_TEXT = (
    "Some conversations in this study touch on difficult experiences. If reading them brings "
    "up something painful, it is fine to skip an item, take a break or stop: you are paid for "
    "the time you worked. If you are struggling, please reach out to someone you trust or to "
    "one of the services below."
)
DEFAULT_SUPPORT_LINKS = (
    "Find a helpline in your country (free, confidential) | https://findahelpline.com\n"
    "Samaritans (UK and Ireland), call 116 123 | https://www.samaritans.org\n"
    "988 Suicide & Crisis Lifeline (US), call or text 988 | https://988lifeline.org"
)


class Outcome(models.TextChoices):
    """How a rater or writer leaves when they fail qualification or stop early."""

    COMPLETION = "completion", "The study's completion code (paid as complete)"
    CODE = "code", "A separate completion code (paid screen-out or partial payment)"
    RETURN = "return", "Ask them to return the study (no completion code)"


class CareSettings(models.Model):
    """One study's care settings; a study without a row uses the defaults (care_settings())."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="care")
    qualification_enabled = models.BooleanField(
        default=False,
        help_text="Raters answer a training and a qualification block before any real item.",
    )
    pass_share = models.FloatField(
        default=0.75,
        help_text="Share of qualification items a rater must answer as the reference does.",
    )
    fail_outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.CODE)
    screenout_code = models.CharField(
        max_length=32,
        default=new_completion_code,
        help_text="The completion code for a paid screen-out (qualification not passed).",
    )
    stop_outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.CODE)
    stop_code = models.CharField(
        max_length=32,
        default=new_completion_code,
        help_text="The completion code for someone who stops early (paid for the time worked).",
    )
    allow_withdrawal = models.BooleanField(
        default=False,
        help_text=(
            "A rater who stops may also withdraw: their answers are deleted from the study "
            "(every leaderboard and export); the time they worked is still recorded."
        ),
    )
    notes_from_screening = models.BooleanField(
        default=True,
        help_text="Contexts whose screening found distress signals get a content note.",
    )
    break_after_minutes = models.PositiveSmallIntegerField(
        default=20, help_text="Suggest a break after this many minutes on task (0: never)."
    )
    support_text = models.TextField(default=DEFAULT_SUPPORT_TEXT)
    support_links = models.TextField(
        default=DEFAULT_SUPPORT_LINKS,
        blank=True,
        help_text="One link a line: 'label | https://address'.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(pass_share__gte=0) & Q(pass_share__lte=1),
                name="care_pass_share_is_a_share",
            ),
        ]

    def __str__(self) -> str:
        return f"care settings of {self.study}"


class ContentNote(models.Model):
    """An admin's note on a context: what it touches (shown before the item)."""

    context = models.OneToOneField(
        DialogueContext, on_delete=models.CASCADE, related_name="content_note"
    )
    text = models.CharField(max_length=300)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.text


class QualificationItem(models.Model):
    """A gold item of the training block (feedback shown) or the qualification block (none)."""

    class Phase(models.TextChoices):
        TRAINING = "training"
        QUALIFICATION = "qualification"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="qualification_items")
    phase = models.CharField(max_length=16, choices=Phase.choices)
    position = models.PositiveSmallIntegerField(default=0)
    turns = models.JSONField()
    text_a = models.TextField()
    text_b = models.TextField()
    expected = models.CharField(max_length=1, choices=Side.choices, help_text="The better reply.")
    explanation = models.TextField(help_text="Why most raters prefer the better reply.")
    note = models.CharField(max_length=100, blank=True, help_text="A key for seeding.")

    class Meta:
        ordering = ["phase", "position", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "note"], condition=~Q(note=""), name="qualification_note_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.phase} item {self.pk}"


class RaterCare(models.Model):
    """A rater's qualification result and early stop (a row only once either happened)."""

    class Qualification(models.TextChoices):
        STARTED = "started"
        PASSED = "passed"
        FAILED = "failed"

    rater = models.OneToOneField(Rater, on_delete=models.CASCADE, related_name="care")
    qualification = models.CharField(max_length=8, choices=Qualification.choices, blank=True)
    n_qualification = models.PositiveSmallIntegerField(default=0)
    n_correct = models.PositiveSmallIntegerField(default=0)
    qualified_at = models.DateTimeField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    stop_outcome = models.CharField(max_length=12, choices=Outcome.choices, blank=True)
    # Time worked when they stopped (consent to stop), for payment.
    seconds_worked = models.PositiveIntegerField(null=True, blank=True)
    # The rater used up the skips a study allows (skip_limit()): their session ended then.
    skip_limit_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"care of {self.rater}"


class QualificationAnswer(models.Model):
    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="qualification_answers")
    item = models.ForeignKey(QualificationItem, on_delete=models.CASCADE, related_name="answers")
    choice = models.PositiveSmallIntegerField()
    correct = models.BooleanField()
    answered_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rater", "item"], name="qualification_answer_once"),
        ]

    def __str__(self) -> str:
        return f"answer {self.choice} to {self.item_id}"


class WriterCare(models.Model):
    """A writer's early stop, with the time worked."""

    writer = models.OneToOneField(Writer, on_delete=models.CASCADE, related_name="care")
    stopped_at = models.DateTimeField()
    stop_outcome = models.CharField(max_length=12, choices=Outcome.choices)
    seconds_worked = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"care of {self.writer}"


class Skip(models.Model):
    """A rater skipped an item or a writer skipped a context. Never counted against them."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    context = models.ForeignKey(
        DialogueContext, null=True, on_delete=models.CASCADE, related_name="+"
    )
    rater = models.ForeignKey(
        Rater, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    writer = models.ForeignKey(
        Writer, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    pair = models.ForeignKey(
        Pair, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    writing = models.OneToOneField(
        Writing, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(rater__isnull=False) & Q(writer__isnull=True))
                | (Q(rater__isnull=True) & Q(writer__isnull=False)),
                name="skip_rater_xor_writer",
            ),
        ]
        indexes = [models.Index(fields=["study", "context"], name="skip_study_context")]

    def __str__(self) -> str:
        return f"skip {self.pk}"
