"""`manage.py board_history --study SLUG`: the board's record as JSON: every snapshot (its
sampling policy and each system's share of the judgments) and every event (a system added,
taken off with a reason, put back, the sampling policy changed), each dated (ranking.record)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.models import Study
from ranking.record import board_history


class Command(BaseCommand):
    help = "Print the board's record: snapshots and events, each dated (JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="Study slug.")
        parser.add_argument(
            "--snapshots", type=int, default=500, help="At most this many latest snapshots."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        self.stdout.write(
            json.dumps(board_history(study, snapshots=options["snapshots"]), indent=2)
        )
