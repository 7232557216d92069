from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from .models import CachedCall, Endpoint, Run, Unit
from .services import ENDPOINT_FIELDS, EndpointError, endpoint_check


class EndpointAdminForm(forms.ModelForm[Endpoint]):
    """The same host and key rules as the studio and the CLI. The stored key is never shown
    here: it is set or replaced on the study's LLM page."""

    class Meta:
        model = Endpoint
        fields = [
            "name",
            "study",
            *ENDPOINT_FIELDS,
        ]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        try:
            endpoint_check(
                provider=data.get("provider", ""),
                base_url=data.get("base_url", ""),
                api_key_env=data.get("api_key_env", ""),
                study_id=data["study"].pk if data.get("study") else None,
            )
        except EndpointError as exc:
            raise forms.ValidationError(str(exc)) from None
        return data


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin[Endpoint]):
    form = EndpointAdminForm
    list_display = ("name", "study", "provider", "model", "family", "base_url", "key_source")
    list_filter = ("provider", "family", "is_demo")
    search_fields = ("name", "model", "family")
    readonly_fields = ("key_source",)


@admin.register(Run)
class RunAdmin(admin.ModelAdmin[Run]):
    list_display = ("id", "study", "kind", "status", "cost", "created_at")
    list_filter = ("kind", "status")
    readonly_fields = ("plan", "tokens_in", "tokens_out", "cost", "started_at", "finished_at")


@admin.register(Unit)
class UnitAdmin(admin.ModelAdmin[Unit]):
    list_display = ("id", "run", "key", "endpoint", "status", "sends", "from_cache")
    list_filter = ("status",)
    search_fields = ("key",)
    raw_id_fields = ("run", "call")
    # A raw reply can be 20,000 characters: the admin shows the unit, the run page the reply.
    exclude = ("raw_reply",)
    readonly_fields = ("raw_reply_chars", "raw_reply_sha256", "raw_reply_cut")


@admin.register(CachedCall)
class CachedCallAdmin(admin.ModelAdmin[CachedCall]):
    list_display = ("key", "provider", "model", "tokens_in", "tokens_out", "created_at")
    search_fields = ("key", "model")
