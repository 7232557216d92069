# Rater.token: what the rater's browser holds (a signed cookie) instead of a session entry.
# Added in three steps so that existing raters each get their own unique token.
import secrets

from django.db import migrations, models

import completions.models


def fill_tokens(apps, schema_editor):
    Rater = apps.get_model("annotation", "Rater")
    for rater in Rater.objects.only("pk").iterator():
        Rater.objects.filter(pk=rater.pk).update(token=secrets.token_urlsafe(16))


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0004_rater_exclusion_who_why"),
    ]

    operations = [
        migrations.AddField(
            model_name="rater",
            name="token",
            field=models.CharField(max_length=64, null=True),
        ),
        migrations.RunPython(fill_tokens, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="rater",
            name="token",
            field=models.CharField(
                default=completions.models.new_token, max_length=64, unique=True
            ),
        ),
    ]
