"""The completions app's migrations up to 0011_study_cohorts, squashed into one: made by
makemigrations from the models.

A database that applied every replaced migration counts this one as applied and runs nothing; a
database part-way through them must first migrate with the previous release.

Left out, as they only fixed up rows of existing databases: 0002's RunPython set status from
the removed is_active field, 0004_i10's lifted and restored the annotation triggers for a
SQLite table rebuild (the table is now made whole before the triggers exist), 0006's turned
open studies without pairs into drafts, 0007's carried writer_max_words into the writer
settings.
"""

import completions.models
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('completions', '0001_initial'),
        ('completions', '0002_study_status_entry_limits'),
        ('completions', '0003_i7_short_lease'),
        ('completions', '0003_i8_llm_settings'),
        ('completions', '0004_i10_study_admins_text_unknown'),
        ('completions', '0004_i12_adversarial_source'),
        ('completions', '0004_merge_i7_i8'),
        ('completions', '0005_text_unknown_index'),
        ('completions', '0006_study_draft_status'),
        ('completions', '0007_writer_limits_in_one_place'),
        ('completions', '0008_analysis_settings'),
        ('completions', '0009_study_style_features'),
        ('completions', '0010_study_adaptive_assignment'),
        ('completions', '0011_study_cohorts'),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Study',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('slug', models.SlugField(unique=True)),
                ('name', models.CharField(max_length=200)),
                ('description', models.TextField(blank=True)),
                ('status', models.CharField(choices=[('draft', 'Draft'), ('open', 'Open'), ('paused', 'Paused'), ('closed', 'Closed')], default='draft', max_length=8)),
                ('pause_lets_finish', models.BooleanField(default=True, help_text='While paused, a rater holding an item may still submit it.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('judgments_per_pair', models.PositiveSmallIntegerField(default=5)),
                ('quality_check_rate', models.FloatField(default=0.1, help_text="Share of a rater's queue that is quality-check items (0-1).")),
                ('show_rubric', models.BooleanField(default=False, help_text='Show raters the HEART rubric (off in the paper, 4.2).')),
                ('axis_marks', models.BooleanField(default=False, help_text='Let raters mark per-axis advantages (H/E/A/R/T).')),
                ('rationale_required', models.BooleanField(default=False)),
                ('items_per_rater', models.PositiveIntegerField(default=20, help_text="Real items in one rater's queue (quality checks come on top).")),
                ('lease_seconds', models.PositiveIntegerField(default=180, help_text='How long an item stays reserved for a rater who opened it; the open page renews it while the rater is active.')),
                ('rater_entry', models.CharField(choices=[('open', 'Open invitation link'), ('prolific', 'Prolific only (PROLIFIC_PID required)')], default='open', max_length=8)),
                ('max_active_raters', models.PositiveIntegerField(blank=True, help_text='Cap on raters working at once (Prolific places).', null=True)),
                ('max_items_per_context', models.PositiveSmallIntegerField(default=1, help_text='How many items of the same context one rater may see.')),
                ('rationale_max_chars', models.PositiveIntegerField(default=2000)),
                ('invite_token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('completion_code', models.CharField(default=completions.models.new_completion_code, max_length=32)),
                ('prolific_redirect_url', models.URLField(blank=True)),
                ('consent_text', models.TextField(blank=True)),
                ('instructions', models.TextField(blank=True)),
                ('writers_per_context', models.PositiveSmallIntegerField(default=3)),
                ('pair_design', models.CharField(choices=[('all', 'All pairs'), ('balanced', 'Balanced sample')], default='all', max_length=16)),
                ('pairs_per_context', models.PositiveIntegerField(blank=True, null=True)),
                ('pair_seed', models.BigIntegerField(default=0)),
                ('adaptive_assignment', models.BooleanField(default=False, help_text="Offer raters the pairs whose judgments shrink the leaderboard's uncertainty most (updated at each refit), instead of the least-judged pair.")),
                ('llm_games', models.CharField(choices=[('both', 'Both orders count as two games'), ('consistent', 'Consistent verdicts only (a disagreement is a tie)')], default='both', max_length=16)),
                ('human_majority_min', models.PositiveSmallIntegerField(default=2, help_text='Human verdicts a pair needs before its human majority counts (agreement).')),
                ('human_weight_share', models.FloatField(default=0.5, help_text="Share of the combined (all judges) board's weight given to human verdicts, the rest to LLM judges: 0.5 weighs the two sources equally, whatever their counts (the paper preset weighs every verdict alike instead).")),
                ('leaderboard_anchor', models.CharField(blank=True, help_text='A system whose Elo is fixed at 1500, so adding a model never moves the others. Blank: Elo centred on the mean, as in the paper.', max_length=200)),
                ('family_aliases', models.JSONField(blank=True, default=dict, help_text='Extra model-family aliases of this study, on top of the built-in table (openai = gpt, anthropic = claude, google = gemini, meta = llama, ...).')),
                ('style_features', models.JSONField(blank=True, default=list, help_text='Reply features the style-controlled leaderboard controls for, shown beside the plain one (length in words, questions asked, list items, markdown). None: no style-controlled board.')),
                ('cohort_labels', models.CharField(blank=True, help_text="Extra cohorts besides crowd and clinician, comma-separated (e.g. 'peer-supporter, student'). Each cohort gets its own invitation and writer link.", max_length=500)),
                ('cohort_parameter', models.CharField(blank=True, help_text='A URL parameter whose value names the cohort (e.g. COHORT, if your Prolific study URL adds &COHORT=clinician). Blank: only the cohort links set a cohort.', max_length=64)),
                ('admins', models.ManyToManyField(blank=True, help_text='Study admins of this study (superusers reach every study).', related_name='administered_studies', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name_plural': 'studies',
            },
        ),
        migrations.CreateModel(
            name='DialogueContext',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('external_id', models.CharField(max_length=200)),
                ('token', models.CharField(default=completions.models.new_token, max_length=64, unique=True)),
                ('turns', models.JSONField(help_text='[{"speaker": "seeker"|"supporter", "text": "..."}]')),
                ('emotion_type', models.CharField(blank=True, max_length=100)),
                ('problem_type', models.CharField(blank=True, max_length=200)),
                ('source', models.CharField(blank=True, max_length=100)),
                ('source_id', models.CharField(blank=True, max_length=200)),
                ('adversarial', models.BooleanField(default=False)),
                ('escalation_profile', models.CharField(blank=True, choices=[('Always-10', 'Always 10'), ('Linear-Ramp', 'Linear Ramp'), ('Mid-Spike', 'Mid Spike'), ('Mid-Ramp', 'Mid Ramp')], default='', max_length=16)),
                ('metadata', models.JSONField(blank=True, default=dict)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('adversarial_source', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='adversarial_variants', to='completions.dialoguecontext')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='contexts', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='SupporterPrompt',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('version', models.PositiveIntegerField()),
                ('text', models.TextField()),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='supporter_prompts', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='System',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('kind', models.CharField(choices=[('model', 'Model'), ('human', 'Human'), ('dataset', 'Dataset')], max_length=16)),
                ('family', models.CharField(blank=True, max_length=100)),
                ('ttft_ms', models.FloatField(blank=True, help_text='Median time to first token (ms), for Elo vs latency.', null=True)),
                ('external_score', models.FloatField(blank=True, help_text='An external benchmark score (e.g. AA Intelligence).', null=True)),
                ('metadata', models.JSONField(blank=True, default=dict)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='systems', to='completions.study')),
            ],
        ),
        migrations.CreateModel(
            name='Completion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('text', models.TextField()),
                ('text_unknown', models.BooleanField(default=False)),
                ('ttft_ms', models.FloatField(blank=True, null=True)),
                ('latency_ms', models.FloatField(blank=True, null=True)),
                ('provenance', models.JSONField(blank=True, default=dict, help_text='Prompt hash, model parameters, raw reply, source.')),
                ('metadata', models.JSONField(blank=True, default=dict)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('writer', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='completions', to=settings.AUTH_USER_MODEL)),
                ('context', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='completions', to='completions.dialoguecontext')),
                ('system', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='completions', to='completions.system')),
            ],
        ),
        migrations.AddConstraint(
            model_name='study',
            constraint=models.CheckConstraint(condition=models.Q(('quality_check_rate__gte', 0), ('quality_check_rate__lt', 1)), name='study_qc_rate_in_unit_interval'),
        ),
        migrations.AddConstraint(
            model_name='study',
            constraint=models.CheckConstraint(condition=models.Q(('judgments_per_pair__gte', 1)), name='study_quota_positive'),
        ),
        migrations.AddConstraint(
            model_name='study',
            constraint=models.CheckConstraint(condition=models.Q(('human_weight_share__gt', 0), ('human_weight_share__lt', 1)), name='study_human_share_open_unit_interval'),
        ),
        migrations.AddConstraint(
            model_name='study',
            constraint=models.CheckConstraint(condition=models.Q(('human_majority_min__gte', 1)), name='study_majority_min_positive'),
        ),
        migrations.AddIndex(
            model_name='dialoguecontext',
            index=models.Index(fields=['study', 'adversarial'], name='completions_study_i_2afe5e_idx'),
        ),
        migrations.AddConstraint(
            model_name='dialoguecontext',
            constraint=models.UniqueConstraint(fields=('study', 'external_id'), name='context_unique_id'),
        ),
        migrations.AddConstraint(
            model_name='supporterprompt',
            constraint=models.UniqueConstraint(fields=('study', 'version'), name='supporter_prompt_version'),
        ),
        migrations.AddConstraint(
            model_name='system',
            constraint=models.UniqueConstraint(fields=('study', 'name'), name='system_unique_name'),
        ),
        migrations.AddIndex(
            model_name='completion',
            index=models.Index(condition=models.Q(('text_unknown', True)), fields=['id'], name='completion_text_unknown'),
        ),
        migrations.AddConstraint(
            model_name='completion',
            constraint=models.UniqueConstraint(fields=('context', 'system'), name='completion_one_per_system'),
        ),
        migrations.AddConstraint(
            model_name='completion',
            constraint=models.UniqueConstraint(condition=models.Q(('writer__isnull', False)), fields=('context', 'writer'), name='completion_writer_once_per_context'),
        ),
        migrations.AddConstraint(
            model_name='completion',
            constraint=models.UniqueConstraint(fields=('id', 'context'), name='completion_id_context'),
        ),
    ]
