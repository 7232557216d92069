# Rows that named the old module paths: the admin's content type of the outbox's model, and the
# tasks the outbox kept under their old names (sent under the new ones once the broker answers).

from django.db import migrations

TASK_NAMES = {
    "heart_site.tasks.deferred_tasks_send": "core.tasks.deferred_tasks_send",
    "heart_site.tasks.import_job_run_task": "studio.tasks.import_job_run_task",
    "heart_site.tasks.jobs_resume_stalled": "studio.tasks.import_jobs_resume_stalled",
    "completions.llm.tasks.llm_run_execute": "llm.tasks.llm_run_execute",
    "completions.llm.tasks.llm_runs_resume": "llm.tasks.llm_runs_resume",
    "completions.llm.batch.tasks.llm_batch_submit": "llm.batch.tasks.llm_batch_submit",
    "completions.llm.batch.tasks.llm_batches_poll": "llm.batch.tasks.llm_batches_poll",
}


def content_type_move(apps, app_label: str, model: str) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label=app_label, model=model).exists():
        content_type.objects.filter(app_label="heart_site", model=model).update(app_label=app_label)


def forward(apps, schema_editor) -> None:
    content_type_move(apps, "core", "deferredtask")
    deferred = apps.get_model("core", "DeferredTask")
    for old, new in TASK_NAMES.items():
        deferred.objects.filter(name=old).update(name=new)


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("core", "0001_deferred_task"),
    ]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
