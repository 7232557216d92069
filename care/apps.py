from __future__ import annotations

from django.apps import AppConfig


class CareConfig(AppConfig):
    """Care for the people who read the material: qualification, content notes, skips,
    breaks, support and stopping early (raters and writers)."""

    name = "care"
    default_auto_field = "django.db.models.BigAutoField"
