"""New studies start as drafts: raters are let in once the study has pairs and is opened.

Existing studies keep their status, except an open study without a single pair: nobody could
judge anything in it (a rater following its link was told to return the study), so it becomes
a draft, which raters are told has not started yet. Writers work in drafts as in open studies.
"""

from django.db import migrations, models


def open_without_pairs_to_draft(apps, schema_editor):
    Study = apps.get_model("completions", "Study")
    Pair = apps.get_model("annotation", "Pair")
    with_pairs = Pair.objects.values("study_id")
    Study.objects.filter(status="open").exclude(pk__in=with_pairs).update(status="draft")


def draft_to_open(apps, schema_editor):
    apps.get_model("completions", "Study").objects.filter(status="draft").update(status="open")


class Migration(migrations.Migration):
    dependencies = [
        ("completions", "0005_text_unknown_index"),
        ("annotation", "0006_i10_submitted_at_unknown"),
    ]

    operations = [
        migrations.AlterField(
            model_name="study",
            name="status",
            field=models.CharField(
                choices=[
                    ("draft", "Draft"),
                    ("open", "Open"),
                    ("paused", "Paused"),
                    ("closed", "Closed"),
                ],
                default="draft",
                max_length=8,
            ),
        ),
        migrations.RunPython(open_without_pairs_to_draft, draft_to_open),
    ]
