"""The "labellers" group exists from the start, so an admin only adds users to it."""

from django.db import migrations


def create_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name="labellers")


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("labelling", "0001_i12_strategy_labels"),
    ]

    operations = [migrations.RunPython(create_group, migrations.RunPython.noop)]
