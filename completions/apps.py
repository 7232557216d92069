from __future__ import annotations

from django.apps import AppConfig


class CompletionsConfig(AppConfig):
    name = "completions"
    default_auto_field = "django.db.models.BigAutoField"
