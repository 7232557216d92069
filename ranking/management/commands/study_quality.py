"""`manage.py study_quality --study SLUG`: can the study separate its systems, do its boards
agree, how reliable is the order, and how many judgments its target needs
(ranking.study_quality, arena-hard-auto's measures on the boards' bootstrap)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.models import Study
from ranking import measures, services, study_targets

from .agreement import _fmt


class Command(BaseCommand):
    help = "Print the study's grade: separability, agreement with confidence, pair-rank Brier."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="Study slug.")
        parser.add_argument("--format", choices=["table", "json"], default="table")
        parser.add_argument(
            "--target",
            type=float,
            help="Target separability (share of system pairs told apart); default: the "
            "study's setting.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        target = options["target"] if options["target"] is not None else study.target_separability
        if not 0 < target <= 1:
            raise CommandError("--target is a share above 0 and at most 1 (0.8 = 80 %)")
        data = services.study_data_load(study)
        params = services.params_resolve("default")
        boards = {
            judges: services.leaderboard_from_data(
                data, study=study, judges=judges, subset="all", params=params
            )
            for judges in ("human", "llm")
        }
        params = dict(params, rater_weights=data.rater_weights)
        section = measures.study_quality_compute(study, data=data, boards=boards, params=params)
        result = study_targets.study_quality_served(measures.plain(section), target)
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(render_table(result))


def render_table(result: dict[str, Any]) -> str:
    lines = [f"How well {result['study']} separates its systems ({result['level']}% intervals)"]
    for name, sep in result["separability"].items():
        lines.append(
            f"  separability, {name:<6} {_fmt(sep['value'])}  "
            f"({sep['separated']} of {sep['pairs']} system pairs apart)"
        )
    for key, title in (
        ("agreement_with_confidence", "agreement with confidence"),
        ("pair_rank_brier", "pair-rank Brier"),
    ):
        for row in result[key]:
            lines.append(f"  {title}, {row['label']}: {_fmt(row['value'])} ({row['pairs']} pairs)")
    for name, half in result["split_half"].items():
        lines.append(
            f"  split-half reliability, {name:<6} {_fmt(half['value'])} "
            f"(halves correlate {_fmt(half['half_correlation'])}, {half['splits']} splits)"
        )
    need = result["judgments_needed"]
    if need["needed"] is None:
        lines.append(f"  target {need['target']:.0%} on the {need['board']} board: not reachable")
    else:
        lines.append(
            f"  target {need['target']:.0%} on the {need['board']} board: about "
            f"{need['needed']} judgments ({need['additional']} more than the {need['judgments']} "
            "counted)"
        )
    return "\n".join(lines) + "\n"
