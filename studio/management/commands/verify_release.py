"""python manage.py verify_release FILE.zip: exit 0 only if every hash matches and Elo
recomputes."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studio.downloads.release import release_verify


class Command(BaseCommand):
    help = "Check a release bundle's SHA256SUMS and recompute its leaderboard in a fresh process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")

    def handle(self, *args: Any, **options: Any) -> None:
        ok, lines = release_verify(options["path"])
        for line in lines:
            self.stdout.write(line)
        if not ok:
            raise CommandError("release NOT verified")
        self.stdout.write("release verified")
