from __future__ import annotations

from django.apps import AppConfig


class RankingConfig(AppConfig):
    name = "ranking"
    default_auto_field = "django.db.models.BigAutoField"

    # No ready(): the refit tasks load in the workers (Celery's autodiscovery) and, with eager
    # Celery, when the outbox first publishes one (core.enqueue); the web process never needs
    # them, nor the maths they bring (CONVENTIONS 13).
