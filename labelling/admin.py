from __future__ import annotations

from django.contrib import admin

from .models import CompletionLabels, LabelSet, ValidationSample


@admin.register(LabelSet)
class LabelSetAdmin(admin.ModelAdmin[LabelSet]):
    list_display = ["name", "study", "kind", "status", "labeller", "taxonomy_version", "created_at"]
    list_filter = ["kind", "status", "study"]


@admin.register(CompletionLabels)
class CompletionLabelsAdmin(admin.ModelAdmin[CompletionLabels]):
    list_display = ["completion", "label_set", "created_at"]
    raw_id_fields = ["completion", "label_set"]


@admin.register(ValidationSample)
class ValidationSampleAdmin(admin.ModelAdmin[ValidationSample]):
    list_display = ["name", "study", "size", "labellers_per_item", "is_open", "created_at"]
    list_filter = ["is_open", "study"]
