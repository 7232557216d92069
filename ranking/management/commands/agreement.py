"""`manage.py agreement --study SLUG`: inter-rater and human–LLM agreement of a study."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.models import Study
from ranking import services
from ranking.models import SubsetFilter


class Command(BaseCommand):
    help = "Print agreement statistics: Fleiss' kappa, Krippendorff's alpha, human-LLM agreement."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="Study slug.")
        parser.add_argument("--subset", choices=SubsetFilter.values, default="all")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        summary = services.agreement_compute(study, subset=options["subset"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(summary, indent=2))
        else:
            self.stdout.write(render_table(summary))


def _fmt(value: object) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def render_table(summary: dict[str, Any]) -> str:
    hl = summary.get("human_llm_agreement") or {}
    nt = summary.get("human_llm_agreement_no_ties") or {}
    lines = [
        f"Study {summary['study']} (subset {summary['subset']}, "
        f"{summary['n_judgments']} judgments)",
        f"Fleiss' kappa (human, a/tie/b)       {_fmt(summary.get('fleiss_kappa'))}",
        f"Krippendorff's alpha (human, ordinal) {_fmt(summary.get('krippendorff_alpha'))}",
        f"Inter-human agreement                {_fmt(summary.get('inter_human_agreement'))}"
        f"  (items {summary.get('inter_human_n')})",
        f"Human-LLM agreement                  {_fmt(hl.get('rate'))}"
        f"  [{_fmt(hl.get('ci_low'))}, {_fmt(hl.get('ci_high'))}]  (items {hl.get('n')})",
        f"Human-LLM agreement without ties     {_fmt(nt.get('rate'))}"
        f"  [{_fmt(nt.get('ci_low'))}, {_fmt(nt.get('ci_high'))}]  (items {nt.get('n')})",
        f"Human majority needs at least        {summary.get('human_majority_min_verdicts')} "
        "human verdicts",
        f"Three-way LLM agreement              {_fmt(summary.get('three_way_agreement'))}",
        "Cross-judge agreement:",
    ]
    cross = summary.get("cross_judge_agreement") or {}
    no_ties = summary.get("cross_judge_agreement_no_ties") or {}
    lines.extend(
        f"  {pair:<40} {_fmt(rate)}  (without ties {_fmt(no_ties.get(pair))})"
        for pair, rate in cross.items()
    )
    lines.append("Cross-family agreement:")
    families = summary.get("cross_family_agreement") or {}
    lines.extend(f"  {pair:<40} {_fmt(rate)}" for pair, rate in families.items())
    lines.append("Each LLM judge vs the human majority:")
    by_judge = summary.get("human_llm_agreement_by_judge") or {}
    lines.extend(
        f"  {judge:<40} {_fmt(rate['rate'])}  (items {rate['n']})"
        for judge, rate in by_judge.items()
    )
    lines.append("Position bias (share choosing the left reply):")
    bias = summary.get("position_bias") or {}
    lines.extend(f"  {judge:<40} {_fmt(share)}" for judge, share in bias.items())
    return "\n".join(lines) + "\n"
