from __future__ import annotations

from django.apps import AppConfig


class WritingConfig(AppConfig):
    name = "writing"
    label = "writing"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Writers"
