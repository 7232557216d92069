# The admin's content types of the studio's models, made under the project package's label.

from django.db import migrations


def forward(apps, schema_editor) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in ("importjob", "releasehold"):
        if not content_type.objects.filter(app_label="studio", model=model).exists():
            content_type.objects.filter(app_label="heart_site", model=model).update(
                app_label="studio"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("studio", "0002_release_holds"),
    ]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
