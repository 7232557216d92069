"""The studio's rows: files uploaded through the browser, and texts held back from a release."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from completions.models import Study


class ImportKind(models.TextChoices):
    ESCONV = "esconv", "ESConv JSON (screened into contexts and dataset replies)"
    CONTEXTS = "contexts", "Contexts (JSON Lines)"
    COMPLETIONS = "completions", "Completions (JSON Lines)"
    JUDGMENTS = "judgments", "Judgments (JSON Lines)"


class ImportStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class ImportJob(models.Model):
    """One uploaded file and what its import did.

    The file's bytes live in the row (not on a disk the web process owns), so any worker on any
    machine can run the import; `data` is emptied once the import has finished either way.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="import_jobs")
    kind = models.CharField(max_length=16, choices=ImportKind.choices)
    filename = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField(default=0)
    data = models.BinaryField(default=b"")
    status = models.CharField(
        max_length=8, choices=ImportStatus.choices, default=ImportStatus.QUEUED
    )
    # The step the import is at, in words ("reading the file", ...), for the progress line.
    stage = models.CharField(max_length=200, blank=True)
    report = models.JSONField(default=list, blank=True, help_text="The import report's lines.")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Renewed while a worker runs the import; once it lapses the job is redone (core.jobs).
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "heart_site_importjob"  # made before the studio was an app of its own
        indexes = [models.Index(fields=["study", "-created_at"], name="importjob_study_recent")]

    def __str__(self) -> str:
        return f"{self.kind} import {self.filename} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (ImportStatus.DONE, ImportStatus.FAILED)


class ReleaseHold(models.Model):
    """A writer text or rater rationale that the personal-data screen flagged before a release.

    It stays out of every release bundle (its text is null there) until a study admin looks at
    it on the downloads page and releases it; "keep out" records that decision.
    """

    class Kind(models.TextChoices):
        WRITER_TEXT = "writer_text", "Writer's text"
        RATIONALE = "rationale", "Rater's rationale"

    class Decision(models.TextChoices):
        PENDING = "pending", "Waiting for review"
        RELEASE = "release", "Released"
        KEEP_OUT = "keep_out", "Kept out"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="release_holds")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    completion = models.ForeignKey(
        "completions.Completion", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    judgment = models.ForeignKey(
        "annotation.Judgment", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    found = models.CharField(max_length=200, help_text="What the screen found, e.g. e-mail.")
    decision = models.CharField(max_length=8, choices=Decision.choices, default=Decision.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "heart_site_releasehold"  # made before the studio was an app of its own
        constraints = [
            models.UniqueConstraint(fields=["completion"], name="releasehold_completion_once"),
            models.UniqueConstraint(fields=["judgment"], name="releasehold_judgment_once"),
            models.CheckConstraint(
                condition=models.Q(completion__isnull=False) ^ models.Q(judgment__isnull=False),
                name="releasehold_one_item",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} held ({self.found}, {self.decision})"
