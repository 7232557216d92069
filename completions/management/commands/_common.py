"""Shared bits of the import commands: the --study/--create options and error reporting."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.esconv import EsconvFormatError
from completions.importers import ImportFileError
from completions.models import Study
from completions.services import StudyNotFound, study_resolve

REFUSED = (ImportFileError, EsconvFormatError, StudyNotFound, OSError)


def add_study_arguments(parser: CommandParser) -> None:
    parser.add_argument("--study", required=True, help="slug of the study")
    parser.add_argument(
        "--create",
        action="store_true",
        help="create the study if it does not exist (else: an error)",
    )


@contextmanager
def refused_as_command_error() -> Iterator[None]:
    """Turn a refused import into a CommandError (nothing was written: one transaction)."""
    try:
        yield
    except REFUSED as exc:
        raise CommandError(f"import refused, nothing changed: {exc}") from exc


class Report(Protocol):
    """What an import tells: ImportReport and the judgments import's own report."""

    def lines(self) -> list[str]: ...


def run_import(
    command: BaseCommand, options: dict[str, Any], action: Callable[[Study], Report], title: str
) -> None:
    with refused_as_command_error():
        study = study_resolve(slug=options["study"], create=options["create"])
        report = action(study)
    command.stdout.write(f"{title} into study {study.slug}:")
    for line in report.lines() or ["nothing to do"]:
        command.stdout.write(f"  {line}")
