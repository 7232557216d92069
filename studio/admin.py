from __future__ import annotations

from django.contrib import admin

from .models import ImportJob


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin[ImportJob]):
    list_display = ("filename", "study", "kind", "status", "created_by", "created_at")
    list_filter = ("status", "kind")
    exclude = ("data",)  # the upload's bytes: kept only until the import has run
    readonly_fields = ("report", "error", "stage", "started_at", "finished_at", "size")
