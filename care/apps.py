from __future__ import annotations

from django.apps import AppConfig


class CareConfig(AppConfig):
    """Care for the people who read the material: qualification, content notes, skips,
    breaks, support and stopping early (raters and writers)."""

    name = "care"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The rater and writer pages sit below this app in the layers: they call these by name.
        from core.hooks import hook_register

        from . import hooks

        hook_register("rater_gate", hooks.rater_gate)
        hook_register("rater_item_care", hooks.item_care)
        hook_register("writing_care", hooks.writing_care)
        hook_register("writer_stopped", hooks.writer_stopped)
        hook_register("remember_since", hooks.remember_since)
