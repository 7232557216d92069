"""The ranking app's migrations up to 0005_design_status, squashed into one: made by
makemigrations from the models.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('ranking', '0001_initial'),
        ('ranking', '0002_refit_jobs'),
        ('ranking', '0003_snapshot_preset'),
        ('ranking', '0004_refit_job_boards'),
        ('ranking', '0005_design_status'),
    ]

    dependencies = [
        ('completions', '0001_initial_squashed'),
    ]

    operations = [
        migrations.CreateModel(
            name='DesignStatus',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('computed_at', models.DateTimeField()),
                ('n_judgments', models.PositiveIntegerField(default=0)),
                ('level', models.PositiveSmallIntegerField(default=95)),
                ('pairs', models.JSONField(blank=True, default=list)),
                ('judgments_open', models.PositiveIntegerField(default=0, help_text="Judgments the study's pairs can still take (their quotas).")),
                ('study', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='design_status', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='LeaderboardSnapshot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('judges', models.CharField(choices=[('human', 'Human raters'), ('llm', 'LLM judges'), ('all', 'All judges')], max_length=8)),
                ('subset', models.CharField(choices=[('all', 'All contexts'), ('regular', 'Regular contexts'), ('adversarial', 'Adversarial contexts')], default='all', max_length=16)),
                ('preset', models.CharField(choices=[('default', 'HEART studio defaults'), ('paper', "The paper's choices")], default='default', max_length=16)),
                ('created_at', models.DateTimeField()),
                ('trigger', models.CharField(choices=[('nightly', 'Nightly'), ('manual', 'Manual'), ('command', 'Command'), ('stale', 'Stale')], max_length=16)),
                ('fingerprint', models.CharField(max_length=64)),
                ('max_judgment_id', models.BigIntegerField(blank=True, null=True)),
                ('n_judgments', models.PositiveIntegerField(default=0)),
                ('n_comparisons', models.PositiveIntegerField(default=0)),
                ('n_excluded_raters', models.PositiveIntegerField(default=0)),
                ('n_systems', models.PositiveIntegerField(default=0)),
                ('params', models.JSONField(blank=True, default=dict)),
                ('result', models.JSONField(blank=True, default=dict)),
                ('duration_ms', models.PositiveIntegerField(default=0)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='snapshots', to='completions.study')),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'get_latest_by': 'created_at',
                'indexes': [models.Index(fields=['study', 'judges', 'subset', 'preset', '-created_at'], name='snapshot_latest_preset')],
                'constraints': [models.UniqueConstraint(fields=('study', 'judges', 'subset', 'preset', 'fingerprint'), name='snapshot_unique_inputs_preset'), models.CheckConstraint(condition=models.Q(('judges__in', ['human', 'llm', 'all'])), name='snapshot_judges_valid'), models.CheckConstraint(condition=models.Q(('subset__in', ['all', 'regular', 'adversarial'])), name='snapshot_subset_valid')],
            },
        ),
        migrations.CreateModel(
            name='RefitJob',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('trigger', models.CharField(choices=[('nightly', 'Nightly'), ('manual', 'Manual'), ('command', 'Command'), ('stale', 'Stale')], max_length=16)),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='queued', max_length=8)),
                ('error', models.TextField(blank=True)),
                ('boards', models.JSONField(blank=True, default=list)),
                ('snapshot_ids', models.JSONField(blank=True, default=list)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('lease_until', models.DateTimeField(blank=True, null=True)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='refit_jobs', to='completions.study')),
            ],
            options={
                'indexes': [models.Index(fields=['study', '-created_at'], name='refitjob_study_recent')],
            },
        ),
    ]
