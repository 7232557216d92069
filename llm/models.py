"""Endpoints, the call cache, runs and their units, and the per-endpoint concurrency slots."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Provider(models.TextChoices):
    OPENAI = "openai", "OpenAI-compatible (OpenAI, vLLM, Ollama, OpenRouter, ...)"
    ANTHROPIC = "anthropic", "Anthropic"


class Endpoint(models.Model):
    """A configured LLM. Its key is either stored encrypted (`api_key_encrypted`, entered once in
    the form) or read at call time from an environment variable on the operator's allow-list
    (`api_key_env`, shared endpoints only): see llm/keys.py. An endpoint belongs to
    one study (its admins see and use it) or, with no study, is shared with every study
    (superusers and the command line manage those)."""

    name = models.SlugField(max_length=100, unique=True)
    study = models.ForeignKey(
        "completions.Study",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="llm_endpoints",
        help_text="The study that owns it; empty: shared with every study.",
    )
    label = models.CharField(max_length=200, blank=True, help_text="Shown beside the name.")
    provider = models.CharField(max_length=16, choices=Provider.choices)
    base_url = models.URLField(blank=True, help_text="Empty: the provider's public API.")
    model = models.CharField(max_length=200)
    family = models.CharField(max_length=100, help_text="gpt, claude, gemini, llama, ...")
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        help_text="Name of the environment variable with the key (LLM_KEY_ENV_ALLOWLIST only).",
    )
    api_key_encrypted = models.TextField(
        blank=True, help_text="The key entered in the form, encrypted (never shown)."
    )
    api_key_hint = models.CharField(
        max_length=8, blank=True, help_text="The stored key's last characters, e.g. …f3a9."
    )
    price_in = models.FloatField(default=0.0, help_text="USD per million input tokens.")
    price_out = models.FloatField(default=0.0, help_text="USD per million output tokens.")
    max_concurrency = models.PositiveIntegerField(
        default=4, help_text="Calls at once, across every worker and process."
    )
    timeout_s = models.FloatField(default=60.0, help_text="Per attempt, the SDK's timeout.")
    max_retries = models.PositiveSmallIntegerField(
        default=2, help_text="The SDK's own retries (429/5xx/timeouts, Retry-After honoured)."
    )
    is_demo = models.BooleanField(default=False, help_text="Points at the bundled fake server.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1), name="endpoint_concurrency_positive"
            ),
            models.CheckConstraint(
                condition=Q(price_in__gte=0) & Q(price_out__gte=0),
                name="endpoint_prices_non_negative",
            ),
            # A study's own endpoint carries its own (encrypted) key: only the operator's
            # shared endpoints name a variable of the server's environment.
            models.CheckConstraint(
                condition=Q(study__isnull=True) | Q(api_key_env=""),
                name="endpoint_key_variable_shared_only",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.price_in + tokens_out * self.price_out) / 1_000_000

    @property
    def is_shared(self) -> bool:
        return self.study_id is None

    @property
    def key_source(self) -> str:
        """How calls authenticate, for pages: never the key itself."""
        if self.api_key_encrypted:
            return f"stored key {self.api_key_hint}".strip()
        if self.api_key_env:
            return f"variable {self.api_key_env}"
        return "none"


class EndpointSlot(models.Model):
    """One of an endpoint's `max_concurrency` slots. A process holds a slot while it may have one
    call in flight; the lease lets a killed process's slots come back without any lock service."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="slots")
    index = models.PositiveIntegerField()
    holder = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "index"], name="slot_unique_index")
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id}#{self.index}"


class CachedCall(models.Model):
    """A successful provider reply, keyed by the hash of (provider, base URL, model, parameters,
    prompt). Errors are never stored here."""

    key = models.CharField(max_length=64, unique=True)
    provider = models.CharField(max_length=16)
    model = models.CharField(max_length=200)
    request = models.JSONField(help_text="The full request: messages, parameters, schema.")
    text = models.TextField()
    model_reported = models.CharField(max_length=200, blank=True)
    request_id = models.CharField(max_length=200, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    ttft_ms = models.FloatField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.model} {self.key[:12]}"


class RunStatus(models.TextChoices):
    PLANNED = "planned"  # plan shown, not started
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    BUDGET = "budget", "stopped at budget"


class Run(models.Model):
    """One LLM job (generate, judge, label, adversarial) made of units."""

    study = models.ForeignKey(
        "completions.Study", on_delete=models.CASCADE, related_name="llm_runs"
    )
    kind = models.CharField(max_length=32)
    params = models.JSONField(default=dict, blank=True)
    plan = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PLANNED)
    budget_usd = models.FloatField(null=True, blank=True)
    endpoints = models.ManyToManyField(Endpoint, related_name="runs")
    tokens_in = models.BigIntegerField(default=0)
    tokens_out = models.BigIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["study", "kind"], name="run_study_kind")]

    def __str__(self) -> str:
        return f"{self.kind} run {self.pk}"

    @property
    def is_active(self) -> bool:
        return self.status == RunStatus.RUNNING


class UnitStatus(models.TextChoices):
    PENDING = "pending"
    IN_FLIGHT = "in_flight", "in flight"
    DONE = "done"
    FAILED = "failed"
    INVALID = "invalid"


class Unit(models.Model):
    """One call of a run, unique per (run, key); claimed with conditional updates."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="units")
    key = models.CharField(max_length=200, help_text="Unique in the run, e.g. pair:12/judge:3/ab")
    # RESTRICT: an endpoint with units cannot be deleted, unless its study (and so the units'
    # runs) is being deleted with it.
    endpoint = models.ForeignKey(Endpoint, on_delete=models.RESTRICT, related_name="units")
    payload = models.JSONField(default=dict, help_text="What the run kind needs (ids, order).")
    status = models.CharField(max_length=16, choices=UnitStatus.choices, default=UnitStatus.PENDING)
    claim_token = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Times claimed.")
    sends = models.PositiveIntegerField(default=0, help_text="Times sent to the provider.")
    repairs = models.PositiveSmallIntegerField(default=0)
    request_hash = models.CharField(max_length=64, blank=True)
    call = models.ForeignKey(
        CachedCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="units"
    )
    from_cache = models.BooleanField(default=False)
    raw_reply = models.TextField(
        blank=True,
        help_text="Kept for failures and invalid replies: the first LLM_RAW_REPLY_KEEP_CHARS.",
    )
    raw_reply_chars = models.PositiveIntegerField(
        default=0, help_text="Full length of the raw reply (characters), before truncation."
    )
    raw_reply_sha256 = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the full raw reply (UTF-8)."
    )
    raw_reply_cut = models.BooleanField(
        default=False, help_text="The provider sent more than the cap: reading stopped there."
    )
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    ttft_ms = models.FloatField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "key"], name="unit_unique_key")]
        indexes = [models.Index(fields=["run", "endpoint", "status"], name="unit_claim")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.key} ({self.status})"


class BatchStatus(models.TextChoices):
    SUBMITTING = "submitting"
    SUBMITTED = "submitted"  # the provider has it; polled until it ends
    INGESTED = "ingested"  # results stored, the rest routed back to the normal path
    FAILED = "failed"  # submission failed: every unit went back to the normal path


class ProviderBatch(models.Model):
    """A run's units for one endpoint sent through OpenAI Batch or Anthropic Message Batches,
    at batch prices."""

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
        # The table of the former `llm_batch` app, kept with its rows (migration 0002).
        db_table = "llm_batch_providerbatch"
        indexes = [models.Index(fields=["status"], name="provider_batch_status")]

    def __str__(self) -> str:
        return f"{self.provider} batch {self.provider_batch_id or self.pk} of run {self.run_id}"

    @property
    def claim_token(self) -> str:
        return f"batch-{self.pk}"
