"""python manage.py release --study SLUG -o FILE.zip"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.selectors import study_get
from studio.downloads.release import release_build


class Command(BaseCommand):
    help = "Write a study's release bundle (data, datasheet, SHA256SUMS, recompute script)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("-o", "--output", required=True, help="the .zip file to write")

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_get(slug=options["study"])
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        try:
            sums = release_build(study=study, out=options["output"])
        except OSError as exc:
            raise CommandError(f"cannot write {options['output']}: {exc}") from exc
        self.stdout.write(f"release of {study.slug}: {len(sums)} files in {options['output']}")
