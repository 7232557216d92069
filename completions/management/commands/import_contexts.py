"""python manage.py import_contexts FILE.jsonl --study SLUG [--create]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from completions.services import contexts_import

from ._common import add_study_arguments, run_import


class Command(BaseCommand):
    help = "Import dialogue contexts from a JSON Lines file (all or nothing, idempotent by id)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        add_study_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        run_import(
            self,
            options,
            lambda study: contexts_import(study=study, path=options["path"]),
            "Contexts import",
        )
