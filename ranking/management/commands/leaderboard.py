"""`manage.py leaderboard --study SLUG`: the Bradley–Terry Elo leaderboard of a study."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.models import Study
from ranking import selectors, services, style, style_board
from ranking.models import JudgeFilter, Preset, RefitTrigger, SubsetFilter
from ranking.services import cohorts as cohort_services

AXES = ("H", "E", "A", "R", "T")
#: Options that change the fit: they cannot be read back from a stored snapshot.
FIT_OPTIONS = (
    "ci",
    "interval",
    "style_recipe",
    "ties",
    "weights",
    "rounds",
    "seed",
    "anchor",
    "min_comparisons",
    "min_per_source",
    "rater_weights",
)


class Command(BaseCommand):
    help = (
        "Fit and print a study's leaderboard (Elo with confidence and rank intervals), or read "
        "the latest stored snapshot with --from-snapshot."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="Study slug.")
        parser.add_argument(
            "--judges",
            choices=JudgeFilter.values,
            help="Whose verdicts the board counts (default: the board the study's design makes "
            "primary: the human judges' when humans judged, else the LLM judges').",
        )
        parser.add_argument("--subset", choices=SubsetFilter.values, default="all")
        parser.add_argument("--format", choices=["table", "json"], default="table")
        parser.add_argument(
            "--preset",
            choices=Preset.values,
            default=Preset.DEFAULT,
            help="default: HEART studio's choices; paper: raw 1-5 strength weights, ties left "
            "out, the paper's asymptotic interval (docs/ranking.md).",
        )
        parser.add_argument(
            "--anchor",
            metavar="SYSTEM",
            help="Fix this system's Elo at 1500 (default: the study's anchor setting, if any).",
        )
        parser.add_argument(
            "--from-snapshot",
            action="store_true",
            help="Print the latest stored snapshot instead of fitting (instant; says when the "
            "judgments changed since).",
        )
        parser.add_argument("--ci", choices=["fisher", "paper", "bootstrap", "sandwich", "none"])
        parser.add_argument(
            "--interval",
            choices=["bootstrap", "sandwich"],
            help="bootstrap: the percentile interval over resampled source conversations "
            "(default); sandwich: the robust interval LMArena's arena-rank reports.",
        )
        parser.add_argument(
            "--style-recipe",
            choices=["heart", "arena"],
            help="With style control: heart (our covariates, not centred; default) or arena "
            "(arena-rank's ContextualBradleyTerry defaults: centred and standardised features, "
            "inverse-propensity weights, a ridge on the coefficients).",
        )
        parser.add_argument("--ties", choices=["half", "davidson", "drop"])
        parser.add_argument("--weights", choices=["normalized", "raw", "none"])
        parser.add_argument(
            "--rater-weights",
            choices=["none", "reliability", "no-outliers"],
            help="How human raters weigh (the rater model): alike, by reliability, or without "
            "the outliers (default: the study's setting).",
        )
        parser.add_argument("--rounds", type=int, help="Bootstrap rounds (with --ci bootstrap).")
        parser.add_argument("--seed", type=int)
        parser.add_argument(
            "--min-comparisons",
            type=int,
            metavar="N",
            help="Comparisons a row needs for an Elo and an interval (default 20); rows below "
            "are shown as too few judgments.",
        )
        parser.add_argument(
            "--min-per-source",
            type=int,
            metavar="N",
            help="Counted judgments each source (humans, LLM judges) needs before the combined "
            "board is shown (default 50).",
        )
        parser.add_argument(
            "--snapshot", action="store_true", help="Also store the fit as a leaderboard snapshot."
        )
        parser.add_argument(
            "--style",
            metavar="FEATURES",
            help="Control for reply style (Chatbot Arena's style control): comma-separated "
            f"features among {', '.join(style.FEATURES)}, or 'none'. The systems are then the "
            "style-controlled board, each with its uncontrolled Elo beside it (default: the "
            "study's style-control setting, shown as a second board).",
        )
        parser.add_argument(
            "--by",
            metavar="KEY",
            help="Also fit a board per value of a context field: emotion_type, problem_type or "
            "a key of the contexts' metadata.",
        )
        parser.add_argument(
            "--cohort",
            metavar="LABEL",
            help="One cohort's board (crowd, clinician or the study's own label): its raters' "
            "judgments only, Fisher intervals, with its agreement with the other cohorts.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        if options["interval"] and options["ci"] and options["interval"] != options["ci"]:
            raise CommandError("--interval and --ci name different intervals: give one")
        if options["judges"] is None:
            options["judges"] = (
                JudgeFilter.HUMAN.value if options["cohort"] else selectors.default_judges(study)
            )
        if options["cohort"]:
            self._cohort(study, options)
            return
        if options["from_snapshot"]:
            result = self._from_snapshot(study, options)
        else:
            result = self._fit(study, options)
        if options["by"]:
            result.update(self._by(study, options))
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(render_table(result))

    def _cohort(self, study: Study, options: dict[str, Any]) -> None:
        given = [
            f"--{name.replace('_', '-')}"
            for name in (*FIT_OPTIONS, "snapshot", "from_snapshot", "style", "by")
            if options[name] not in (None, False)
        ]
        if given or options["judges"] != "human":
            what = ", ".join(given) or f"--judges {options['judges']}"
            raise CommandError(f"{what} cannot be combined with --cohort (human judges only)")
        options["judges"] = "human"
        try:
            result = cohort_services.cohort_board(
                study, cohort=options["cohort"], subset=options["subset"], preset=options["preset"]
            )
        except cohort_services.UnknownCohort as exc:
            known = ", ".join(cohort_services.cohort_labels(study))
            raise CommandError(f"no cohort {options['cohort']!r}; cohorts: {known}") from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(render_cohort_table(result))

    def _by(self, study: Study, options: dict[str, Any]) -> dict[str, Any]:
        try:
            key = services.category_key_check(study, options["by"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        params = services.params_resolve(options["preset"], weights=options["weights"])
        return services.by_compute(
            services.study_data_load(study),
            study=study,
            key=key,
            judges=options["judges"],
            subset=options["subset"],
            params=params,
        )

    def _style(self, options: dict[str, Any]) -> list[str] | None:
        value = options["style"]
        if value is None:
            return None
        if value.strip().lower() == "none":
            return []
        try:
            return style.parse_features(value)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

    def _from_snapshot(self, study: Study, options: dict[str, Any]) -> dict[str, Any]:
        given = [f"--{name}" for name in FIT_OPTIONS if options[name] is not None]
        if given or options["snapshot"]:
            raise CommandError(
                f"{', '.join(given) or '--snapshot'} changes the fit: a stored snapshot cannot "
                "answer it; leave out --from-snapshot to fit now"
            )
        keys = {k: options[k] for k in ("judges", "subset", "preset")}
        snapshot = selectors.snapshot_latest(study, **keys)
        if snapshot is None:
            raise CommandError(
                f"no stored snapshot for judges={keys['judges']} subset={keys['subset']} "
                f"preset={keys['preset']}; store one with --snapshot or leave out --from-snapshot"
            )
        if not services.snapshot_is_current(snapshot, selectors.judgments_state(study)):
            taken = f"{snapshot.created_at:%Y-%m-%d %H:%M}"
            self.stderr.write(
                f"note: the judgments or settings changed since this snapshot ({taken} UTC); "
                "the next refit brings it up to date"
            )
        result = dict(
            snapshot.result,
            snapshot_id=snapshot.pk,
            snapshot_created_at=snapshot.created_at.isoformat(),
        )
        wanted = self._style(options)
        if wanted:
            stored = (result.get("style_control") or {}).get("requested")
            if stored != wanted:
                raise CommandError(
                    f"the stored snapshot controls for {stored or 'no style features'}, not "
                    f"{wanted}: leave out --from-snapshot to fit now"
                )
            result = style_board.controlled_view(result)
        return result

    def _fit(self, study: Study, options: dict[str, Any]) -> dict[str, Any]:
        try:
            params = services.params_resolve(
                options["preset"],
                ci=options["interval"] or options["ci"],
                style_recipe=options["style_recipe"],
                min_comparisons=options["min_comparisons"],
                min_source_judgments=options["min_per_source"],
                ties=options["ties"],
                weights=options["weights"],
                bootstrap_rounds=options["rounds"],
                seed=options["seed"],
                anchor=options["anchor"],
                style=self._style(options),
                rater_weights=options["rater_weights"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["ci"] == "none":
            params["ci"] = None
        data = services.study_data_load(study)
        if params.get("style"):
            services.pair_texts_ensure(data, study)
        known = set(data.systems.index)
        if options["anchor"] and options["anchor"] not in known:
            raise CommandError(
                f"--anchor {options['anchor']!r} is not a system of this study; "
                f"systems: {', '.join(sorted(known)) or 'none'}"
            )
        if options["snapshot"]:
            snapshot = services.snapshot_create(
                study=study,
                judges=options["judges"],
                subset=options["subset"],
                preset=options["preset"],
                trigger=RefitTrigger.COMMAND,
                data=data,
                params=params,
            )
            result = dict(snapshot.result, snapshot_id=snapshot.pk)
        else:
            result = services.leaderboard_from_data(
                data, study=study, judges=options["judges"], subset=options["subset"], params=params
            )
        return (
            style_board.controlled_view(result)
            if params.get("style") and options["style"]
            else result
        )


def _fmt(value: object, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _rank(row: dict[str, Any]) -> str:
    low, high = row.get("rank_low"), row.get("rank_high")
    if low is None:
        return "-"
    return str(low) if low == high else f"{low}-{high}"


def render_table(result: dict[str, Any]) -> str:
    interval = result.get("interval") or {}
    level = interval.get("level")
    lines = [
        f"Study {result['study']}: judges={result['judges']} subset={result['subset']} "
        f"preset={result.get('preset', 'default')} comparisons={result['n_comparisons']} "
        f"excluded raters={result['n_excluded_raters']}",
    ]
    if result.get("counts"):
        lines.append(f"Judges counted: {result['counts'].get('label')}")
    if result.get("anchor"):
        lines.append(f"Anchor: {result['anchor']} (Elo fixed at 1500)")
    if interval:
        lines.append(f"Interval: {interval.get('label') or interval.get('method')}")
    if "uncontrolled_systems" in result:
        lines.append(
            "Elo below: controlled for reply style (uncontrolled Elo beside it further down)"
        )
    head = f"{level}% CI" if level else "interval"
    lines.append(
        f"{'#':>3}  {'system':<28} {'Elo':>7} {head:>17} {'rank':>7} {'win':>6} {'n':>6}  "
        + " ".join(f"{axis:>5}" for axis in AXES)
    )
    for position, row in enumerate(result["systems"], start=1):
        ci = f"[{_fmt(row['ci_low'], '.1f')}, {_fmt(row['ci_high'], '.1f')}]"
        if row.get("too_few"):
            ci = "too few judgments"
        axes = " ".join(f"{_fmt(row['axes'].get(axis), '5.2f'):>5}" for axis in AXES)
        lines.append(
            f"{position:>3}  {row['system'][:28]:<28} {_fmt(row['elo'], '7.1f')} {ci:>17} "
            f"{_rank(row):>7} {_fmt(row['win_rate'], '6.3f')} {row['n']:>6}  {axes}"
        )
    for row in result.get("human_rows", []):  # derived: Best human, Average human
        ci = f"[{_fmt(row['ci_low'], '.1f')}, {_fmt(row['ci_high'], '.1f')}]"
        lines.append(
            f"{'-':>3}  {row['system'][:28]:<28} {_fmt(row['elo'], '7.1f')} {ci:>17} "
            f"{'':>7} {_fmt(row['win_rate'], '6.3f')} {row['n']:>6}"
        )
    lines.extend(f"note: {row['system']}: {row['note']}" for row in result.get("human_rows", []))
    lines.extend(
        f"too few judgments: {row['system']}: {row.get('too_few_reason')}"
        for row in result["systems"]
        if row.get("too_few")
    )
    lines.extend(f"warning: {message}" for message in result.get("warnings", []))
    lines += _style_lines(result) + _by_lines(result)
    return "\n".join(lines) + "\n"


def _style_lines(result: dict[str, Any]) -> list[str]:
    section = result.get("style_control")
    if not section:
        return []
    lines = [
        "",
        f"Style-controlled Elo (controlling for {', '.join(section['features']) or 'nothing'}), "
        "beside the uncontrolled Elo:",
        f"{'#':>3}  {'system':<28} {'controlled':>10} {'95% CI':>17} {'uncontrolled':>12} "
        f"{'change':>7}",
    ]
    for position, row in enumerate(section["systems"], start=1):
        before = (row.get("uncontrolled") or {}).get("elo")
        change = row.get("elo_change")
        ci = f"[{_fmt(row['ci_low'], '.1f')}, {_fmt(row['ci_high'], '.1f')}]"
        lines.append(
            f"{position:>3}  {row['system'][:28]:<28} {_fmt(row['elo'], '10.1f')} {ci:>17} "
            f"{_fmt(before, '12.1f')} {_fmt(change, '+7.1f')}"
        )
    lines.append("Style coefficients (log-odds per SD of the normalised difference; Elo per SD):")
    for name, coef in result.get("style", {}).items():
        lines.append(
            f"  {name:<10} {_fmt(coef['coef'], '+.3f')} [{_fmt(coef['ci_low'], '+.3f')}, "
            f"{_fmt(coef['ci_high'], '+.3f')}]  {_fmt(coef['elo_per_sd'], '+.1f')} Elo"
        )
    lines.extend(f"warning: {message}" for message in section.get("warnings", []))
    audit = (result.get("llm_judges") or {}).get("length_audit")
    if audit and audit.get("humans"):
        human = audit["humans"]
        lines.append(
            f"Length bias (log-odds per SD of length): humans {_fmt(human['coef'], '+.3f')} "
            f"[{_fmt(human['ci_low'], '+.3f')}, {_fmt(human['ci_high'], '+.3f')}]"
        )
        for row in audit["judges"]:
            lines.append(
                f"  {row['judge']:<26} {_fmt(row['coef'], '+.3f')}; minus humans "
                f"{_fmt(row.get('diff'), '+.3f')} [{_fmt(row.get('diff_ci_low'), '+.3f')}, "
                f"{_fmt(row.get('diff_ci_high'), '+.3f')}]: {row.get('reading', '')}"
            )
    return lines


def _by_lines(result: dict[str, Any]) -> list[str]:
    if "by" not in result:
        return []
    lines = ["", f"By {result['by_key']}:"]
    for value, cell in result["by"].items():
        flag = "  (too few comparisons)" if cell.get("too_few") else ""
        lines.append(f"{value}: {cell['n_comparisons']} comparisons{flag}")
        for row in cell["systems"]:
            lines.append(
                f"     {row['system'][:28]:<28} {_fmt(row['elo'], '7.1f')} "
                f"[{_fmt(row['ci_low'], '.1f')}, {_fmt(row['ci_high'], '.1f')}] "
                f"win {_fmt(row['win_rate'], '.3f')} n {row['n']}"
            )
    lines.extend(f"warning: {message}" for message in result.get("by_warnings", []))
    if result.get("by_warnings"):
        lines.append(f"note: {result['by_threshold']['note']}")
    return lines


def render_cohort_table(result: dict[str, Any]) -> str:
    agreement = result["agreement"]
    lines = [
        f"Study {result['study']}: cohort={result['cohort']} subset={result['subset']} "
        f"preset={result['preset']} judgments={result['n_judgments']} raters={result['n_raters']}",
        f"Interval: {result['interval']['level']}% fisher; Fleiss kappa "
        f"{_fmt(agreement['fleiss_kappa'], '.3f')}, Krippendorff alpha "
        f"{_fmt(agreement['krippendorff_alpha'], '.3f')}",
        f"{'#':>3}  {'system':<28} {'Elo':>7} {'95% CI':>17} {'win':>6} {'n':>6}",
    ]
    for position, row in enumerate(result["systems"], start=1):
        ci = f"[{_fmt(row['ci_low'], '.1f')}, {_fmt(row['ci_high'], '.1f')}]"
        lines.append(
            f"{position:>3}  {row['system'][:28]:<28} {_fmt(row['elo'], '7.1f')} {ci:>17} "
            f"{_fmt(row['win_rate'], '6.3f')} {row['n']:>6}"
        )
    for row in result["between"]:
        other = row["right"] if row["left"] == result["cohort"] else row["left"]
        lines.append(
            f"vs {other}: {row['n_items']} pairs both judged, same majority "
            f"{_fmt(row['same_direction'], '.3f')}, Cohen kappa {_fmt(row['cohen_kappa'], '.3f')}, "
            f"Krippendorff alpha {_fmt(row['krippendorff_alpha'], '.3f')}, Spearman rho of Elo "
            f"{_fmt(row['elo_spearman'], '.3f')} ({row['n_systems']} systems)"
        )
    lines.extend(f"warning: {message}" for message in result.get("warnings", []))
    return "\n".join(lines) + "\n"
