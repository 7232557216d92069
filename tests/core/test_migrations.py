"""A database made before the base and studio apps existed keeps every row through the move.

Such a database has the outbox's, the uploads' and the release holds' tables under the project
package's names, and its migration records name the project package's migrations. The tables
kept their names, so the new apps' first migrations (which `replace` those) must count as
applied and run nothing; only the rows that named the old module paths are renamed.
"""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from core.models import DeferredTask
from studio.models import ImportJob, ReleaseHold
from tests.factories import CompletionFactory, JudgmentFactory

OLD_RECORDS = [
    ("heart_site", "0001_i7_deferred_task"),
    ("heart_site", "0002_import_jobs"),
    ("heart_site", "0003_import_job_lease_deferred_queue"),
    ("heart_site", "0004_release_holds"),
]


def _as_before_the_move() -> None:
    """The recorder, content types and outbox rows as the old layout left them."""
    records = MigrationRecorder(connection).migration_qs
    records.filter(app__in=["core", "studio"]).delete()
    records.filter(app="heart_site").delete()
    for app, name in OLD_RECORDS:
        records.create(app=app, name=name)
    for model in ("deferredtask", "importjob", "releasehold"):
        ContentType.objects.filter(model=model, app_label__in=["core", "studio"]).update(
            app_label="heart_site"
        )
    DeferredTask.objects.update(name="heart_site.tasks.import_job_run_task")


@pytest.mark.django_db(transaction=True)
def test_an_existing_database_keeps_its_rows_and_runs_only_the_renames():
    completion, judgment = CompletionFactory(), JudgmentFactory()
    study = completion.context.study
    DeferredTask.objects.create(name="studio.tasks.import_job_run_task", args=[7])
    ImportJob.objects.create(study=study, kind="contexts", filename="c.jsonl", data=b"{}")
    ReleaseHold.objects.create(study=study, kind="writer_text", completion=completion, found="e")
    ReleaseHold.objects.create(study=study, kind="rationale", judgment=judgment, found="phone")
    ContentType.objects.get_for_models(DeferredTask, ImportJob, ReleaseHold)
    _as_before_the_move()

    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    planned = {(m.app_label, m.name) for m, _ in plan}
    assert planned == {
        ("core", "0002_rows_follow_the_moved_apps"),
        ("studio", "0003_content_types_follow"),
    }  # no CreateModel on the tables that exist
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert DeferredTask.objects.get().name == "studio.tasks.import_job_run_task"
    assert ImportJob.objects.get().data == b"{}"
    assert ReleaseHold.objects.count() == 2
    labels = set(
        ContentType.objects.filter(
            model__in=["deferredtask", "importjob", "releasehold"]
        ).values_list("app_label", "model")
    )
    assert labels == {("core", "deferredtask"), ("studio", "importjob"), ("studio", "releasehold")}
    applied = MigrationExecutor(connection).loader.applied_migrations
    assert ("core", "0001_deferred_task") in applied
    assert ("studio", "0002_release_holds") in applied
