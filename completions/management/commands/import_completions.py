"""python manage.py import_completions FILE.jsonl --study SLUG [--create]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from completions.services import completions_import

from ._common import add_study_arguments, run_import


class Command(BaseCommand):
    help = (
        "Import completions from a JSON Lines file; systems are created as needed "
        "(all or nothing, idempotent by context and system)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        add_study_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        run_import(
            self,
            options,
            lambda study: completions_import(study=study, path=options["path"]),
            "Completions import",
        )
