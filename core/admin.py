from __future__ import annotations

from django.contrib import admin

from .models import DeferredTask


@admin.register(DeferredTask)
class DeferredTaskAdmin(admin.ModelAdmin[DeferredTask]):
    """Tasks waiting for the broker (sent by beat every minute once it answers)."""

    list_display = ("name", "created_at", "attempts", "last_error")
    readonly_fields = ("name", "args", "kwargs", "created_at", "attempts", "last_error")
