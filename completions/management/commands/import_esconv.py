"""python manage.py import_esconv PATH --study SLUG [--limit N] [--create]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from completions.services import esconv_import

from ._common import add_study_arguments, run_import


class Command(BaseCommand):
    help = (
        "Screen an ESConv JSON file (ESConv.json or FailedESConv.json schema) for turns with "
        "response potential and create contexts plus the original replies (docs/screening.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        add_study_arguments(parser)
        parser.add_argument(
            "--limit", type=int, default=None, help="screen only the first N conversations"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        run_import(
            self,
            options,
            lambda study: esconv_import(study=study, path=options["path"], limit=options["limit"]),
            "ESConv import",
        )
