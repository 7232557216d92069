from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import CareSettings, ContentNote, QualificationItem, RaterCare, Skip, WriterCare


@admin.register(CareSettings)
class CareSettingsAdmin(admin.ModelAdmin[CareSettings]):
    list_display = ("study", "qualification_enabled", "pass_share", "break_after_minutes")


@admin.register(QualificationItem)
class QualificationItemAdmin(admin.ModelAdmin[QualificationItem]):
    list_display = ("study", "phase", "position", "expected", "note")
    list_filter = ("phase",)


@admin.register(ContentNote)
class ContentNoteAdmin(admin.ModelAdmin[ContentNote]):
    list_display = ("context", "text", "created_at")


# Records of what people did: read-only here (pseudonymous ids only, as on the studio pages).
@admin.register(RaterCare, WriterCare, Skip)
class CareRecordAdmin(admin.ModelAdmin[RaterCare | WriterCare | Skip]):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: RaterCare | WriterCare | Skip | None = None
    ) -> bool:
        return False
