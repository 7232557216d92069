"""A database part-way through an app's old migrations is refused before `migrate` runs.

Each app's migrations were squashed into one that `replaces` the old chain. Django counts the
squashed migration as applied when every migration it replaces is, and applies it on a database
that has none of them. A database with only some of them (part-way through the old chain)
would get neither, silently: the squashed migration is left out and its missing columns never
come. `migrate` runs the database checks first, so it stops here with what to do instead:
migrate with the previous release, which still has the old migrations, then upgrade.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, register
from django.db import connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder


def squashed_part_applied(applied: set[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """Squashed migrations some but not all of whose replaced migrations are in `applied`,
    each with the names of the replaced migrations still missing."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    partial: dict[tuple[str, str], list[str]] = {}
    for key, migration in sorted(loader.disk_migrations.items()):
        replaced = set(migration.replaces)
        done = replaced & applied
        if done and done != replaced:
            partial[key] = sorted(name for _, name in replaced - done)
    return partial


@register(Tags.database)
def squashed_history_complete(
    *, app_configs: Sequence[AppConfig] | None, databases: Sequence[str] | None, **kwargs: Any
) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for alias in databases or []:
        recorder = MigrationRecorder(connections[alias])
        if not recorder.has_table():
            continue
        partial = squashed_part_applied(set(recorder.applied_migrations()))
        for (app, name), missing in partial.items():
            errors.append(
                Error(
                    f"The database {alias!r} is part-way through the {app} app's old migrations, "
                    f"which {name} replaces (not applied: {', '.join(missing)}).",
                    hint="Migrate it with the previous release first (it has the old "
                    "migrations), then upgrade.",
                    id="heart_site.E003",
                )
            )
    return errors
