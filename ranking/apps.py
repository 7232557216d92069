from __future__ import annotations

from django.apps import AppConfig


class RankingConfig(AppConfig):
    name = "ranking"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the refit tasks with Celery in every process (web too), so the services
        # publish them by name without importing their own tasks module.
        from . import tasks  # noqa: F401
