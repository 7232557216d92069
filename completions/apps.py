from __future__ import annotations

from django.apps import AppConfig


class CompletionsConfig(AppConfig):
    name = "completions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import adversarial_run, generation  # noqa: F401  register the LLM run kinds
