from __future__ import annotations

from django.apps import AppConfig


class LabellingConfig(AppConfig):
    name = "labelling"
    verbose_name = "Strategy labels"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import llm_label  # noqa: F401  registers the "label" LLM run kind
