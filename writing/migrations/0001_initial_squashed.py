"""The writing app's migrations up to 0002_writer_cohort, squashed into one: made by
makemigrations from the models.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release.
"""

import completions.models
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('writing', '0001_i9_writers'),
        ('writing', '0002_writer_cohort'),
    ]

    dependencies = [
        ('completions', '0001_initial_squashed'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Writer',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('pseudonym', models.CharField(max_length=64, unique=True)),
                ('token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('external_id', models.CharField(blank=True, max_length=200)),
                ('source', models.CharField(default='invite', max_length=32)),
                ('prolific_study_id', models.CharField(blank=True, max_length=200)),
                ('prolific_session_id', models.CharField(blank=True, max_length=200)),
                ('consented_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('cohort', models.CharField(default='crowd', max_length=40)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='writers', to='completions.study')),
                ('system', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='writer', to='completions.system')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='writer_profiles', to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.CreateModel(
            name='Writing',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('status', models.CharField(choices=[('draft', 'Draft'), ('pending', 'Pending'), ('accepted', 'Accepted'), ('rejected', 'Rejected'), ('expired', 'Expired')], default='draft', max_length=10)),
                ('text', models.TextField(blank=True)),
                ('leased_at', models.DateTimeField()),
                ('lease_expires_at', models.DateTimeField()),
                ('draft_saved_at', models.DateTimeField(blank=True, null=True)),
                ('submitted_at', models.DateTimeField(blank=True, null=True)),
                ('active_ms', models.PositiveIntegerField(default=0)),
                ('keystrokes', models.PositiveIntegerField(default=0)),
                ('inserted_chars', models.PositiveIntegerField(default=0)),
                ('focus_lost', models.PositiveIntegerField(default=0)),
                ('longest_insert', models.PositiveIntegerField(default=0)),
                ('insert_after_away', models.BooleanField(default=False)),
                ('flags', models.JSONField(blank=True, default=list)),
                ('reviewed_at', models.DateTimeField(blank=True, null=True)),
                ('reject_reason', models.CharField(blank=True, max_length=500)),
                ('completion', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='writing', to='completions.completion')),
                ('context', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='writings', to='completions.dialoguecontext')),
                ('reviewed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='completions.study')),
                ('writer', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='writings', to='writing.writer')),
            ],
        ),
        migrations.CreateModel(
            name='WritingContext',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('opened_at', models.DateTimeField(auto_now_add=True)),
                ('context', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='writing', to='completions.dialoguecontext')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='WritingSettings',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('enabled', models.BooleanField(default=False, help_text='Writer links accept writers.')),
                ('invite_token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('entry', models.CharField(choices=[('open', 'Open invitation link'), ('prolific', 'Prolific only (PROLIFIC_PID required)')], default='open', max_length=8)),
                ('completion_code', models.CharField(default=completions.models.new_completion_code, max_length=32)),
                ('prolific_redirect_url', models.URLField(blank=True)),
                ('consent_text', models.TextField(blank=True, help_text='Blank: the default consent text.')),
                ('instructions', models.TextField(blank=True, help_text='Blank: the default instructions.')),
                ('band_min_words', models.PositiveSmallIntegerField(default=15)),
                ('band_max_words', models.PositiveSmallIntegerField(default=60)),
                ('band_min_sentences', models.PositiveSmallIntegerField(default=1)),
                ('band_max_sentences', models.PositiveSmallIntegerField(default=3)),
                ('min_words', models.PositiveSmallIntegerField(default=3)),
                ('max_words', models.PositiveSmallIntegerField(default=120)),
                ('max_chars', models.PositiveIntegerField(default=1000)),
                ('block_paste', models.BooleanField(default=False)),
                ('lease_seconds', models.PositiveIntegerField(default=3600, help_text='How long a context stays reserved for the writer who opened it.')),
                ('contexts_per_writer', models.PositiveIntegerField(blank=True, help_text='Cap per writer (blank: as many as are open).', null=True)),
                ('study', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='writing_settings', to='completions.study')),
            ],
            options={
                'verbose_name_plural': 'writing settings',
            },
        ),
        migrations.AddConstraint(
            model_name='writer',
            constraint=models.UniqueConstraint(condition=models.Q(('external_id', ''), _negated=True), fields=('study', 'external_id'), name='writer_unique_external'),
        ),
        migrations.AddConstraint(
            model_name='writer',
            constraint=models.UniqueConstraint(condition=models.Q(('user__isnull', False)), fields=('study', 'user'), name='writer_unique_user'),
        ),
        migrations.AddIndex(
            model_name='writing',
            index=models.Index(fields=['context', 'status'], name='writing_context_status'),
        ),
        migrations.AddIndex(
            model_name='writing',
            index=models.Index(fields=['writer', 'status'], name='writing_writer_status'),
        ),
        migrations.AddConstraint(
            model_name='writing',
            constraint=models.UniqueConstraint(fields=('writer', 'context'), name='writing_writer_once'),
        ),
        migrations.AddConstraint(
            model_name='writing',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'rejected'), _negated=True), models.Q(('reject_reason', ''), _negated=True), _connector='OR'), name='writing_reject_has_reason'),
        ),
        migrations.AddConstraint(
            model_name='writingsettings',
            constraint=models.CheckConstraint(condition=models.Q(('min_words__lte', models.F('max_words'))), name='writing_limits_ordered'),
        ),
    ]
