from __future__ import annotations

from django.apps import AppConfig


class CompletionsConfig(AppConfig):
    name = "completions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import generation  # noqa: F401  registers the "generate" LLM run kind
