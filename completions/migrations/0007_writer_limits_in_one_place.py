"""Word limits for writers live in one place, the writer settings: the study's own
"writer_max_words" only seeded them once, so changing it later silently did nothing.

A study whose writer settings were never created and whose "writer_max_words" differs from the
default gets writer settings with that value as the suggested upper word count (what the first
visit of the Writers page would have made), so no choice is lost.
"""

from django.db import migrations

DEFAULT_MAX_WORDS = 60


def carry_max_words(apps, schema_editor):
    Study = apps.get_model("completions", "Study")
    WritingSettings = apps.get_model("writing", "WritingSettings")
    studies = Study.objects.filter(writing_settings__isnull=True).exclude(
        writer_max_words=DEFAULT_MAX_WORDS
    )
    for study in studies:
        WritingSettings.objects.create(study=study, band_max_words=study.writer_max_words)


class Migration(migrations.Migration):
    dependencies = [
        ("completions", "0006_study_draft_status"),
        ("writing", "0001_i9_writers"),
    ]

    operations = [
        migrations.RunPython(carry_max_words, migrations.RunPython.noop),
        migrations.RemoveField(model_name="study", name="writer_max_words"),
    ]
