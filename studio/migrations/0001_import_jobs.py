# The browser uploads' table, made when the project package was an app: a database migrated
# before the studio app existed has it already (its heart_site migrations are applied, so this
# one counts as applied and runs nothing); a new database gets it under the same name.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("heart_site", "0002_import_jobs"),
        ("heart_site", "0003_import_job_lease_deferred_queue"),
    ]

    dependencies = [
        ("completions", "0002_study_status_entry_limits"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ImportJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("kind", models.CharField(choices=[("esconv", "ESConv JSON (screened into contexts and dataset replies)"), ("contexts", "Contexts (JSON Lines)"), ("completions", "Completions (JSON Lines)"), ("judgments", "Judgments (JSON Lines)")], max_length=16)),
                ("filename", models.CharField(max_length=255)),
                ("size", models.PositiveBigIntegerField(default=0)),
                ("data", models.BinaryField(default=b"")),
                ("status", models.CharField(choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed")], default="queued", max_length=8)),
                ("stage", models.CharField(blank=True, max_length=200)),
                ("report", models.JSONField(blank=True, default=list, help_text="The import report's lines.")),
                ("error", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("lease_until", models.DateTimeField(blank=True, null=True)),
                ("created_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="import_jobs", to="completions.study")),
            ],
            options={
                "db_table": "heart_site_importjob",
                "indexes": [models.Index(fields=["study", "-created_at"], name="importjob_study_recent")],
            },
        ),
    ]
