"""Stored leaderboard fits, so the history of a study's leaderboard can be read back."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q

from completions.models import Study


class JudgeFilter(models.TextChoices):
    HUMAN = "human", "Human raters"
    LLM = "llm", "LLM judges"
    ALL = "all", "All judges"


class SubsetFilter(models.TextChoices):
    ALL = "all", "All contexts"
    REGULAR = "regular", "Regular contexts"
    ADVERSARIAL = "adversarial", "Adversarial contexts"


class RefitTrigger(models.TextChoices):
    NIGHTLY = "nightly"
    MANUAL = "manual"
    COMMAND = "command"
    STALE = "stale"  # a page or the API found the latest snapshot out of date


class Preset(models.TextChoices):
    DEFAULT = "default", "HEART studio defaults"
    PAPER = "paper", "The paper's choices"


class RefitJob(models.Model):
    """One requested refit (the button, the nightly job) and how it ended.

    The history page shows the latest ones, so a refit that failed says why instead of never
    appearing. `lease_until` is renewed while a worker runs it; a refit whose worker died is
    queued again once it lapses (core.jobs).
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="refit_jobs")
    trigger = models.CharField(max_length=16, choices=RefitTrigger.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    # [judges, subset, preset] per board; empty: the full refit (every judge kind, all contexts).
    boards = models.JSONField(default=list, blank=True)
    snapshot_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["study", "-created_at"], name="refitjob_study_recent")]

    def __str__(self) -> str:
        return f"{self.trigger} refit of {self.study_id} ({self.status})"


class LeaderboardSnapshot(models.Model):
    """One Bradley–Terry fit of a study's judgments, with its inputs' counts and timing.

    `preset` names the set of choices (ranking.board.PRESETS). `fingerprint` hashes the ids of
    the judgments that went in plus the fit parameters: a
    refit over unchanged inputs finds the existing row instead of storing a duplicate (the
    unique constraint makes two concurrent refits safe as well).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="snapshots")
    judges = models.CharField(max_length=8, choices=JudgeFilter.choices)
    subset = models.CharField(max_length=16, choices=SubsetFilter.choices, default=SubsetFilter.ALL)
    preset = models.CharField(max_length=16, choices=Preset.choices, default=Preset.DEFAULT)
    created_at = models.DateTimeField()
    trigger = models.CharField(max_length=16, choices=RefitTrigger.choices)
    fingerprint = models.CharField(max_length=64)
    max_judgment_id = models.BigIntegerField(null=True, blank=True)
    n_judgments = models.PositiveIntegerField(default=0)
    n_comparisons = models.PositiveIntegerField(default=0)
    n_excluded_raters = models.PositiveIntegerField(default=0)
    n_systems = models.PositiveIntegerField(default=0)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    # Boards shown on pages of their own, fitted by the same refit so that no page fits:
    # {"by": {context field: its boards}, "cohorts": the cohort analysis (human boards only)}.
    # Kept apart from `result` so that reading the main board does not load them.
    sections = models.JSONField(default=dict, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        get_latest_by = "created_at"
        constraints = [
            models.UniqueConstraint(
                fields=["study", "judges", "subset", "preset", "fingerprint"],
                name="snapshot_unique_inputs_preset",
            ),
            models.CheckConstraint(
                condition=Q(judges__in=JudgeFilter.values), name="snapshot_judges_valid"
            ),
            models.CheckConstraint(
                condition=Q(subset__in=SubsetFilter.values), name="snapshot_subset_valid"
            ),
        ]
        indexes = [
            models.Index(
                fields=["study", "judges", "subset", "preset", "-created_at"],
                name="snapshot_latest_preset",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.study} {self.judges}/{self.subset}/{self.preset} "
            f"at {self.created_at:%Y-%m-%d %H:%M}"
        )

    @property
    def top_systems(self) -> list[dict[str, Any]]:
        return list(self.result.get("systems", []))[:3]


class DesignStatus(models.Model):
    """The stopping rule's reading of a study after its latest refit (ranking.design).

    ``pairs``: one row per system pair of the human board (``a``, ``b`` names, ``difference``
    and ``half_width`` in Elo, ``separated``, ``judgments_needed``); the studio's pairs page
    shows it, so the page reads one row instead of fitting.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="design_status")
    computed_at = models.DateTimeField()
    n_judgments = models.PositiveIntegerField(default=0)
    level = models.PositiveSmallIntegerField(default=95)
    pairs = models.JSONField(default=list, blank=True)
    judgments_open = models.PositiveIntegerField(
        default=0, help_text="Judgments the study's pairs can still take (their quotas)."
    )
    # The planner for the study's adaptive goal (ranking.goals.goal_plan at the latest board):
    # {"goal", "k", "anchor", "uniform", "adaptive", "saving", "tie_rate", "reached"}.
    goal_plan = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"design status of {self.study_id} at {self.computed_at:%Y-%m-%d %H:%M}"


class BoardEventKind(models.TextChoices):
    SYSTEM_ADDED = "system_added", "System added"
    SYSTEM_REMOVED = "system_removed", "System taken off the board"
    SYSTEM_RESTORED = "system_restored", "System back on the board"
    POLICY_CHANGED = "policy_changed", "Sampling policy changed"


class BoardEvent(models.Model):
    """One dated entry in a study board's record (ranking.record): a system first judged, taken
    off the board (with the admin's reason), put back, or the sampling policy changed.

    Systems are never deleted from the record: a system taken off keeps its judgments and its
    rows in the older snapshots; the boards fitted after the event leave it out.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="board_events")
    kind = models.CharField(max_length=16, choices=BoardEventKind.choices)
    # The system's name, kept as text so the record outlives any change to the system's row.
    system = models.CharField(max_length=200, blank=True)
    reason = models.TextField(blank=True)
    # The sampling policy in force after a policy change ({"policy", "goal", "k", "anchor"}).
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField()
    by = models.CharField(max_length=150, blank=True, help_text="Username of the study admin.")

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["study", "at"], name="boardevent_study_at")]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=BoardEventKind.values), name="boardevent_kind_valid"
            ),
            models.CheckConstraint(
                condition=~Q(kind="system_removed") | ~Q(reason=""),
                name="boardevent_removal_has_reason",
            ),
            models.CheckConstraint(
                condition=Q(kind="policy_changed") | ~Q(system=""),
                name="boardevent_system_named",
            ),
            # A system is added to the record once (two refits syncing at once store one).
            models.UniqueConstraint(
                fields=["study", "system"],
                condition=Q(kind="system_added"),
                name="boardevent_added_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study_id} {self.kind} {self.system} at {self.at:%Y-%m-%d %H:%M}"
