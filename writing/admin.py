from __future__ import annotations

from django.contrib import admin

from .models import Writer, Writing, WritingSettings


@admin.register(WritingSettings)
class WritingSettingsAdmin(admin.ModelAdmin[WritingSettings]):
    list_display = ("study", "enabled", "entry", "block_paste", "min_words", "max_words")


@admin.register(Writer)
class WriterAdmin(admin.ModelAdmin[Writer]):
    list_display = ("pseudonym", "study", "source", "consented_at", "finished_at")
    exclude = ("external_id",)  # private panel id: never shown


@admin.register(Writing)
class WritingAdmin(admin.ModelAdmin[Writing]):
    list_display = ("writer", "context", "status", "submitted_at", "flags")
    list_filter = ("status",)
    raw_id_fields = ("writer", "context", "completion")
