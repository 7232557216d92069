"""Provider batches move from the former `llm_batch` app into `llm`, keeping their table.

The model keeps the table `llm_batch_providerbatch`. On a database that had the `llm_batch` app,
the table and every row are adopted as they are (nothing is copied or altered); on a new
database the table is made here. The `llm_batch` rows in `django_migrations` stay, unread.
"""

import django.db.models.deletion
from django.db import migrations, models


def create_table_unless_adopted(apps, schema_editor):
    model = apps.get_model("llm", "ProviderBatch")
    if model._meta.db_table not in schema_editor.connection.introspection.table_names():
        schema_editor.create_model(model)


class Migration(migrations.Migration):
    dependencies = [("llm", "0001_initial_squashed")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ProviderBatch",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("provider", models.CharField(max_length=16)),
                        ("status", models.CharField(choices=[("submitting", "Submitting"), ("submitted", "Submitted"), ("ingested", "Ingested"), ("failed", "Failed")], default="submitting", max_length=16)),
                        ("provider_batch_id", models.CharField(blank=True, max_length=200)),
                        ("input_file_id", models.CharField(blank=True, max_length=200)),
                        ("provider_status", models.CharField(blank=True, help_text="As the provider says.", max_length=40)),
                        ("requests", models.JSONField(default=dict)),
                        ("n_requests", models.PositiveIntegerField(default=0)),
                        ("n_succeeded", models.PositiveIntegerField(default=0)),
                        ("n_routed_back", models.PositiveIntegerField(default=0, help_text="Units sent back to the normal path (errored, expired, invalid).")),
                        ("n_from_cache", models.PositiveIntegerField(default=0)),
                        ("error", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("checked_at", models.DateTimeField(blank=True, null=True)),
                        ("ended_at", models.DateTimeField(blank=True, null=True)),
                        ("endpoint", models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name="+", to="llm.endpoint")),
                        ("run", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="provider_batches", to="llm.run")),
                    ],
                    options={
                        "db_table": "llm_batch_providerbatch",
                        "indexes": [models.Index(fields=["status"], name="provider_batch_status")],
                    },
                ),
            ],
        ),
        migrations.RunPython(create_table_unless_adopted, migrations.RunPython.noop),
    ]
