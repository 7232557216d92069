"""python manage.py llm_endpoint add NAME --provider openai|anthropic --model ID --family F ...

Re-running `add` with the same NAME updates it. The key is read from the environment variable
named by --api-key-env at call time: it is never stored. The command line is the operator's, but
it obeys the same rules as the studio: the variable must be on LLM_KEY_ENV_ALLOWLIST (never one
of the server's own secrets) and the base URL's host on LLM_ALLOWED_HOSTS (private and local
addresses only with LLM_ALLOW_PRIVATE_NETWORKS). Endpoints made here are shared with every study
unless they already belong to one.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from llm.models import Provider
from llm.selectors import endpoints_all
from llm.services import EndpointError, endpoint_key_problem, endpoint_upsert


class Command(BaseCommand):
    help = "Register or update an LLM endpoint (add), or list them (list)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        add = sub.add_parser("add", help="create or update an endpoint")
        add.add_argument("name")
        add.add_argument("--provider", choices=Provider.values)
        add.add_argument("--model")
        add.add_argument("--family")
        add.add_argument("--base-url", help="OpenAI-compatible URL, e.g. http://localhost:11434/v1")
        add.add_argument(
            "--api-key-env",
            help="name of the environment variable with the key (on LLM_KEY_ENV_ALLOWLIST)",
        )
        add.add_argument("--max-concurrency", type=int)
        add.add_argument("--price-in", type=float, help="USD per million input tokens")
        add.add_argument("--price-out", type=float, help="USD per million output tokens")
        add.add_argument("--timeout", type=float, help="seconds per attempt")
        add.add_argument("--max-retries", type=int, help="the SDK's own retries")
        add.add_argument("--label", help="a note shown beside the name")
        sub.add_parser("list", help="list endpoints")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "list":
            for e in endpoints_all():
                owner = "shared" if e.study is None else f"study {e.study.slug}"
                self.stdout.write(
                    f"{e.name}\t{e.provider}\t{e.model}\t{e.family}\t{e.base_url or '-'}\t"
                    f"{e.key_source}\t{owner}"
                )
            return
        try:
            endpoint, created = endpoint_upsert(
                name=options["name"],
                provider=options["provider"],
                model=options["model"],
                family=options["family"],
                base_url=options["base_url"],
                api_key_env=options["api_key_env"],
                max_concurrency=options["max_concurrency"],
                price_in=options["price_in"],
                price_out=options["price_out"],
                timeout_s=options["timeout"],
                max_retries=options["max_retries"],
                label=options["label"],
            )
        except (EndpointError, ValidationError) as exc:
            raise CommandError(f"endpoint not saved: {exc}") from exc
        verb = "Created" if created else "Updated"
        self.stdout.write(
            f"{verb} endpoint {endpoint.name} ({endpoint.provider}, {endpoint.model})"
        )
        problem = endpoint_key_problem(endpoint)
        if problem:
            self.stderr.write(f"Warning: {problem}; calls will fail until it is set.")
