"""The llm app's migrations up to 0002_endpoint_owner_keys_bounded_replies, squashed into
one: made by makemigrations from the models.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release.

Left out, as they only fixed up rows of existing databases: 0002's RunPython cleared key
variables naming server secrets and cut stored raw replies to the keep limit.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('llm', '0001_i8_engine'),
        ('llm', '0002_endpoint_owner_keys_bounded_replies'),
    ]

    dependencies = [
        ('completions', '0001_initial_squashed'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='CachedCall',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=64, unique=True)),
                ('provider', models.CharField(max_length=16)),
                ('model', models.CharField(max_length=200)),
                ('request', models.JSONField(help_text='The full request: messages, parameters, schema.')),
                ('text', models.TextField()),
                ('model_reported', models.CharField(blank=True, max_length=200)),
                ('request_id', models.CharField(blank=True, max_length=200)),
                ('tokens_in', models.PositiveIntegerField(default=0)),
                ('tokens_out', models.PositiveIntegerField(default=0)),
                ('ttft_ms', models.FloatField(blank=True, null=True)),
                ('latency_ms', models.FloatField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.CreateModel(
            name='Endpoint',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.SlugField(max_length=100, unique=True)),
                ('label', models.CharField(blank=True, help_text='Shown beside the name.', max_length=200)),
                ('provider', models.CharField(choices=[('openai', 'OpenAI-compatible (OpenAI, vLLM, Ollama, OpenRouter, ...)'), ('anthropic', 'Anthropic')], max_length=16)),
                ('base_url', models.URLField(blank=True, help_text="Empty: the provider's public API.")),
                ('model', models.CharField(max_length=200)),
                ('family', models.CharField(help_text='gpt, claude, gemini, llama, ...', max_length=100)),
                ('api_key_env', models.CharField(blank=True, help_text='Name of the environment variable with the key (LLM_KEY_ENV_ALLOWLIST only).', max_length=100)),
                ('api_key_encrypted', models.TextField(blank=True, help_text='The key entered in the form, encrypted (never shown).')),
                ('api_key_hint', models.CharField(blank=True, help_text="The stored key's last characters, e.g. …f3a9.", max_length=8)),
                ('price_in', models.FloatField(default=0.0, help_text='USD per million input tokens.')),
                ('price_out', models.FloatField(default=0.0, help_text='USD per million output tokens.')),
                ('max_concurrency', models.PositiveIntegerField(default=4, help_text='Calls at once, across every worker and process.')),
                ('timeout_s', models.FloatField(default=60.0, help_text="Per attempt, the SDK's timeout.")),
                ('max_retries', models.PositiveSmallIntegerField(default=2, help_text="The SDK's own retries (429/5xx/timeouts, Retry-After honoured).")),
                ('is_demo', models.BooleanField(default=False, help_text='Points at the bundled fake server.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('study', models.ForeignKey(blank=True, help_text='The study that owns it; empty: shared with every study.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='llm_endpoints', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='EndpointSlot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('index', models.PositiveIntegerField()),
                ('holder', models.CharField(blank=True, max_length=64)),
                ('lease_until', models.DateTimeField(blank=True, null=True)),
                ('endpoint', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='slots', to='llm.endpoint')),
            ],
        ),
        migrations.CreateModel(
            name='Run',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(max_length=32)),
                ('params', models.JSONField(blank=True, default=dict)),
                ('plan', models.JSONField(blank=True, default=dict)),
                ('status', models.CharField(choices=[('planned', 'Planned'), ('running', 'Running'), ('finished', 'Finished'), ('cancelled', 'Cancelled'), ('budget', 'stopped at budget')], default='planned', max_length=16)),
                ('budget_usd', models.FloatField(blank=True, null=True)),
                ('tokens_in', models.BigIntegerField(default=0)),
                ('tokens_out', models.BigIntegerField(default=0)),
                ('cost', models.FloatField(default=0.0)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('endpoints', models.ManyToManyField(related_name='runs', to='llm.endpoint')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='llm_runs', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='Unit',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(help_text='Unique in the run, e.g. pair:12/judge:3/ab', max_length=200)),
                ('payload', models.JSONField(default=dict, help_text='What the run kind needs (ids, order).')),
                ('status', models.CharField(choices=[('pending', 'Pending'), ('in_flight', 'in flight'), ('done', 'Done'), ('failed', 'Failed'), ('invalid', 'Invalid')], default='pending', max_length=16)),
                ('claim_token', models.CharField(blank=True, max_length=64)),
                ('lease_until', models.DateTimeField(blank=True, null=True)),
                ('attempts', models.PositiveIntegerField(default=0, help_text='Times claimed.')),
                ('sends', models.PositiveIntegerField(default=0, help_text='Times sent to the provider.')),
                ('repairs', models.PositiveSmallIntegerField(default=0)),
                ('request_hash', models.CharField(blank=True, max_length=64)),
                ('from_cache', models.BooleanField(default=False)),
                ('raw_reply', models.TextField(blank=True, help_text='Kept for failures and invalid replies: the first LLM_RAW_REPLY_KEEP_CHARS.')),
                ('raw_reply_chars', models.PositiveIntegerField(default=0, help_text='Full length of the raw reply (characters), before truncation.')),
                ('raw_reply_sha256', models.CharField(blank=True, help_text='SHA-256 of the full raw reply (UTF-8).', max_length=64)),
                ('raw_reply_cut', models.BooleanField(default=False, help_text='The provider sent more than the cap: reading stopped there.')),
                ('error', models.TextField(blank=True)),
                ('result', models.JSONField(blank=True, default=dict)),
                ('tokens_in', models.PositiveIntegerField(default=0)),
                ('tokens_out', models.PositiveIntegerField(default=0)),
                ('cost', models.FloatField(default=0.0)),
                ('ttft_ms', models.FloatField(blank=True, null=True)),
                ('latency_ms', models.FloatField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('call', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='units', to='llm.cachedcall')),
                ('endpoint', models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name='units', to='llm.endpoint')),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='units', to='llm.run')),
            ],
        ),
        migrations.AddConstraint(
            model_name='endpoint',
            constraint=models.CheckConstraint(condition=models.Q(('max_concurrency__gte', 1)), name='endpoint_concurrency_positive'),
        ),
        migrations.AddConstraint(
            model_name='endpoint',
            constraint=models.CheckConstraint(condition=models.Q(('price_in__gte', 0), ('price_out__gte', 0)), name='endpoint_prices_non_negative'),
        ),
        migrations.AddConstraint(
            model_name='endpoint',
            constraint=models.CheckConstraint(condition=models.Q(('study__isnull', True), ('api_key_env', ''), _connector='OR'), name='endpoint_key_variable_shared_only'),
        ),
        migrations.AddConstraint(
            model_name='endpointslot',
            constraint=models.UniqueConstraint(fields=('endpoint', 'index'), name='slot_unique_index'),
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(fields=['study', 'kind'], name='run_study_kind'),
        ),
        migrations.AddIndex(
            model_name='unit',
            index=models.Index(fields=['run', 'endpoint', 'status'], name='unit_claim'),
        ),
        migrations.AddConstraint(
            model_name='unit',
            constraint=models.UniqueConstraint(fields=('run', 'key'), name='unit_unique_key'),
        ),
    ]
