from __future__ import annotations

from django.apps import AppConfig


class CareConfig(AppConfig):
    """Care for the people who read the material: qualification, content notes, skips,
    breaks, support and stopping early (raters and writers)."""

    name = "care"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The rater and writer pages sit below this app in the layers: they call what it adds
        # through the protocol in core.care.
        from core.care import care_register

        from .hooks import PageCare

        care_register(PageCare())
