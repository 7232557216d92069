"""python manage.py prolific publish|sync|pay|token --study SLUG [--dry-run]"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.models import Study
from llm.keys import KeyUnavailable
from recruitment.client import ProlificError
from recruitment.services import (
    ProlificNotReady,
    Report,
    prolific_pay,
    prolific_publish,
    prolific_sync,
    prolific_token_set,
)


class Command(BaseCommand):
    help = (
        "Prolific: publish the study (one completion code per outcome), sync the submissions "
        "back (returned or timed out frees places), pay (approve, screen out, reject, bonuses). "
        "--dry-run lists who gets what and why, and sends nothing. `token` stores the study's "
        "API token (encrypted) from the variable named by --token-env."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["publish", "sync", "pay", "token"])
        parser.add_argument("--study", required=True)
        parser.add_argument("--dry-run", action="store_true")
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            help="publish: the public address of this site (the study's entry link)",
        )
        parser.add_argument(
            "--token-env",
            default="PROLIFIC_API_TOKEN",
            help="token: the environment variable holding the token",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study {options['study']!r}")
        action, dry_run = options["action"], options["dry_run"]
        try:
            if action == "token":
                token = os.environ.get(options["token_env"], "")
                if not token:
                    raise CommandError(f"{options['token_env']} is not set")
                hint = prolific_token_set(study=study, token=token).api_token_hint
                self.stdout.write(f"Prolific token stored encrypted {hint}".rstrip())
                return
            if action == "publish":
                report = prolific_publish(
                    study=study, base_url=options["base_url"], dry_run=dry_run
                )
            elif action == "sync":
                report = prolific_sync(study=study, dry_run=dry_run)
            else:
                report = prolific_pay(study=study, dry_run=dry_run)
        except (ProlificError, ProlificNotReady, KeyUnavailable, ValueError) as exc:
            raise CommandError(str(exc)) from None
        self._print(report)

    def _print(self, report: Report) -> None:
        if report.dry_run:
            self.stdout.write("Dry run: nothing sent to Prolific.")
        for line in report.lines:
            self.stdout.write(line)
        summary = ", ".join(f"{k}: {n}" for k, n in sorted(report.counts.items()))
        self.stdout.write(f"In all: {summary or 'nothing to do'}")
