from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported for their checks (the deploy settings, an incomplete migration history) and
        # their signal receivers (work run after the response).
        from . import after_response, deploy, migration_history  # noqa: F401
