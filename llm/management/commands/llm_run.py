"""python manage.py llm_run generate|judge|label|adversarial|status --study SLUG ...

`generate`, `judge`, `label` (strategy labels, paper 9.10) and `adversarial` (seeker-turn
rewrites, paper 9.2) print the plan, start the run and wait for it: with a real worker they
show a progress bar; in the embedded default (eager Celery) the command runs it itself.
`--batch` (generate, judge, label) sends the calls through the provider's batch API at batch
prices; the command then waits for the batch (polling it itself in the embedded default).
Exit 0 when the run finished (failed and invalid units are counted, not fatal).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.adversarial import PROFILES
from completions.models import Study
from llm import services
from llm.executor import run_execute
from llm.models import Endpoint, Run, RunStatus
from llm.selectors import run_counts, run_status_row, runs_for_study


class Command(BaseCommand):
    help = "Run LLM jobs: generate completions, judge pairs, or show the runs' status."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        generate = sub.add_parser("generate", help="one completion per context and endpoint")
        generate.add_argument("--study", required=True)
        generate.add_argument("--endpoint", action="append", required=True, dest="endpoints")
        generate.add_argument("--budget", type=float, help="stop at this many USD")
        judge = sub.add_parser("judge", help="LLM judges on every pair, both orders")
        judge.add_argument("--study", required=True)
        judge.add_argument("--judge", action="append", required=True, dest="endpoints")
        judge.add_argument("--budget", type=float, help="stop at this many USD")
        label = sub.add_parser("label", help="strategy labels of every completion (9.10)")
        label.add_argument("--study", required=True)
        label.add_argument("--judge", action="append", required=True, dest="endpoints")
        label.add_argument("--budget", type=float, help="stop at this many USD")
        for parser_ in (generate, judge, label):
            parser_.add_argument(
                "--batch", action="store_true", help="use the provider's batch API (half price)"
            )
        rewrite = sub.add_parser("adversarial", help="adversarial rewrites of seeker turns (9.2)")
        rewrite.add_argument("--study", required=True)
        rewrite.add_argument("--endpoint", action="append", required=True, dest="endpoints")
        rewrite.add_argument("--profile", required=True, choices=list(PROFILES))
        rewrite.add_argument("--contexts", type=int, default=20, help="source contexts (20)")
        rewrite.add_argument("--seed", type=int, default=0)
        rewrite.add_argument("--budget", type=float, help="stop at this many USD")
        status = sub.add_parser("status", help="the study's runs")
        status.add_argument("--study", required=True)
        status.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study {options['study']!r}")
        if options["action"] == "status":
            return self._status(study, options["format"])
        kind = options["action"]
        endpoints = self._endpoints(options["endpoints"])
        params = {}
        if kind == "adversarial":
            params = {k: options[k] for k in ("profile", "contexts", "seed")}
        try:
            run = services.run_plan(
                study=study,
                kind=kind,
                endpoints=endpoints,
                budget_usd=options["budget"],
                params=params,
            )
        except (services.EndpointError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self._print_plan(run)
        if options.get("batch"):
            self._start_batch_and_wait(run)
        else:
            self._start_and_wait(run)

    def _endpoints(self, names: list[str]) -> list[Endpoint]:
        found = {e.name: e for e in Endpoint.objects.filter(name__in=names)}
        missing = [n for n in names if n not in found]
        if missing:
            raise CommandError(f"unknown endpoint(s): {', '.join(missing)} (see llm_endpoint add)")
        for endpoint in found.values():
            problem = services.endpoint_key_problem(endpoint)
            if problem:
                raise CommandError(problem)
        return [found[n] for n in dict.fromkeys(names)]

    def _print_plan(self, run: Run) -> None:
        plan = run.plan
        self.stdout.write(
            f"Run {run.pk} ({run.kind}): {plan['units']} calls, about "
            f"{plan['est_tokens_in']} input / {plan['est_tokens_out']} output tokens, "
            f"estimated ${plan['est_cost']:.4f}"
        )
        if plan.get("skipped_own_family"):
            by_judge = ", ".join(
                f"{k}: {v}" for k, v in plan["skipped_own_family_by_judge"].items()
            )
            self.stdout.write(f"Skipped (own family): {plan['skipped_own_family']} ({by_judge})")

    def _start_and_wait(self, run: Run) -> None:
        inline = services.runs_execute_inline()
        services.run_start(run=run, dispatch=not inline)
        if inline:
            run_execute(run.pk)
        else:
            self._wait(run)
        self._report(run)

    def _start_batch_and_wait(self, run: Run) -> None:
        from llm.services import batches

        inline = services.runs_execute_inline()
        try:
            batches.batch_run_start(run=run, submit=not inline)
        except batches.BatchError as exc:
            raise CommandError(str(exc)) from exc
        if not inline:
            self._wait(run)  # the worker submits; beat polls and ingests
            return self._report(run)
        for batch in batches.batches_submit(run_id=run.pk):
            self.stdout.write(f"Submitted {batch}: {batch.status}")
        while batches.batches_pending(run):
            time.sleep(self.batch_poll_seconds)
            batches.batches_poll(run=run, dispatch=False)
        run_execute(run.pk)  # what came back from the batches, then the run's end
        self._report(run)

    batch_poll_seconds = 5.0

    def _report(self, run: Run) -> None:
        run.refresh_from_db()
        counts = run_counts(run)
        self.stdout.write(
            f"Run {run.pk} {run.status}: {counts['done']} done, {counts['failed']} failed, "
            f"{counts['invalid']} invalid, {counts['from_cache']} from cache; "
            f"{run.tokens_in} + {run.tokens_out} tokens, ${run.cost:.4f}"
        )
        if run.status != RunStatus.FINISHED:
            raise CommandError(f"run {run.pk} stopped: {run.get_status_display()}")

    def _wait(self, run: Run) -> None:
        """A progress bar on stderr while a worker does the work."""
        tty = sys.stderr.isatty()
        while True:
            run.refresh_from_db(fields=["status", "cost", "tokens_in", "tokens_out"])
            counts = run_counts(run)
            finished = counts["units"] - counts["remaining"]
            bar = "#" * (30 * finished // max(1, counts["units"]))
            line = (
                f"[{bar:<30}] {finished}/{counts['units']}  failed {counts['failed']}  "
                f"invalid {counts['invalid']}  ${run.cost:.4f}"
            )
            self.stderr.write(("\r" + line) if tty else line, ending="" if tty else "\n")
            if run.status != RunStatus.RUNNING:
                break
            time.sleep(0.5 if tty else 5)
        if tty:
            self.stderr.write("")

    def _status(self, study: Study, fmt: str) -> None:
        rows = [run_status_row(run) for run in runs_for_study(study)]
        if fmt == "json":
            self.stdout.write(json.dumps(rows, indent=2))
            return
        for r in rows:
            names = ", ".join(r.get("judges") or r.get("endpoints") or [])
            self.stdout.write(
                f"run {r['run']} {r['kind']} {r['status']}: {r['done']}/{r['units']} done, "
                f"{r['failed']} failed, {r['invalid']} invalid, "
                f"{r['skipped_own_family']} skipped (own family), ${r['cost']:.4f} [{names}]"
            )
