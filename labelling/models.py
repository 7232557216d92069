"""Strategy labels (paper 9.10) per completion and label set, and their human validation."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from completions.models import Completion, Study, new_token


class LabelSetKind(models.TextChoices):
    LLM = "llm", "LLM classifier run"
    IMPORT = "import", "Imported labels"


class LabelSetStatus(models.TextChoices):
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class LabelSet(models.Model):
    """One labelling of a study's completions: an LLM label run, or imported labels.

    ``run`` is the engine's label run that produced it (none for imported labels).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="label_sets")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=8, choices=LabelSetKind.choices, default=LabelSetKind.LLM)
    status = models.CharField(
        max_length=8, choices=LabelSetStatus.choices, default=LabelSetStatus.RUNNING
    )
    run = models.ForeignKey(
        "llm.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="label_sets"
    )
    labeller = models.CharField(max_length=200, blank=True, help_text="Endpoint or source name.")
    taxonomy_version = models.CharField(max_length=40)
    taxonomy_hash = models.CharField(max_length=64)
    prompt_version = models.CharField(max_length=40, blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["study", "status", "finished_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"


class CompletionLabels(models.Model):
    """The 15 labels of one completion in one label set (the export's ``labels`` object)."""

    label_set = models.ForeignKey(LabelSet, on_delete=models.CASCADE, related_name="rows")
    completion = models.ForeignKey(
        Completion, on_delete=models.CASCADE, related_name="strategy_labels"
    )
    labels = models.JSONField(help_text='{"Affirmation": {"status", "p", "evidence"}, ...}')
    present = models.JSONField(default=list, help_text="Strategies with status present.")
    raw_reply = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["label_set", "completion"], name="labels_one_per_completion"
            )
        ]

    def __str__(self) -> str:
        return f"labels of completion {self.completion_id} in set {self.label_set_id}"


class ValidationSample(models.Model):
    """A stratified sample of completions that labellers label by hand (paper 9.10)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="label_samples")
    token = models.CharField(max_length=64, unique=True, default=new_token)
    name = models.CharField(max_length=200)
    size = models.PositiveIntegerField()
    seed = models.BigIntegerField(default=0)
    labellers_per_item = models.PositiveSmallIntegerField(default=2)
    is_open = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(labellers_per_item__gte=2), name="sample_two_labellers_or_more"
            )
        ]

    def __str__(self) -> str:
        return self.name


class SampleItem(models.Model):
    sample = models.ForeignKey(ValidationSample, on_delete=models.CASCADE, related_name="items")
    completion = models.ForeignKey(Completion, on_delete=models.CASCADE, related_name="+")
    # What a labeller's browser sees instead of any database id.
    token = models.CharField(max_length=64, unique=True, default=new_token)
    position = models.PositiveIntegerField()
    stratum = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sample", "completion"], name="sample_item_once")
        ]
        ordering = ["position"]

    def __str__(self) -> str:
        return f"item {self.position} of {self.sample}"


class HumanLabel(models.Model):
    """One labeller's strategies for one sample item (those present; the rest absent)."""

    item = models.ForeignKey(SampleItem, on_delete=models.CASCADE, related_name="human_labels")
    labeller = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="strategy_labels"
    )
    present = models.JSONField(default=list)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "labeller"], name="human_label_once")
        ]

    def __str__(self) -> str:
        return f"{self.labeller} on {self.item}"


class Adjudication(models.Model):
    """The study admin's decision on an item the labellers disagreed on."""

    item = models.OneToOneField(SampleItem, on_delete=models.CASCADE, related_name="adjudication")
    present = models.JSONField(default=list)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"adjudication of {self.item}"
