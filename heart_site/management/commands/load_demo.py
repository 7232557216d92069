from __future__ import annotations

from django.core.management.base import BaseCommand

from heart_site.demo import DEMO_ADMIN, load_demo


class Command(BaseCommand):
    help = "Load the demo study (ESConv sample + labelled demo completions) and a demo admin."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args, base_url: str, **options):
        study = load_demo(stdout=self.stdout)
        base = base_url.rstrip("/")
        user, password = DEMO_ADMIN
        self.stdout.write(self.style.SUCCESS("\nHEART studio demo is ready."))
        self.stdout.write(f"  Rater link:       {base}/r/{study.invite_token}/")
        self.stdout.write(
            f"  Prolific-style:   {base}/r/{study.invite_token}/"
            "?PROLIFIC_PID=demo-participant&STUDY_ID=demo&SESSION_ID=s1"
        )
        self.stdout.write(f"  Leaderboard:      {base}/studio/{study.slug}/leaderboard/")
        self.stdout.write(f"  Rater quality:    {base}/studio/{study.slug}/raters/")
        self.stdout.write(f"  LLM runs:         {base}/studio/{study.slug}/llm/")
        self.stdout.write(f"  Django admin:     {base}/admin/")
        self.stdout.write(f"  Admin login:      {user} / {password}")
