"""A provider batch: a run's units for one endpoint sent through OpenAI Batch or Anthropic
Message Batches, at batch prices."""

from __future__ import annotations

from django.db import models


class BatchStatus(models.TextChoices):
    SUBMITTING = "submitting"
    SUBMITTED = "submitted"  # the provider has it; polled until it ends
    INGESTED = "ingested"  # results stored, the rest routed back to the normal path
    FAILED = "failed"  # submission failed: every unit went back to the normal path


class ProviderBatch(models.Model):
    run = models.ForeignKey("llm.Run", on_delete=models.CASCADE, related_name="provider_batches")
    endpoint = models.ForeignKey("llm.Endpoint", on_delete=models.RESTRICT, related_name="+")
    provider = models.CharField(max_length=16)
    status = models.CharField(
        max_length=16, choices=BatchStatus.choices, default=BatchStatus.SUBMITTING
    )
    provider_batch_id = models.CharField(max_length=200, blank=True)
    input_file_id = models.CharField(max_length=200, blank=True)
    provider_status = models.CharField(max_length=40, blank=True, help_text="As the provider says.")
    # custom_id (the request hash) -> the unit ids it answers (identical requests share one).
    requests = models.JSONField(default=dict)
    n_requests = models.PositiveIntegerField(default=0)
    n_succeeded = models.PositiveIntegerField(default=0)
    n_routed_back = models.PositiveIntegerField(
        default=0, help_text="Units sent back to the normal path (errored, expired, invalid)."
    )
    n_from_cache = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status"], name="provider_batch_status")]

    def __str__(self) -> str:
        return f"{self.provider} batch {self.provider_batch_id or self.pk} of run {self.run_id}"

    @property
    def claim_token(self) -> str:
        return f"batch-{self.pk}"
