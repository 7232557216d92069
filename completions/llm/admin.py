from __future__ import annotations

from django.contrib import admin

from .models import CachedCall, Endpoint, Run, Unit


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ("name", "label", "provider", "model", "family", "base_url", "max_concurrency")
    list_filter = ("provider", "family", "is_demo")
    search_fields = ("name", "model", "family")


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("id", "study", "kind", "status", "cost", "created_at")
    list_filter = ("kind", "status")
    readonly_fields = ("plan", "tokens_in", "tokens_out", "cost", "started_at", "finished_at")


@admin.register(Unit)
class UnitAdmin(admin.ModelAdmin):
    list_display = ("id", "run", "key", "endpoint", "status", "sends", "from_cache")
    list_filter = ("status",)
    search_fields = ("key",)
    raw_id_fields = ("run", "call")


@admin.register(CachedCall)
class CachedCallAdmin(admin.ModelAdmin):
    list_display = ("key", "provider", "model", "tokens_in", "tokens_out", "created_at")
    search_fields = ("key", "model")
