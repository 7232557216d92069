from __future__ import annotations

from django.contrib import admin

from .models import Assignment, Judgment, Pair, QualityCheckItem, Rater


@admin.register(Pair)
class PairAdmin(admin.ModelAdmin[Pair]):
    list_display = (
        "id",
        "study",
        "context",
        "completion_a",
        "completion_b",
        "n_judgments",
        "quota",
    )
    list_filter = ("study",)
    list_select_related = ("study", "context", "completion_a__system", "completion_b__system")
    raw_id_fields = ("context", "completion_a", "completion_b")
    readonly_fields = ("token", "n_judgments")


@admin.register(Rater)
class RaterAdmin(admin.ModelAdmin[Rater]):
    list_display = (
        "pseudonym",
        "study",
        "source",
        "flagged",
        "exclusion_override",
        "consented_at",
        "finished_at",
    )
    list_filter = ("study", "source", "flagged", "exclusion_override")
    search_fields = ("pseudonym", "external_id")
    readonly_fields = ("pseudonym", "created_at")


@admin.register(QualityCheckItem)
class QualityCheckItemAdmin(admin.ModelAdmin[QualityCheckItem]):
    list_display = ("id", "study", "kind", "expected", "expected_choice", "note", "retired_at")
    list_filter = ("study", "kind")
    readonly_fields = ("token",)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin[Assignment]):
    list_display = (
        "id",
        "rater",
        "pair",
        "quality_item",
        "shown_left",
        "status",
        "served_at",
        "lease_expires_at",
        "submitted_at",
    )
    list_filter = ("status", "rater__study")
    raw_id_fields = ("rater", "pair", "quality_item")
    readonly_fields = ("token",)


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin[Judgment]):
    list_display = (
        "id",
        "study",
        "pair",
        "judge_kind",
        "judge",
        "winner",
        "strength",
        "strength_max",
        "shown_left",
        "duration_ms",
        "quality_check",
        "submitted_at",
    )
    list_filter = ("study", "judge_kind", "quality_check", "source")
    search_fields = ("judge", "rationale")
    raw_id_fields = ("pair", "quality_item", "assignment", "rater")
