# The outbox's table, made when the project package was an app: a database migrated before the
# base app existed has it already (its heart_site migrations are applied, so this one counts as
# applied and runs nothing); a new database gets it under the same name.

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("heart_site", "0001_i7_deferred_task"),
        ("heart_site", "0003_import_job_lease_deferred_queue"),
    ]

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="DeferredTask",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=200)),
                ("args", models.JSONField(default=list)),
                ("kwargs", models.JSONField(default=dict)),
                ("queue", models.CharField(blank=True, help_text="Empty: the task's route.", max_length=100)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("last_error", models.CharField(blank=True, max_length=500)),
            ],
            options={
                "db_table": "heart_site_deferredtask",
                "ordering": ["id"],
            },
        ),
    ]
