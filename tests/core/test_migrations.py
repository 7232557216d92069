"""Each app's migrations are squashed into one: a new database gets the models' schema, and a
database at the previous release (every old migration applied) is recognised and runs nothing.

The old chains' data migrations (content-type relabelling, rows carried from removed fields)
were left out of the squashed migrations: their tests went with them.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.apps import apps
from django.core.checks import run_checks
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

# Every migration of the previous release, by app: what a deployed database has applied.
OLD_CHAINS = {
    "annotation": [
        "0001_initial",
        "0002_pair_same_context",
        "0003_assignment_pair_active_lease",
        "0004_rater_exclusion_who_why",
        "0005_i7_rater_token",
        "0005_i8_llm_judge_both_orders",
        "0006_i10_submitted_at_unknown",
        "0006_merge_i7_i8",
        "0007_pair_priority",
        "0008_rater_cohort",
    ],
    "completions": [
        "0001_initial",
        "0002_study_status_entry_limits",
        "0003_i7_short_lease",
        "0003_i8_llm_settings",
        "0004_i10_study_admins_text_unknown",
        "0004_i12_adversarial_source",
        "0004_merge_i7_i8",
        "0005_text_unknown_index",
        "0006_study_draft_status",
        "0007_writer_limits_in_one_place",
        "0008_analysis_settings",
        "0009_study_style_features",
        "0010_study_adaptive_assignment",
        "0011_study_cohorts",
    ],
    "core": ["0001_deferred_task", "0002_rows_follow_the_moved_apps"],
    "labelling": ["0001_i12_strategy_labels", "0002_i12_labellers_group"],
    "llm": ["0001_i8_engine", "0002_endpoint_owner_keys_bounded_replies"],
    "ranking": [
        "0001_initial",
        "0002_refit_jobs",
        "0003_snapshot_preset",
        "0004_refit_job_boards",
        "0005_design_status",
    ],
    "studio": ["0001_import_jobs", "0002_release_holds", "0003_content_types_follow"],
    "writing": ["0001_i9_writers", "0002_writer_cohort"],
}
SQUASHED = "0001_initial_squashed"
# Apps of the previous release folded into another since: their records stay, unread.
FOLDED = {"llm_batch": ["0001_i12_provider_batches", "0002_endpoint_restrict", SQUASHED]}
# Apps made after the squash: their whole chain runs on a database at the previous release.
NEW_APPS = {"recruitment": ["0001_prolific_outcomes_payments"]}
OUR_APPS = [*OLD_CHAINS, "care", *NEW_APPS]
# Migrations made after the squash, per app (each keeps every row).
AFTER_SQUASH = {
    "annotation": [
        "0002_participant",  # raters and writers share completions.Participant
        "0003_quality_check_retired",  # quality checks can be retired
        "0004_rater_withdrawn_assignment_released",  # withdrawal; items released at a stop
    ],
    "writing": ["0002_participant"],
    "completions": [
        "0002_study_rater_weights_target",  # rater weights and the study's target
        "0003_study_adaptive_goal",  # the adaptive goal
        "0004_study_phone_regions",  # the regions whose phone numbers the screen finds
    ],
    "ranking": [
        "0002_board_event_goal_plan",  # the board's record, the goal planner
        "0003_snapshot_sections",  # category and cohort boards stored by the refit
    ],
    "care": ["0002_withdrawal_skip_limit"],  # withdrawal allowed; the skip limit reached
    "llm": ["0002_provider_batch_joins_llm"],  # provider batches, from the llm_batch app
    **NEW_APPS,  # rater outcomes and Prolific (recruitment)
}


def test_each_app_has_one_migration_that_replaces_exactly_its_old_chain():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    for app in OUR_APPS:
        names = sorted(name for label, name in loader.disk_migrations if label == app)
        if app == "care":
            assert names == ["0001_care_qualification_notes_skips_stops", *AFTER_SQUASH["care"]]
            continue
        if app in NEW_APPS:
            assert names == NEW_APPS[app], app
            continue
        assert names == [SQUASHED, *AFTER_SQUASH.get(app, [])], app
        replaces = loader.disk_migrations[app, SQUASHED].replaces
        assert replaces == [(app, name) for name in OLD_CHAINS[app]], app


@pytest.mark.django_db
def test_the_models_need_no_migration_the_squashed_ones_do_not_make():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)  # exits 1 on changes
    assert "No changes detected" in out.getvalue()


@pytest.mark.django_db
def test_a_fresh_database_has_each_models_table_columns_constraints_and_indexes():
    """The test database was migrated from scratch by the squashed migrations."""
    with connection.cursor() as cursor:
        tables = set(connection.introspection.table_names(cursor))
        for app in OUR_APPS:
            for model in apps.get_app_config(app).get_models(include_auto_created=True):
                table = model._meta.db_table
                assert table in tables, table
                columns = {
                    column.name
                    for column in connection.introspection.get_table_description(cursor, table)
                }
                assert columns == {f.column for f in model._meta.local_concrete_fields}, table
                names = set(connection.introspection.get_constraints(cursor, table))
                declared = {c.name for c in [*model._meta.constraints, *model._meta.indexes]}
                assert declared <= names, (table, declared - names)


@pytest.mark.django_db
def test_the_pair_same_context_guard_the_models_do_not_declare_is_made():
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            names = set(connection.introspection.get_constraints(cursor, "annotation_pair"))
            assert {"pair_a_same_context", "pair_b_same_context"} <= names
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            triggers = {name for (name,) in cursor.fetchall()}
            assert {"pair_same_context_insert", "pair_same_context_update"} <= triggers


@pytest.mark.django_db
def test_the_labellers_group_exists_from_the_start():
    assert apps.get_model("auth", "Group").objects.filter(name="labellers").exists()


def _records_as_at_the_previous_release(leave_out: tuple[str, str] | None = None) -> None:
    records = MigrationRecorder(connection).migration_qs
    records.filter(app__in=[*OLD_CHAINS, *NEW_APPS, *FOLDED]).delete()
    for app, names in [*OLD_CHAINS.items(), *FOLDED.items()]:
        for name in names:
            if (app, name) != leave_out:
                records.create(app=app, name=name)


@pytest.mark.django_db
def test_a_database_at_the_previous_release_counts_them_applied_and_runs_nothing():
    _records_as_at_the_previous_release()

    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    assert sorted((m.app_label, m.name) for m, _ in plan) == sorted(
        (app, name)
        for app, names in AFTER_SQUASH.items()
        if app in OLD_CHAINS or app in NEW_APPS
        for name in names
    )  # only what came after the squash (care was never squashed: its records stay)
    applied = executor.loader.applied_migrations
    assert all((app, SQUASHED) in applied for app in OLD_CHAINS)
    assert not run_checks(databases=["default"], tags=["database"])


@pytest.mark.django_db
def test_a_database_part_way_through_an_old_chain_is_refused_with_what_to_do():
    """Django would skip the squashed migration there without a word; the check says why."""
    _records_as_at_the_previous_release(leave_out=("annotation", "0008_rater_cohort"))

    errors = [e for e in run_checks(databases=["default"]) if e.id == "heart_site.E003"]
    assert len(errors) == 1
    assert "annotation" in errors[0].msg and "0008_rater_cohort" in errors[0].msg
    assert "previous release" in errors[0].hint


@pytest.mark.django_db(transaction=True)
def test_raters_and_writers_keep_every_row_and_column_through_the_participant_migration():
    """Rater and Writer took their common fields from one abstract model: the migration
    changes no column (sqlmigrate: no-op), and rows made before it are all there after it."""
    try:
        _participant_rows_kept()
    finally:  # whatever happened, the database is left at today's schema for the next tests
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def _participant_rows_kept() -> None:
    from django.utils import timezone

    from tests.factories import StudyFactory, WriterFactory

    executor = MigrationExecutor(connection)
    before = [("annotation", SQUASHED), ("writing", SQUASHED)]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    # Raters as the old model makes them (the model of today has columns added since).
    study = StudyFactory()
    old_rater = old.get_model("annotation", "Rater")
    for i in range(3):
        old_rater.objects.create(
            study_id=study.pk,
            pseudonym=f"r-old{i}",
            external_id=f"P{i}",
            cohort="clinician",
            consented_at=timezone.now(),
        )
    writers = [WriterFactory(external_id=f"W{i}") for i in range(2)]
    columns = {
        model: sorted(old.get_model(app, model).objects.values_list(*_participant_columns(), "pk"))
        for app, model in (("annotation", "Rater"), ("writing", "Writer"))
    }
    MigrationExecutor(connection).migrate(
        [("annotation", AFTER_SQUASH["annotation"][-1]), ("writing", AFTER_SQUASH["writing"][-1])]
    )
    from annotation.models import Rater
    from writing.models import Writer

    assert sorted(Rater.objects.values_list(*_participant_columns(), "pk")) == columns["Rater"]
    assert sorted(Writer.objects.values_list(*_participant_columns(), "pk")) == columns["Writer"]
    raters = list(Rater.objects.order_by("pk"))
    assert len(columns["Rater"]) == len(raters) == 3 and len(columns["Writer"]) == len(writers)
    # The reverse names the pages and the quality rules use are unchanged.
    assert raters[0].study.raters.filter(pk=raters[0].pk).exists()
    assert writers[0].study.writers.filter(pk=writers[0].pk).exists()
    assert raters[0].user is None or raters[0].user.rater_profiles.exists()


@pytest.mark.django_db(transaction=True)
def test_provider_batches_keep_their_table_and_rows_when_the_llm_app_takes_them():
    """A database of the previous release has the llm_batch app's table: llm's migration adopts
    it as it is (rows kept); a new database gets the table from the same migration."""
    executor = MigrationExecutor(connection)
    try:
        executor.migrate([("llm", SQUASHED)])  # the state before; the table stays (no-op back)
        with connection.cursor() as cursor:
            assert "llm_batch_providerbatch" in connection.introspection.table_names(cursor)
            cursor.execute("SELECT count(*) FROM llm_batch_providerbatch")
            assert cursor.fetchone() == (0,)
        from django.utils import timezone

        from tests.factories import EndpointFactory, RunFactory

        endpoint = EndpointFactory()
        run = RunFactory()
        with connection.cursor() as cursor:  # a row as the llm_batch app wrote it
            cursor.execute(
                "INSERT INTO llm_batch_providerbatch (run_id, endpoint_id, provider, status, "
                "provider_batch_id, input_file_id, provider_status, requests, n_requests, "
                "n_succeeded, n_routed_back, n_from_cache, error, created_at) VALUES "
                "(%s, %s, 'openai', 'submitted', 'batch_1', 'file_1', 'in_progress', %s, 3, 0, 0,"
                " 0, '', %s)",
                [run.pk, endpoint.pk, '{"h": [1, 2, 3]}', timezone.now()],
            )
        MigrationExecutor(connection).migrate([("llm", AFTER_SQUASH["llm"][-1])])

        from llm.models import ProviderBatch

        batch = ProviderBatch.objects.get()
        assert (batch.run_id, batch.provider_batch_id, batch.n_requests) == (run.pk, "batch_1", 3)
        assert batch.requests == {"h": [1, 2, 3]} and batch.status == "submitted"
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def _participant_columns() -> list[str]:
    from completions.models import Participant

    return [f.attname for f in Participant._meta.fields]
