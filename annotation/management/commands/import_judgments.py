"""python manage.py import_judgments FILE --study SLUG [--create] [--format jsonl|arena|mtbench|csv]
[--map FIELD=COLUMN,...]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from annotation.judgment_io import judgments_import
from annotation.judgment_sources import SOURCE_FORMATS, parse_mapping
from completions.management.commands._common import (
    add_study_arguments,
    refused_as_command_error,
    run_import,
)


class Command(BaseCommand):
    help = (
        "Import judgments (human or LLM) as if made here: the JSON Lines contract, a Chatbot "
        "Arena battle export, MT-Bench pairwise judgments or a plain CSV. Contexts, systems, "
        "completions and pairs are created as needed. All or nothing, idempotent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        add_study_arguments(parser)
        parser.add_argument("--format", choices=SOURCE_FORMATS, default="jsonl")
        parser.add_argument(
            "--map",
            action="append",
            metavar="FIELD=COLUMN",
            help="CSV only: read contract FIELD from COLUMN (repeat, or comma-separate)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        with refused_as_command_error():
            mapping = parse_mapping(options["map"])
        run_import(
            self,
            options,
            lambda study: judgments_import(
                study=study, path=options["path"], fmt=options["format"], mapping=mapping
            ),
            "Judgments import",
        )
