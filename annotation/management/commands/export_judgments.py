"""python manage.py export_judgments --study SLUG --format csv|jsonl|parquet -o FILE"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.judgment_export import FORMATS, judgments_export
from completions.selectors import study_get


class Command(BaseCommand):
    help = "Stream every judgment of a study to CSV, JSON Lines or Parquet (constant memory)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("-o", "--output", required=True, help="file to write")
        parser.add_argument("--chunk-size", type=int, default=5000)

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_get(slug=options["study"])
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        try:
            n = judgments_export(
                study=study,
                fmt=options["format"],
                path=options["output"],
                chunk_size=options["chunk_size"],
            )
        except OSError as exc:
            raise CommandError(f"cannot write {options['output']}: {exc}") from exc
        self.stdout.write(
            f"exported {n} judgments of study {study.slug} to "
            f"{options['output']} ({options['format']})"
        )
