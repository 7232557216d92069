from __future__ import annotations

from django.apps import AppConfig


class RecruitmentConfig(AppConfig):
    """Paying and recruiting raters: each rater's outcome, Prolific (publish, sync, pay) and
    what a study costs. Above care and annotation (it reads what raters did), below the studio."""

    name = "recruitment"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The rater pages sit below this app in the layers: they ask it through core.care.
        from core.care import panel_register

        from .hooks import ProlificPanel

        panel_register(ProlificPanel())
