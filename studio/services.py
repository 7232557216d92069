"""Writes the studio makes: studies, their status, exclusions, browser imports, pair designs.

The imports call the apps' public import services only (completions.services,
annotation.judgment_io): the same all-or-nothing, idempotent imports as the commands.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from annotation.judgment_io import judgments_import
from annotation.models import Pair, Rater
from annotation.services.checks import quality_checks_ensure
from completions.esconv import EsconvFormatError
from completions.importers import ImportFileError
from completions.models import Study, StudyStatus
from completions.services import completions_import, contexts_import, esconv_import
from core.enqueue import enqueue
from core.jobs import failure_reason, job_claim, jobs_stalled, lease_kept
from studio.checks.selectors import bot_table, checks_in_use
from studio.models import ImportJob, ImportKind, ImportStatus

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import UploadedFile

logger = logging.getLogger(__name__)
IMPORT_TASK = "studio.tasks.import_job_run_task"

# What a refused import raises; anything else is a bug and propagates.
REFUSED = (ImportFileError, EsconvFormatError, ValueError, OSError, UnicodeDecodeError)
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
IMPORTERS: dict[str, Callable[[Study, Path], Any]] = {
    ImportKind.ESCONV: lambda study, path: esconv_import(study=study, path=path),
    ImportKind.CONTEXTS: lambda study, path: contexts_import(study=study, path=path),
    ImportKind.COMPLETIONS: lambda study, path: completions_import(study=study, path=path),
    ImportKind.JUDGMENTS: lambda study, path: judgments_import(study=study, path=path),
}


class StatusRefused(Exception):
    """The study cannot take this status now; the message says why, in an admin's words."""


def study_set_status(*, study: Study, status: str) -> Study:
    """Open, pause or close a study. A study opens only once it has pairs to judge (a rater let
    into a study without pairs could only be told to go away), with quality checks when it
    has a check rate, and with gates no simple bot passes (`_gates_hold`); nothing returns to
    draft."""
    if status not in StudyStatus.values or status == StudyStatus.DRAFT:
        raise StatusRefused(f"A study can be opened, paused or closed, not set to {status!r}.")
    if status == StudyStatus.OPEN and not Pair.objects.filter(study=study).exists():
        raise StatusRefused(
            "The study cannot open yet: it has no pairs for raters to judge. Upload contexts "
            "and completions from at least two systems, then design the pairs."
        )
    if status == StudyStatus.OPEN:
        _gates_hold(study)
    study.status = status
    study.save(update_fields=["status"])
    return study


def _gates_hold(study: Study) -> None:
    """A study with a check rate opens with checks (made from its own material when it has
    none), and only where no simple bot passes its qualification or its gold checks."""
    quality_checks_ensure(study=study)
    if study.quality_check_rate > 0 and not checks_in_use(study=study):
        raise StatusRefused(
            f"The study cannot open: its quality-check rate is {study.quality_check_rate:.0%} "
            "but it has no quality checks, and none can be made from its material (no context "
            "has a reply with a known text). Add checks on the Quality checks page, or set the "
            "rate to 0 in the settings."
        )
    problems = bot_table(study=study).problems
    if problems:
        raise StatusRefused(
            "The study cannot open: a script could pass its gates: "
            + "; ".join(problems)
            + ". Change the items on the Quality checks page (qualification: the Care page)."
        )


def rater_exclusion_set(
    *, rater: Rater, override: bool | None, by: User, reason: str = ""
) -> Rater:
    """An admin's decision, kept with who and why: True exclude, False include, None automatic.

    Reversible: going back to automatic clears the override but keeps who did it and when.
    """
    rater.exclusion_override = override
    rater.exclusion_by = by
    rater.exclusion_reason = reason.strip()[:500]
    rater.exclusion_at = timezone.now()
    rater.save(
        update_fields=["exclusion_override", "exclusion_by", "exclusion_reason", "exclusion_at"]
    )
    return rater


@transaction.atomic
def import_job_create(
    *, study: Study, kind: str, upload: UploadedFile[bytes], user: User
) -> ImportJob:
    """Store an uploaded file and queue its import (runs at once in eager mode).

    With the broker down the upload is kept all the same: the outbox holds the task until
    beat can send it.
    """
    job = ImportJob.objects.create(
        study=study,
        kind=kind,
        # A received upload always has both (the type allows None for a file being built).
        filename=Path(upload.name or "upload").name[:255],
        size=upload.size or 0,
        data=b"".join(upload.chunks()),
        created_by=user,
        stage="waiting for a worker",
    )
    transaction.on_commit(lambda: enqueue(IMPORT_TASK, job.pk))
    return job


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Run one queued import; safe to call twice (only the call that claims the job runs it).

    A refused file fails the job with its "line N: reason"; anything else that goes wrong
    fails it too, with the reason on the page, instead of leaving it running for ever.
    """
    if not job_claim(ImportJob, job_id, stage="reading and checking"):
        return None
    job = ImportJob.objects.select_related("study").get(pk=job_id)
    with lease_kept(ImportJob, job_id), tempfile.TemporaryDirectory() as folder:
        name = Path(job.filename).name
        path = Path(folder) / (name if name not in ("", ".", "..") else "upload")
        path.write_bytes(bytes(job.data))
        try:
            report = IMPORTERS[job.kind](job.study, path)
        except REFUSED as exc:
            reason = without_server_paths(str(exc), path=path, folder=folder)
            return _finish(
                job, ImportStatus.FAILED, error=f"import refused, nothing changed: {reason}"
            )
        except Exception as exc:  # a bug or a fault: say so on the page, keep the traceback
            logger.exception("import job %s failed", job_id)
            reason = failure_reason(exc)
            return _finish(
                job, ImportStatus.FAILED, error=f"import failed, nothing changed: {reason}"
            )
    return _finish(job, ImportStatus.DONE, report=report.lines() or ["nothing to do"])


def import_jobs_resume() -> list[int]:
    """Queue again the imports whose worker died mid-run (their lease ran out)."""
    ids = list(jobs_stalled(ImportJob).values_list("pk", flat=True))
    for job_id in ids:
        enqueue(IMPORT_TASK, job_id)
    return ids


def without_server_paths(message: str, *, path: Path, folder: str) -> str:
    """An importer's message as the uploader should read it: the file by its own name, never
    the server's temporary path ("/tmp/tmpab12/x.jsonl: not valid JSON" -> "not valid JSON")."""
    message = message.replace(f"{path}: ", "").replace(str(path), path.name)
    return message.replace(str(folder) + "/", "").replace(str(folder), "the upload")


def _finish(
    job: ImportJob, status: str, *, report: list[Any] | None = None, error: str = ""
) -> ImportJob:
    job.status, job.error, job.report = status, error, report or []
    job.stage, job.data, job.finished_at = "", b"", timezone.now()
    job.save(update_fields=["status", "error", "report", "stage", "data", "finished_at"])
    return job
