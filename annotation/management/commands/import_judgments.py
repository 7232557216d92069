"""python manage.py import_judgments FILE.jsonl --study SLUG [--create]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from annotation.judgment_io import judgments_import
from completions.management.commands._common import add_study_arguments, run_import


class Command(BaseCommand):
    help = (
        "Import judgments (human or LLM) from a JSON Lines file as if made here: contexts, "
        "systems, completions and pairs are created as needed. All or nothing, idempotent."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path")
        add_study_arguments(parser)

    def handle(self, *args, **options) -> None:
        run_import(
            self,
            options,
            lambda study: judgments_import(study=study, path=options["path"]),
            "Judgments import",
        )
