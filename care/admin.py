from __future__ import annotations

from django.contrib import admin

from .models import CareSettings, ContentNote, QualificationItem, RaterCare, Skip, WriterCare


@admin.register(CareSettings)
class CareSettingsAdmin(admin.ModelAdmin):
    list_display = ("study", "qualification_enabled", "pass_share", "break_after_minutes")


@admin.register(QualificationItem)
class QualificationItemAdmin(admin.ModelAdmin):
    list_display = ("study", "phase", "position", "expected", "note")
    list_filter = ("phase",)


@admin.register(ContentNote)
class ContentNoteAdmin(admin.ModelAdmin):
    list_display = ("context", "text", "created_at")


# Records of what people did: read-only here (pseudonymous ids only, as on the studio pages).
@admin.register(RaterCare, WriterCare, Skip)
class CareRecordAdmin(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
