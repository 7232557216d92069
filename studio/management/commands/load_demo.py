from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from studio.demo import (
    DEMO_ADMIN_USERNAME,
    demo_admin_ensure,
    demo_writing_enable,
    load_demo,
)


class Command(BaseCommand):
    help = (
        "Load the demo study (ESConv sample + labelled demo completions); on the embedded demo "
        "database (or with --force) also a demo superuser with a random password."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument(
            "--force",
            action="store_true",
            help="Create the demo superuser even though this is not the embedded demo database.",
        )

    def handle(self, *args: Any, base_url: str, force: bool, **options: Any) -> None:
        study = load_demo(stdout=self.stdout)
        password = demo_admin_ensure(force=force)
        base = base_url.rstrip("/")
        self.stdout.write(self.style.SUCCESS("\nHEART studio demo is ready."))
        self.stdout.write(f"  Rater link:       {base}/r/{study.invite_token}/")
        self.stdout.write(
            f"  Prolific-style:   {base}/r/{study.invite_token}/"
            "?PROLIFIC_PID=demo-participant&STUDY_ID=demo&SESSION_ID=s1"
        )
        self.stdout.write(f"  Studio:           {base}/  (the study admin's pages)")
        self.stdout.write(f"  Study overview:   {base}/studio/{study.slug}/")
        self.stdout.write(f"  Writer link:      {base}{demo_writing_enable(study)}")
        self.stdout.write(f"  Writer review:    {base}/studio/{study.slug}/writers/")
        self.stdout.write(f"  Leaderboard:      {base}/studio/{study.slug}/leaderboard/")
        self.stdout.write(f"  Raters:           {base}/studio/{study.slug}/raters/")
        self.stdout.write(f"  LLM runs:         {base}/studio/{study.slug}/llm/")
        self.stdout.write(f"  Django admin:     {base}/admin/")
        if password is None:
            self.stderr.write(
                "  Admin login:      not created: this is not the embedded demo database "
                "(use `manage.py createsuperuser`, or load_demo --force)"
            )
        else:
            self.stdout.write(f"  Admin login:      {DEMO_ADMIN_USERNAME} / {password}")
