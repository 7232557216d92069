from __future__ import annotations

from django.apps import AppConfig


class LlmBatchConfig(AppConfig):
    name = "llm.batch"
    label = "llm_batch"
    verbose_name = "LLM provider batches"
    default_auto_field = "django.db.models.BigAutoField"
