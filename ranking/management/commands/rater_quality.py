"""`manage.py rater_quality --study SLUG`: each rater's reliability, left/right bias and the
sequential outlier test (ranking.raters), fitted now on every human verdict of the study."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.models import Study
from ranking import measures

from .agreement import _fmt


class Command(BaseCommand):
    help = "Print each rater's reliability, position bias and outlier test (the rater model)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="Study slug.")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        result = measures.rater_quality_compute(study)
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(render_table(result))


def render_table(result: dict[str, Any]) -> str:
    lines = [
        f"Raters of {result['study']}: {result['model']['name']} on {result['model']['items']}",
        f"{'rater':<28} {'cohort':<12} {'n':>5} {'reliab.':>8} {'left bias':>9} "
        f"{'left rate':>9} {'p':>7}  outlier",
    ]
    for row in result["raters"]:
        lines.append(
            f"{row['rater']:<28} {row['cohort'] or '-':<12} {row['n']:>5} "
            f"{_fmt(row['reliability']):>8} {_fmt(row['position_bias']):>9} "
            f"{_fmt(row['left_rate']):>9} {_fmt(row['p_value']):>7}  "
            f"{'yes' if row['outlier'] else 'no'}{' (excluded)' if row['excluded'] else ''}"
        )
    lines.append("Per cohort (verdict-weighted):")
    for row in result["cohorts"]:
        lines.append(
            f"  {row['cohort']:<26} raters {row['raters']:>4}  verdicts {row['n']:>6}  "
            f"reliability {_fmt(row['reliability'])}  left bias {_fmt(row['position_bias'])}  "
            f"outliers {row['outliers']}"
        )
    lines.append(
        "reliability: chance the rater judges on quality; left bias: chance of picking the left "
        "reply otherwise (0.5 none); outlier: Chatbot Arena's sequential test."
    )
    return "\n".join(lines) + "\n"
