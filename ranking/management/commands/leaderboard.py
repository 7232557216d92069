"""`manage.py leaderboard --study SLUG`: the Bradley–Terry Elo leaderboard of a study."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from completions.models import Study
from ranking import services
from ranking.models import JudgeFilter, RefitTrigger, SubsetFilter

AXES = ("H", "E", "A", "R", "T")


class Command(BaseCommand):
    help = "Fit and print a study's leaderboard (Elo with confidence intervals)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--study", required=True, help="Study slug.")
        parser.add_argument("--judges", choices=JudgeFilter.values, default="all")
        parser.add_argument("--subset", choices=SubsetFilter.values, default="all")
        parser.add_argument("--format", choices=["table", "json"], default="table")
        parser.add_argument(
            "--ci",
            choices=["fisher", "paper", "bootstrap", "none"],
            default=services.DEFAULT_PARAMS["ci"],
        )
        parser.add_argument(
            "--ties", choices=["half", "davidson"], default=services.DEFAULT_PARAMS["ties"]
        )
        parser.add_argument(
            "--weights",
            choices=["normalized", "raw", "none"],
            default=services.DEFAULT_PARAMS["weights"],
        )
        parser.add_argument(
            "--rounds",
            type=int,
            default=services.DEFAULT_PARAMS["bootstrap_rounds"],
            help="Bootstrap rounds (with --ci bootstrap).",
        )
        parser.add_argument("--seed", type=int, default=services.DEFAULT_PARAMS["seed"])
        parser.add_argument(
            "--snapshot", action="store_true", help="Also store the fit as a leaderboard snapshot."
        )

    def handle(self, *args, **options) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        params = services.params_resolve(
            ci=None if options["ci"] == "none" else options["ci"],
            ties=options["ties"],
            weights=options["weights"],
            bootstrap_rounds=options["rounds"],
            seed=options["seed"],
        )
        if options["ci"] == "none":
            params["ci"] = None
        result = self._result(study, options, params)
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(render_table(result))

    def _result(self, study: Study, options: dict, params: dict) -> dict:
        if options["snapshot"]:
            snapshot = services.snapshot_create(
                study=study,
                judges=options["judges"],
                subset=options["subset"],
                trigger=RefitTrigger.COMMAND,
                params=params,
            )
            return dict(snapshot.result, snapshot_id=snapshot.pk)
        return services.leaderboard_from_data(
            services.study_data_load(study),
            study=study,
            judges=options["judges"],
            subset=options["subset"],
            params=params,
        )


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def render_table(result: dict) -> str:
    lines = [
        f"Study {result['study']}: judges={result['judges']} subset={result['subset']} "
        f"comparisons={result['n_comparisons']} excluded raters={result['n_excluded_raters']}",
        f"{'#':>3}  {'system':<28} {'Elo':>7} {'95% CI':>17} {'win':>6} {'n':>6}  "
        + " ".join(f"{axis:>5}" for axis in AXES),
    ]
    for rank, row in enumerate(result["systems"], start=1):
        ci = f"[{_fmt(row['ci_low'], '.1f')}, {_fmt(row['ci_high'], '.1f')}]"
        axes = " ".join(f"{_fmt(row['axes'].get(axis), '5.2f'):>5}" for axis in AXES)
        lines.append(
            f"{rank:>3}  {row['system'][:28]:<28} {_fmt(row['elo'], '7.1f')} {ci:>17} "
            f"{_fmt(row['win_rate'], '6.3f')} {row['n']:>6}  {axes}"
        )
    for row in result.get("human_rows", []):  # derived: Humans (pooled), Average Human
        ci = f"[{_fmt(row['ci_low'], '.1f')}, {_fmt(row['ci_high'], '.1f')}]"
        lines.append(
            f"{'-':>3}  {row['system'][:28]:<28} {_fmt(row['elo'], '7.1f')} {ci:>17} "
            f"{_fmt(row['win_rate'], '6.3f')} {row['n']:>6}"
        )
    lines.extend(f"warning: {message}" for message in result.get("warnings", []))
    return "\n".join(lines) + "\n"
