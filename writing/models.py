"""Human completions written in the browser: writers, contexts open for writing, their texts.

A writer is a person (crowd writer from an invitation link or Prolific, or a logged-in account in
the "writers" group) and, for the analysis, a System of kind "human" named by their pseudonym.
A `Writing` is one writer's work on one context: a leased draft, then a submitted text waiting
for review, then accepted (a Completion is created) or rejected (kept here, out of analysis).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from completions.models import (
    DialogueContext,
    Participant,
    RaterEntry,
    Study,
    System,
    new_completion_code,
    new_token,
)

DEFAULT_INSTRUCTIONS = """\
Read the conversation, then write the supporter's next reply to the last message.

- Write as you would speak: natural, warm, in your own words.
- Keep it short: 1 to 3 sentences, about 40 words.
- Respond to what this person said; respect their boundaries and do not push advice they did
  not ask for.
- Write it yourself: no AI tools, no copying from elsewhere.
"""

DEFAULT_CONSENT = """\
You are invited to write short replies in emotional-support conversations for a research study.
Your replies will be shown, without your name, to other participants who compare replies.
The conversations may mention distressing topics; you may stop at any time.
"""

BEHAVIOUR_NOTICE = (
    "While you write, this page records how you write, not what you type elsewhere: the active "
    "writing time (idle time excluded), the number of keystrokes, how many characters were "
    "inserted without typing (paste, drop, autofill) and whether the page lost focus. The study "
    "team may review replies with unusual patterns; nothing is rejected automatically."
)


class WritingSettings(models.Model):
    """A study's writer settings (paper 9.3), created on demand with the defaults below."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="writing_settings")
    enabled = models.BooleanField(default=False, help_text="Writer links accept writers.")
    invite_token = models.CharField(max_length=64, unique=True, default=new_token)
    entry = models.CharField(max_length=8, choices=RaterEntry.choices, default=RaterEntry.OPEN)
    completion_code = models.CharField(max_length=32, default=new_completion_code)
    prolific_redirect_url = models.URLField(blank=True)
    consent_text = models.TextField(blank=True, help_text="Blank: the default consent text.")
    instructions = models.TextField(blank=True, help_text="Blank: the default instructions.")
    # The gentle band (a note on the page, never a refusal).
    band_min_words = models.PositiveSmallIntegerField(default=15)
    band_max_words = models.PositiveSmallIntegerField(default=60)
    band_min_sentences = models.PositiveSmallIntegerField(default=1)
    band_max_sentences = models.PositiveSmallIntegerField(default=3)
    # Hard limits, enforced on the server.
    min_words = models.PositiveSmallIntegerField(default=3)
    max_words = models.PositiveSmallIntegerField(default=120)
    max_chars = models.PositiveIntegerField(default=1000)
    block_paste = models.BooleanField(default=False)
    lease_seconds = models.PositiveIntegerField(
        default=3600, help_text="How long a context stays reserved for the writer who opened it."
    )
    contexts_per_writer = models.PositiveIntegerField(
        null=True, blank=True, help_text="Cap per writer (blank: as many as are open)."
    )

    class Meta:
        verbose_name_plural = "writing settings"
        constraints = [
            models.CheckConstraint(
                condition=Q(min_words__lte=models.F("max_words")), name="writing_limits_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"writing settings of {self.study}"

    @property
    def instructions_text(self) -> str:
        return self.instructions or DEFAULT_INSTRUCTIONS

    @property
    def instructions_html(self) -> str:
        """The instructions (Markdown) as sanitised HTML for the writer's pages."""
        from .markdown import markdown_html

        return markdown_html(self.instructions_text)

    @property
    def consent(self) -> str:
        return self.consent_text or DEFAULT_CONSENT


class WritingContext(models.Model):
    """A context open for writing. Its row is the lock a claimer takes (FOR UPDATE)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    context = models.OneToOneField(
        DialogueContext, on_delete=models.CASCADE, related_name="writing"
    )
    opened_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"writing on {self.context}"


class Writer(Participant):
    """A person writing completions in one study (the participant's fields:
    completions.models.Participant); each writer is a `human` system of their own."""

    system = models.OneToOneField(System, on_delete=models.PROTECT, related_name="writer")

    class Meta(Participant.Meta):
        constraints = [
            *Participant.Meta.constraints,
            models.UniqueConstraint(
                fields=["study", "user"], condition=Q(user__isnull=False), name="writer_unique_user"
            ),
        ]


class Writing(models.Model):
    """One writer's text for one context: draft (leased), pending review, accepted, rejected."""

    class Status(models.TextChoices):
        DRAFT = "draft"  # leased; holds a place in the context until the lease runs out
        PENDING = "pending"  # submitted, waiting for review; counts toward the quota
        ACCEPTED = "accepted"  # a Completion exists; counts toward the quota
        REJECTED = "rejected"  # kept, out of analysis; the place returns to the pool
        EXPIRED = "expired"  # the lease ran out and the context filled meanwhile

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    writer = models.ForeignKey(Writer, on_delete=models.CASCADE, related_name="writings")
    context = models.ForeignKey(DialogueContext, on_delete=models.CASCADE, related_name="writings")
    token = models.CharField(max_length=64, unique=True, default=new_token)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    text = models.TextField(blank=True)
    leased_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Writing behaviour, measured in the browser and clamped on the server.
    active_ms = models.PositiveIntegerField(default=0)
    keystrokes = models.PositiveIntegerField(default=0)
    inserted_chars = models.PositiveIntegerField(default=0)
    focus_lost = models.PositiveIntegerField(default=0)
    longest_insert = models.PositiveIntegerField(default=0)
    insert_after_away = models.BooleanField(default=False)
    flags = models.JSONField(default=list, blank=True)
    # Review.
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reject_reason = models.CharField(max_length=500, blank=True)
    completion = models.OneToOneField(
        "completions.Completion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="writing",
    )

    class Meta:
        constraints = [
            # Never the same writer twice on a context, whatever became of the first text.
            models.UniqueConstraint(fields=["writer", "context"], name="writing_writer_once"),
            models.CheckConstraint(
                condition=~Q(status="rejected") | ~Q(reject_reason=""),
                name="writing_reject_has_reason",
            ),
        ]
        indexes = [
            models.Index(fields=["context", "status"], name="writing_context_status"),
            models.Index(fields=["writer", "status"], name="writing_writer_status"),
        ]

    def __str__(self) -> str:
        return f"{self.writer} on {self.context} ({self.status})"
