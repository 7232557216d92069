from __future__ import annotations

from django.apps import AppConfig


class LlmConfig(AppConfig):
    name = "llm"
    label = "llm"
    verbose_name = "LLM endpoints and runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core.metrics import scrape_reader_register

        from . import adversarial_run, generation  # noqa: F401  the run kinds
        from .metrics import llm_run_families

        scrape_reader_register("llm runs", llm_run_families)
