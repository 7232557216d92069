"""manage.py design_pairs --study SLUG [--design all|balanced] [--per-context N] [--seed S]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.services.pairs import pairs_design
from completions.selectors import study_get


class Command(BaseCommand):
    help = (
        "Create the study's pairs: all pairs per context, or a balanced sample of N per "
        "context (reproducible from the seed). Idempotent; defaults come from the study."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--design", choices=["all", "balanced"], default=None)
        parser.add_argument("--per-context", type=int, default=None)
        parser.add_argument("--seed", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_get(slug=options["study"])
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        try:
            report = pairs_design(
                study=study,
                design=options["design"],
                per_context=options["per_context"],
                seed=options["seed"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Pair design for study {study.slug}:")
        for line in report.lines():
            self.stdout.write(f"  {line}")
