"""python manage.py format_schemas [--check]: write (or check) docs/formats/*.schema.json."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studio.formats import schema_dir, schema_texts


class Command(BaseCommand):
    help = "Write the JSON Schemas of the contexts, completions and judgments formats."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="exit non-zero if a file is not current"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        folder = schema_dir()
        stale = []
        for name, text in schema_texts().items():
            path = folder / name
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current == text:
                continue
            stale.append(name)
            if not options["check"]:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        if options["check"] and stale:
            raise CommandError(f"not current: {', '.join(stale)} (run manage.py format_schemas)")
        self.stdout.write(f"{'checked' if options['check'] else 'written'}: {folder}")
