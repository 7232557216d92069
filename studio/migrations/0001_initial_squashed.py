"""The studio app's migrations up to 0003_content_types_follow, squashed into one: made by
makemigrations from the models.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release. The tables keep
the names they got when the project package was an app (heart_site_importjob,
heart_site_releasehold); the heart_site records an old database keeps in django_migrations are
left alone.

Left out, as it only fixed up rows of existing databases: 0003_content_types_follow relabelled
the admin's content types from heart_site.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('studio', '0001_import_jobs'),
        ('studio', '0002_release_holds'),
        ('studio', '0003_content_types_follow'),
    ]

    dependencies = [
        ('annotation', '0001_initial_squashed'),
        ('completions', '0001_initial_squashed'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ImportJob',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('esconv', 'ESConv JSON (screened into contexts and dataset replies)'), ('contexts', 'Contexts (JSON Lines)'), ('completions', 'Completions (JSON Lines)'), ('judgments', 'Judgments (JSON Lines)')], max_length=16)),
                ('filename', models.CharField(max_length=255)),
                ('size', models.PositiveBigIntegerField(default=0)),
                ('data', models.BinaryField(default=b'')),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='queued', max_length=8)),
                ('stage', models.CharField(blank=True, max_length=200)),
                ('report', models.JSONField(blank=True, default=list, help_text="The import report's lines.")),
                ('error', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('lease_until', models.DateTimeField(blank=True, null=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='import_jobs', to='completions.study')),
            ],
            options={
                'db_table': 'heart_site_importjob',
                'indexes': [models.Index(fields=['study', '-created_at'], name='importjob_study_recent')],
            },
        ),
        migrations.CreateModel(
            name='ReleaseHold',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('writer_text', "Writer's text"), ('rationale', "Rater's rationale")], max_length=16)),
                ('found', models.CharField(help_text='What the screen found, e.g. e-mail.', max_length=200)),
                ('decision', models.CharField(choices=[('pending', 'Waiting for review'), ('release', 'Released'), ('keep_out', 'Kept out')], default='pending', max_length=8)),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('completion', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='completions.completion')),
                ('decided_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('judgment', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.judgment')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='release_holds', to='completions.study')),
            ],
            options={
                'db_table': 'heart_site_releasehold',
                'constraints': [models.UniqueConstraint(fields=('completion',), name='releasehold_completion_once'), models.UniqueConstraint(fields=('judgment',), name='releasehold_judgment_once'), models.CheckConstraint(condition=models.Q(('completion__isnull', False), ('judgment__isnull', False), _connector='XOR'), name='releasehold_one_item')],
            },
        ),
    ]
