"""Rows the studio needs that belong to no single app: browser uploads waiting to be imported."""

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

    class Meta:
        indexes = [models.Index(fields=["study", "-created_at"], name="importjob_study_recent")]

    def __str__(self) -> str:
        return f"{self.kind} import {self.filename} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (ImportStatus.DONE, ImportStatus.FAILED)
