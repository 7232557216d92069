"""python manage.py api_token USERNAME [--reset]: print a study admin's API token."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.authtoken.models import Token

from completions.access import is_study_admin


class Command(BaseCommand):
    help = "Create (or show) the API token of a study admin; --reset replaces it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--reset", action="store_true", help="revoke the old token")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user {options['username']!r}")
        if not is_study_admin(user):
            raise CommandError(f"{user.username} is not a study admin: no API token")
        if options["reset"]:
            Token.objects.filter(user=user).delete()
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)
