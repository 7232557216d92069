"""The annotation app's migrations up to 0008_rater_cohort, squashed into one: made by
makemigrations from the models, plus what the models do not declare.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release.

Kept from the replaced migrations:
- 0002_pair_same_context: a pair's two completions share its context, enforced by the database
  (composite foreign keys on PostgreSQL, triggers on SQLite); the models cannot declare it.
- 0005_i7_rater_token added Rater.token without, then with, its unique constraint: the token is
  made the same way here, so the constraint has the same name as in an old database.

Left out, as it only fixed up rows of existing databases: 0005_i7_rater_token's RunPython gave
each existing rater its own token (a new database has no raters; the column's default does it).
"""

import completions.models
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


# 0002_pair_same_context: a pair's two completions belong to its context. PostgreSQL: composite
# foreign keys (completion, context) -> completion (id, context), on the unique constraint
# completion_id_context. SQLite cannot add a constraint to a table, so triggers check the same.
PG_FORWARD = [
    f"""ALTER TABLE annotation_pair ADD CONSTRAINT pair_{side}_same_context
        FOREIGN KEY (completion_{side}_id, context_id)
        REFERENCES completions_completion (id, context_id)
        ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED"""
    for side in ("a", "b")
]
PG_BACKWARD = [
    f"ALTER TABLE annotation_pair DROP CONSTRAINT pair_{side}_same_context" for side in ("a", "b")
]
SQLITE_CHECK = """
    SELECT RAISE(ABORT, 'pair completions must belong to the pair''s context')
    WHERE (SELECT context_id FROM completions_completion WHERE id = NEW.completion_a_id)
          IS NOT NEW.context_id
       OR (SELECT context_id FROM completions_completion WHERE id = NEW.completion_b_id)
          IS NOT NEW.context_id;
"""
SQLITE_FORWARD = [
    f"CREATE TRIGGER pair_same_context_{op} BEFORE {op.upper()} ON annotation_pair "
    f"BEGIN {SQLITE_CHECK} END"
    for op in ("insert", "update")
]
SQLITE_BACKWARD = [f"DROP TRIGGER pair_same_context_{op}" for op in ("insert", "update")]


def pair_same_context(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for sql in {"postgresql": PG_FORWARD, "sqlite": SQLITE_FORWARD}.get(vendor, []):
        schema_editor.execute(sql)


def pair_same_context_undo(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for sql in {"postgresql": PG_BACKWARD, "sqlite": SQLITE_BACKWARD}.get(vendor, []):
        schema_editor.execute(sql)


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('annotation', '0001_initial'),
        ('annotation', '0002_pair_same_context'),
        ('annotation', '0003_assignment_pair_active_lease'),
        ('annotation', '0004_rater_exclusion_who_why'),
        ('annotation', '0005_i7_rater_token'),
        ('annotation', '0005_i8_llm_judge_both_orders'),
        ('annotation', '0006_i10_submitted_at_unknown'),
        ('annotation', '0006_merge_i7_i8'),
        ('annotation', '0007_pair_priority'),
        ('annotation', '0008_rater_cohort'),
    ]

    dependencies = [
        ('completions', '0001_initial_squashed'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Pair',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('n_judgments', models.PositiveIntegerField(default=0)),
                ('quota', models.PositiveSmallIntegerField(default=5)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('completion_a', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='completions.completion')),
                ('completion_b', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='completions.completion')),
                ('context', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='pairs', to='completions.dialoguecontext')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='pairs', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='QualityCheckItem',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('gold', 'Gold'), ('attention', 'Attention')], max_length=16)),
                ('token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('turns', models.JSONField()),
                ('text_a', models.TextField()),
                ('text_b', models.TextField()),
                ('expected', models.CharField(choices=[('a', 'A'), ('b', 'B')], max_length=1)),
                ('expected_choice', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('note', models.CharField(blank=True, max_length=300)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='quality_items', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='Assignment',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('shown_left', models.CharField(choices=[('a', 'A'), ('b', 'B')], max_length=1)),
                ('position', models.PositiveIntegerField(help_text="Order in the rater's queue.")),
                ('status', models.CharField(choices=[('leased', 'Leased'), ('submitted', 'Submitted'), ('expired', 'Expired')], default='leased', max_length=16)),
                ('served_at', models.DateTimeField()),
                ('lease_expires_at', models.DateTimeField()),
                ('submitted_at', models.DateTimeField(blank=True, null=True)),
                ('pair', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='annotation.pair')),
                ('quality_item', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='annotation.qualitycheckitem')),
            ],
        ),
        migrations.CreateModel(
            name='Rater',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('pseudonym', models.CharField(max_length=64, unique=True)),
                ('token', models.CharField(default=completions.models.new_token, max_length=64)),
                ('external_id', models.CharField(blank=True, max_length=200)),
                ('source', models.CharField(default='invite', max_length=32)),
                ('prolific_study_id', models.CharField(blank=True, max_length=200)),
                ('prolific_session_id', models.CharField(blank=True, max_length=200)),
                ('consented_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('cohort', models.CharField(default='crowd', max_length=40)),
                ('flagged', models.BooleanField(default=False)),
                ('flag_reason', models.CharField(blank=True, max_length=300)),
                ('exclusion_override', models.BooleanField(blank=True, null=True)),
                ('exclusion_reason', models.CharField(blank=True, max_length=500)),
                ('exclusion_at', models.DateTimeField(blank=True, null=True)),
                ('exclusion_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='raters', to='completions.study')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='rater_profiles', to=settings.AUTH_USER_MODEL)),
            ],
        ),
        # Unique in a second step, as in 0005_i7_rater_token: the constraint gets the same name.
        migrations.AlterField(
            model_name='rater',
            name='token',
            field=models.CharField(default=completions.models.new_token, max_length=64, unique=True),
        ),
        migrations.CreateModel(
            name='Judgment',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('judge_kind', models.CharField(choices=[('human', 'Human'), ('llm', 'Llm')], max_length=8)),
                ('judge', models.CharField(max_length=200)),
                ('judge_family', models.CharField(blank=True, max_length=100)),
                ('winner', models.CharField(choices=[('a', 'A'), ('b', 'B'), ('tie', 'Tie')], max_length=3)),
                ('strength', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('strength_max', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('axes', models.JSONField(blank=True, default=dict, help_text='{"H": {"winner": "a", "strength": 2}, ...}')),
                ('rationale', models.TextField(blank=True)),
                ('shown_left', models.CharField(blank=True, choices=[('a', 'A'), ('b', 'B')], max_length=1)),
                ('duration_ms', models.PositiveIntegerField(blank=True, null=True)),
                ('submitted_at', models.DateTimeField(blank=True, null=True)),
                ('quality_check', models.BooleanField(default=False)),
                ('passed_check', models.BooleanField(blank=True, null=True)),
                ('raw_output', models.TextField(blank=True)),
                ('prompt_hash', models.CharField(blank=True, max_length=64)),
                ('source', models.CharField(default='platform', help_text='platform, import, or llm', max_length=32)),
                ('metadata', models.JSONField(blank=True, default=dict)),
                ('assignment', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='judgment', to='annotation.assignment')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='judgments', to='completions.study')),
                ('pair', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='judgments', to='annotation.pair')),
                ('quality_item', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='judgments', to='annotation.qualitycheckitem')),
                ('rater', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='judgments', to='annotation.rater')),
            ],
        ),
        migrations.AddField(
            model_name='assignment',
            name='rater',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='annotation.rater'),
        ),
        migrations.CreateModel(
            name='PairPriority',
            fields=[
                ('pair', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='priority', serialize=False, to='annotation.pair')),
                ('rank', models.FloatField()),
                ('rate', models.FloatField()),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='completions.study')),
            ],
        ),
        migrations.AddIndex(
            model_name='pair',
            index=models.Index(fields=['study', 'n_judgments'], name='pair_study_fill'),
        ),
        migrations.AddConstraint(
            model_name='pair',
            constraint=models.UniqueConstraint(fields=('completion_a', 'completion_b'), name='pair_unique'),
        ),
        migrations.AddConstraint(
            model_name='pair',
            constraint=models.CheckConstraint(condition=models.Q(('completion_a__lt', models.F('completion_b'))), name='pair_canonical_order'),
        ),
        migrations.AddConstraint(
            model_name='pair',
            constraint=models.CheckConstraint(condition=models.Q(('n_judgments__lte', models.F('quota'))), name='pair_within_quota'),
        ),
        migrations.AddConstraint(
            model_name='rater',
            constraint=models.UniqueConstraint(condition=models.Q(('external_id', ''), _negated=True), fields=('study', 'external_id'), name='rater_unique_external'),
        ),
        migrations.AddIndex(
            model_name='judgment',
            index=models.Index(fields=['study', 'judge_kind'], name='judgment_study_kind'),
        ),
        migrations.AddConstraint(
            model_name='judgment',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('pair__isnull', False), ('quality_item__isnull', True)), models.Q(('pair__isnull', True), ('quality_item__isnull', False)), _connector='OR'), name='judgment_pair_xor_check'),
        ),
        migrations.AddConstraint(
            model_name='judgment',
            constraint=models.UniqueConstraint(condition=models.Q(('pair__isnull', False), models.Q(('judge_kind', 'llm'), _negated=True)), fields=('pair', 'judge'), name='judgment_judge_pair_once'),
        ),
        migrations.AddConstraint(
            model_name='judgment',
            constraint=models.UniqueConstraint(condition=models.Q(('pair__isnull', False), ('judge_kind', 'llm')), fields=('pair', 'judge', 'shown_left'), name='judgment_llm_pair_order_once'),
        ),
        migrations.AddConstraint(
            model_name='judgment',
            constraint=models.UniqueConstraint(condition=models.Q(('quality_item__isnull', False)), fields=('quality_item', 'judge'), name='judgment_judge_check_once'),
        ),
        migrations.AddConstraint(
            model_name='judgment',
            constraint=models.CheckConstraint(condition=models.Q(('strength__isnull', True), ('strength_max__isnull', False), _connector='OR'), name='judgment_strength_has_scale'),
        ),
        migrations.AddConstraint(
            model_name='judgment',
            constraint=models.CheckConstraint(condition=models.Q(('strength__isnull', True), ('strength__lte', models.F('strength_max')), _connector='OR'), name='judgment_strength_within_scale'),
        ),
        migrations.AddConstraint(
            model_name='judgment',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('winner', 'tie'), _negated=True), ('strength__isnull', True), _connector='OR'), name='judgment_tie_has_no_strength'),
        ),
        migrations.AddIndex(
            model_name='assignment',
            index=models.Index(fields=['rater', 'status'], name='assignment_rater_status'),
        ),
        migrations.AddIndex(
            model_name='assignment',
            index=models.Index(fields=['status', 'lease_expires_at'], name='assignment_lease'),
        ),
        migrations.AddIndex(
            model_name='assignment',
            index=models.Index(condition=models.Q(('status', 'leased')), fields=['pair', 'lease_expires_at'], name='assignment_pair_active_lease'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('pair__isnull', False), ('quality_item__isnull', True)), models.Q(('pair__isnull', True), ('quality_item__isnull', False)), _connector='OR'), name='assignment_pair_xor_check'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.UniqueConstraint(condition=models.Q(('pair__isnull', False)), fields=('rater', 'pair'), name='assignment_rater_pair_once'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.UniqueConstraint(condition=models.Q(('quality_item__isnull', False)), fields=('rater', 'quality_item'), name='assignment_rater_check_once'),
        ),
        migrations.AddIndex(
            model_name='pairpriority',
            index=models.Index(fields=['study', 'rank'], name='pairpriority_study_rank'),
        ),
        migrations.AddConstraint(
            model_name='pairpriority',
            constraint=models.CheckConstraint(condition=models.Q(('rate__gt', 0)), name='pairpriority_rate_pos'),
        ),
        migrations.RunPython(pair_same_context, pair_same_context_undo),
    ]
