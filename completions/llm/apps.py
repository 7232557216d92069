from __future__ import annotations

from django.apps import AppConfig


class LlmConfig(AppConfig):
    name = "completions.llm"
    label = "llm"
    verbose_name = "LLM endpoints and runs"
    default_auto_field = "django.db.models.BigAutoField"
