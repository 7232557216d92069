"""The labelling app's migrations up to 0002_i12_labellers_group, squashed into one: made by
makemigrations from the models, plus the "labellers" group (0002), which exists from the start
so an admin only adds users to it.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release.
"""

import completions.models
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models



def create_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name="labellers")


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('labelling', '0001_i12_strategy_labels'),
        ('labelling', '0002_i12_labellers_group'),
    ]

    dependencies = [
        ('completions', '0001_initial_squashed'),
        ('llm', '0001_initial_squashed'),
        ('auth', '0012_alter_user_first_name_max_length'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='LabelSet',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('kind', models.CharField(choices=[('llm', 'LLM classifier run'), ('import', 'Imported labels')], default='llm', max_length=8)),
                ('status', models.CharField(choices=[('running', 'Running'), ('finished', 'Finished'), ('failed', 'Failed')], default='running', max_length=8)),
                ('labeller', models.CharField(blank=True, help_text='Endpoint or source name.', max_length=200)),
                ('taxonomy_version', models.CharField(max_length=40)),
                ('taxonomy_hash', models.CharField(max_length=64)),
                ('prompt_version', models.CharField(blank=True, max_length=40)),
                ('prompt_hash', models.CharField(blank=True, max_length=64)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('run', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='label_sets', to='llm.run')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='label_sets', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='CompletionLabels',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('labels', models.JSONField(help_text='{"Affirmation": {"status", "p", "evidence"}, ...}')),
                ('present', models.JSONField(default=list, help_text='Strategies with status present.')),
                ('raw_reply', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('completion', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='strategy_labels', to='completions.completion')),
                ('label_set', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rows', to='labelling.labelset')),
            ],
        ),
        migrations.CreateModel(
            name='SampleItem',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('position', models.PositiveIntegerField()),
                ('stratum', models.CharField(blank=True, max_length=200)),
                ('completion', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='completions.completion')),
            ],
            options={
                'ordering': ['position'],
            },
        ),
        migrations.CreateModel(
            name='HumanLabel',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('present', models.JSONField(default=list)),
                ('note', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('labeller', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='strategy_labels', to=settings.AUTH_USER_MODEL)),
                ('item', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='human_labels', to='labelling.sampleitem')),
            ],
        ),
        migrations.CreateModel(
            name='Adjudication',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('present', models.JSONField(default=list)),
                ('decided_at', models.DateTimeField(auto_now=True)),
                ('decided_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('item', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='adjudication', to='labelling.sampleitem')),
            ],
        ),
        migrations.CreateModel(
            name='ValidationSample',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('name', models.CharField(max_length=200)),
                ('size', models.PositiveIntegerField()),
                ('seed', models.BigIntegerField(default=0)),
                ('labellers_per_item', models.PositiveSmallIntegerField(default=2)),
                ('is_open', models.BooleanField(default=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='label_samples', to='completions.study')),
            ],
        ),
        migrations.AddField(
            model_name='sampleitem',
            name='sample',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='items', to='labelling.validationsample'),
        ),
        migrations.AddIndex(
            model_name='labelset',
            index=models.Index(fields=['study', 'status', 'finished_at'], name='labelling_l_study_i_3141b7_idx'),
        ),
        migrations.AddConstraint(
            model_name='completionlabels',
            constraint=models.UniqueConstraint(fields=('label_set', 'completion'), name='labels_one_per_completion'),
        ),
        migrations.AddConstraint(
            model_name='humanlabel',
            constraint=models.UniqueConstraint(fields=('item', 'labeller'), name='human_label_once'),
        ),
        migrations.AddConstraint(
            model_name='validationsample',
            constraint=models.CheckConstraint(condition=models.Q(('labellers_per_item__gte', 2)), name='sample_two_labellers_or_more'),
        ),
        migrations.AddConstraint(
            model_name='sampleitem',
            constraint=models.UniqueConstraint(fields=('sample', 'completion'), name='sample_item_once'),
        ),
        migrations.RunPython(create_group, migrations.RunPython.noop),
    ]
