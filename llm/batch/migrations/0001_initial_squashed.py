"""The llm_batch app's migrations up to 0002_endpoint_restrict, squashed into one: made by
makemigrations from the models.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('llm_batch', '0001_i12_provider_batches'),
        ('llm_batch', '0002_endpoint_restrict'),
    ]

    dependencies = [
        ('llm', '0001_initial_squashed'),
    ]

    operations = [
        migrations.CreateModel(
            name='ProviderBatch',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('provider', models.CharField(max_length=16)),
                ('status', models.CharField(choices=[('submitting', 'Submitting'), ('submitted', 'Submitted'), ('ingested', 'Ingested'), ('failed', 'Failed')], default='submitting', max_length=16)),
                ('provider_batch_id', models.CharField(blank=True, max_length=200)),
                ('input_file_id', models.CharField(blank=True, max_length=200)),
                ('provider_status', models.CharField(blank=True, help_text='As the provider says.', max_length=40)),
                ('requests', models.JSONField(default=dict)),
                ('n_requests', models.PositiveIntegerField(default=0)),
                ('n_succeeded', models.PositiveIntegerField(default=0)),
                ('n_routed_back', models.PositiveIntegerField(default=0, help_text='Units sent back to the normal path (errored, expired, invalid).')),
                ('n_from_cache', models.PositiveIntegerField(default=0)),
                ('error', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('checked_at', models.DateTimeField(blank=True, null=True)),
                ('ended_at', models.DateTimeField(blank=True, null=True)),
                ('endpoint', models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name='+', to='llm.endpoint')),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='provider_batches', to='llm.run')),
            ],
            options={
                'indexes': [models.Index(fields=['status'], name='provider_batch_status')],
            },
        ),
    ]
