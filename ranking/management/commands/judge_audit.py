"""`manage.py judge_audit --study SLUG`: each LLM judge and human cohort against the study's
own human majority (ranking.judge_audit), an evaluator table as AlpacaEval publishes."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.models import Study
from ranking import measures, services

from .agreement import _fmt


class Command(BaseCommand):
    help = "Print the evaluator table: each LLM judge and cohort against the human majority."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="Study slug.")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        data = services.pair_texts_ensure(services.study_data_load(study), study)
        result = measures.judge_audit_compute(study, data=data)
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(render_table(result))


COLUMNS = [
    ("agreement", "agree"),
    ("agreement_no_ties", "no ties"),
    ("first_shown_rate", "first"),
    ("flip_rate", "flip"),
    ("prefer_longer", "longer"),
    ("humans_prefer_longer", "humans"),
    ("self_family_rate", "own fam."),
    ("ece", "ECE"),
    ("brier", "Brier"),
    ("cost_per_1000", "$/1000"),
    ("seconds_per_1000", "s/1000"),
]


def render_table(result: dict[str, Any]) -> str:
    header = f"{'judge':<28} {'kind':<7} {'n':>6} " + " ".join(f"{t:>8}" for _, t in COLUMNS)
    lines = [f"Judges of {result['study']} against the {result['reference']}", header]
    for row in result["judges"]:
        cells = " ".join(f"{_fmt(row[key]):>8}" for key, _ in COLUMNS)
        lines.append(f"{row['judge']:<28} {row['kind']:<7} {row['n']:>6} {cells}")
        if row["agreement_ci_low"] is not None:
            lines.append(
                f"{'':<28} agreement 95% [{_fmt(row['agreement_ci_low'])}, "
                f"{_fmt(row['agreement_ci_high'])}]"
            )
    return "\n".join(lines) + "\n"
