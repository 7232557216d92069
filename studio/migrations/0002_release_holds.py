# Texts held back from a release; a database migrated before the studio app existed has the
# table already (see 0001_import_jobs).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    replaces = [("heart_site", "0004_release_holds")]

    dependencies = [
        ('annotation', '0006_i10_submitted_at_unknown'),
        ('completions', '0005_text_unknown_index'),
        ('studio', '0001_import_jobs'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
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
