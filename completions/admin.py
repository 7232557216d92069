from __future__ import annotations

from django.contrib import admin

from .models import Completion, DialogueContext, Study, System


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin[Study]):
    list_display = (
        "slug",
        "name",
        "status",
        "judgments_per_pair",
        "quality_check_rate",
        "pair_design",
        "created_at",
    )
    search_fields = ("slug", "name")
    readonly_fields = ("invite_token", "created_at")
    filter_horizontal = ("admins",)


@admin.register(DialogueContext)
class DialogueContextAdmin(admin.ModelAdmin[DialogueContext]):
    list_display = (
        "external_id",
        "study",
        "emotion_type",
        "problem_type",
        "adversarial",
        "escalation_profile",
        "source",
    )
    list_filter = ("study", "adversarial", "escalation_profile", "source")
    search_fields = ("external_id", "source_id", "emotion_type", "problem_type")
    readonly_fields = ("token", "created_at")


@admin.register(System)
class SystemAdmin(admin.ModelAdmin[System]):
    list_display = ("name", "study", "kind", "family", "ttft_ms", "external_score")
    list_filter = ("study", "kind", "family")
    search_fields = ("name", "family")


@admin.register(Completion)
class CompletionAdmin(admin.ModelAdmin[Completion]):
    list_display = ("id", "context", "system", "writer", "text_unknown", "ttft_ms", "created_at")
    # Placeholders from judgments imports (text unknown): never served to raters.
    list_filter = ("system__study", "system__kind", "text_unknown")
    search_fields = ("context__external_id", "system__name", "text")
    list_select_related = ("context", "system", "writer")
    raw_id_fields = ("context", "system", "writer")
