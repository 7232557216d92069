"""The core app's migrations up to 0002_rows_follow_the_moved_apps, squashed into one: made by
makemigrations from the models.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release. The table keeps
the name it got when the project package was an app (heart_site_deferredtask); the heart_site
records an old database keeps in django_migrations are left alone.

Left out, as it only fixed up rows of existing databases: 0002_rows_follow_the_moved_apps
relabelled the outbox's content type and renamed queued tasks from the project package's module
paths.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('core', '0001_deferred_task'),
        ('core', '0002_rows_follow_the_moved_apps'),
    ]

    dependencies = []

    operations = [
        migrations.CreateModel(
            name='DeferredTask',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('args', models.JSONField(default=list)),
                ('kwargs', models.JSONField(default=dict)),
                ('queue', models.CharField(blank=True, help_text="Empty: the task's route.", max_length=100)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('attempts', models.PositiveIntegerField(default=0)),
                ('last_error', models.CharField(blank=True, max_length=500)),
            ],
            options={
                'db_table': 'heart_site_deferredtask',
                'ordering': ['id'],
            },
        ),
    ]
