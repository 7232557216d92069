"""The material of a study: its dialogue contexts, the systems and their completions."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


def new_token() -> str:
    """An opaque, unguessable token for anything a rater's browser may see."""
    return secrets.token_urlsafe(16)


def new_completion_code() -> str:
    return secrets.token_hex(4).upper()


class StudyStatus(models.TextChoices):
    # Draft: being set up (writers may write when writing is on); raters are not let in until
    # the study has pairs and is opened.
    DRAFT = "draft"
    OPEN = "open"
    PAUSED = "paused"
    CLOSED = "closed"


class RaterEntry(models.TextChoices):
    OPEN = "open", "Open invitation link"
    PROLIFIC = "prolific", "Prolific only (PROLIFIC_PID required)"


class Study(models.Model):
    """One benchmark run: contexts, systems, pair design, rater and writer settings."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # Draft: writers only (a new study; it opens once it has pairs). Open: raters and writers
    # work. Paused: no new work (see pause_lets_finish). Closed: nothing.
    status = models.CharField(max_length=8, choices=StudyStatus.choices, default=StudyStatus.DRAFT)
    pause_lets_finish = models.BooleanField(
        default=True, help_text="While paused, a rater holding an item may still submit it."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Per-study admins: a study admin who is not a superuser reaches only the studies listing
    # them (a study listing nobody stays open to every study admin, as before this field).
    admins = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="administered_studies",
        help_text="Study admins of this study (superusers reach every study).",
    )

    # Rater settings (paper 4.2, 9.6).
    judgments_per_pair = models.PositiveSmallIntegerField(default=5)
    quality_check_rate = models.FloatField(
        default=0.1, help_text="Share of a rater's queue that is quality-check items (0-1)."
    )
    show_rubric = models.BooleanField(
        default=False, help_text="Show raters the HEART rubric (off in the paper, 4.2)."
    )
    axis_marks = models.BooleanField(
        default=False, help_text="Let raters mark per-axis advantages (H/E/A/R/T)."
    )
    rationale_required = models.BooleanField(default=False)
    items_per_rater = models.PositiveIntegerField(
        default=20, help_text="Real items in one rater's queue (quality checks come on top)."
    )
    # Short, and renewed by the rater page's heartbeat while the rater is active: an abandoned
    # tab frees its item within this time.
    lease_seconds = models.PositiveIntegerField(
        default=180,
        help_text="How long an item stays reserved for a rater who opened it; the open page "
        "renews it while the rater is active.",
    )
    rater_entry = models.CharField(
        max_length=8, choices=RaterEntry.choices, default=RaterEntry.OPEN
    )
    max_active_raters = models.PositiveIntegerField(
        null=True, blank=True, help_text="Cap on raters working at once (Prolific places)."
    )
    max_items_per_context = models.PositiveSmallIntegerField(
        default=1, help_text="How many items of the same context one rater may see."
    )
    rationale_max_chars = models.PositiveIntegerField(default=2000)
    # The personal-data screen before a release finds phone numbers written the way these
    # regions write them (completions.phones); blank: the operator's PII_PHONE_REGIONS.
    phone_regions = models.CharField(
        max_length=200,
        blank=True,
        help_text="Countries whose phone numbers the personal-data screen looks for in writer "
        "texts and rationales before a release, as two-letter codes (e.g. 'GB, US'). Blank: "
        "the server's default. Numbers written with a country code (+44 ...) are found anyway.",
    )
    invite_token = models.CharField(max_length=64, unique=True, default=new_token)
    completion_code = models.CharField(max_length=32, default=new_completion_code)
    prolific_redirect_url = models.URLField(blank=True)
    consent_text = models.TextField(blank=True)
    instructions = models.TextField(blank=True)

    # Writers per context (paper 9.3); everything else about writing, word limits included, is
    # in one place: writing.models.WritingSettings (the Writers page).
    writers_per_context = models.PositiveSmallIntegerField(default=3)

    # Pair design (reproducible from the seed).
    pair_design = models.CharField(
        max_length=16,
        choices=[("all", "All pairs"), ("balanced", "Balanced sample")],
        default="all",
    )
    pairs_per_context = models.PositiveIntegerField(null=True, blank=True)
    pair_seed = models.BigIntegerField(default=0)
    # Off: the least-judged pair comes next. On: pairs are drawn with the weights the latest
    # refit planned (ranking.adaptive), inside the same caps (docs/ranking.md).
    adaptive_assignment = models.BooleanField(
        default=False,
        help_text="Offer raters the pairs whose judgments shrink the leaderboard's uncertainty "
        "most (updated at each refit), instead of the least-judged pair.",
    )
    # What adaptive assignment aims for (ranking.goals): the pairs whose order the admin wants
    # to learn first; the planner predicts the judgments each design needs for it.
    adaptive_goal = models.CharField(
        max_length=8,
        choices=[
            ("best", "The best system"),
            ("top_k", "The top k systems"),
            ("anchor", "Each system against an anchor"),
            ("order", "The whole order"),
        ],
        default="order",
        help_text="What adaptive assignment aims to learn: the best system, the top k (as a "
        "set), each system's side of an anchor system, or the whole order of the board.",
    )
    adaptive_k = models.PositiveSmallIntegerField(
        default=3, help_text="For the top-k goal: how many systems make the top."
    )
    adaptive_anchor = models.CharField(
        max_length=200,
        blank=True,
        help_text="For the anchor goal: the system every other is compared with (e.g. the best "
        "human writer, or the model in production). Blank: the leaderboard's anchor.",
    )

    # LLM judges judge each pair in both orders; the leaderboard counts both games, or only
    # consistent verdicts (a pair whose two orders disagree counts as one tie).
    llm_games = models.CharField(
        max_length=16,
        choices=[
            ("both", "Both orders count as two games"),
            ("consistent", "Consistent verdicts only (a disagreement is a tie)"),
        ],
        default="both",
    )
    # Analysis settings (the leaderboard's verdict rule, ranking.verdicts; docs/ranking.md).
    human_majority_min = models.PositiveSmallIntegerField(
        default=2,
        help_text="Human verdicts a pair needs before its human majority counts (agreement).",
    )
    human_weight_share = models.FloatField(
        default=0.5,
        help_text="Share of the combined (all judges) board's weight given to human verdicts, "
        "the rest to LLM judges: 0.5 weighs the two sources equally, whatever their counts "
        "(the paper preset weighs every verdict alike instead).",
    )
    leaderboard_anchor = models.CharField(
        max_length=200,
        blank=True,
        help_text="A system whose Elo is fixed at 1500, so adding a model never moves the "
        "others. Blank: Elo centred on the mean, as in the paper.",
    )
    family_aliases = models.JSONField(
        default=dict,
        blank=True,
        help_text="Extra model-family aliases of this study, on top of the built-in table "
        "(openai = gpt, anthropic = claude, google = gemini, meta = llama, ...).",
    )
    # Reply-style covariates the leaderboard controls for (ranking.style.FEATURES); empty: no
    # style-controlled board is fitted.
    style_features = models.JSONField(
        default=list,
        blank=True,
        help_text="Reply features the style-controlled leaderboard controls for, shown beside "
        "the plain one (length in words, questions asked, list items, markdown). None: no "
        "style-controlled board.",
    )
    # How the leaderboard weighs each rater (ranking.raters): by the rater model's reliability,
    # without the raters the sequential outlier test flags, or alike (the default).
    rater_weights = models.CharField(
        max_length=16,
        choices=[
            ("none", "Every rater alike"),
            ("reliability", "By each rater's reliability"),
            ("no-outliers", "Without the raters flagged as outliers"),
        ],
        default="none",
        help_text="How the leaderboard weighs human raters: alike, by the reliability the rater "
        "model gives each of them, or leaving out the raters whose verdicts the sequential "
        "outlier test flags. The raters page shows both for every rater.",
    )
    # What the study aims for (ranking.study_targets.judgments_needed): the share of system
    # pairs the human board should separate at 95 %; read when a page shows the study's grade.
    target_separability = models.FloatField(
        default=0.8,
        help_text="Share of system pairs the human board should tell apart at 95 % (0.8 = "
        "80 %). The leaderboard says how many judgments that is projected to need.",
    )
    # Cohorts (completions.cohorts): "crowd" and "clinician" always exist; these are extra.
    cohort_labels = models.CharField(
        max_length=500,
        blank=True,
        help_text="Extra cohorts besides crowd and clinician, comma-separated (e.g. "
        "'peer-supporter, student'). Each cohort gets its own invitation and writer link.",
    )
    cohort_parameter = models.CharField(
        max_length=64,
        blank=True,
        help_text="A URL parameter whose value names the cohort (e.g. COHORT, if your Prolific "
        "study URL adds &COHORT=clinician). Blank: only the cohort links set a cohort.",
    )

    class Meta:
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(
                condition=Q(quality_check_rate__gte=0) & Q(quality_check_rate__lt=1),
                name="study_qc_rate_in_unit_interval",
            ),
            models.CheckConstraint(
                condition=Q(judgments_per_pair__gte=1), name="study_quota_positive"
            ),
            models.CheckConstraint(
                condition=Q(human_weight_share__gt=0) & Q(human_weight_share__lt=1),
                name="study_human_share_open_unit_interval",
            ),
            models.CheckConstraint(
                condition=Q(human_majority_min__gte=1), name="study_majority_min_positive"
            ),
            models.CheckConstraint(
                condition=Q(adaptive_goal__in=["best", "top_k", "anchor", "order"]),
                name="study_adaptive_goal_valid",
            ),
            models.CheckConstraint(
                condition=Q(adaptive_k__gte=1), name="study_adaptive_k_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def is_open(self) -> bool:
        """Open to raters (new items are handed out)."""
        return self.status == StudyStatus.OPEN

    @property
    def accepts_writers(self) -> bool:
        """Writers write while a study is set up (draft) and while it is open."""
        return self.status in (StudyStatus.DRAFT, StudyStatus.OPEN)


class Participant(models.Model):
    """A person taking part in one study, as a rater (`annotation.Rater`) or a writer
    (`writing.Writer`): what both are, with `pseudonym` the only identity that leaves the
    platform. Abstract: each has its own table, and the fields here are its columns."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="%(class)ss")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="%(class)s_profiles",
    )
    pseudonym = models.CharField(max_length=64, unique=True)
    # What the participant's browser holds (a signed cookie or a link): opaque, never exported.
    token = models.CharField(max_length=64, unique=True, default=new_token)
    # Private: the Prolific participant id (or another panel's). Never exported, never shown.
    external_id = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=32, default="invite")
    prolific_study_id = models.CharField(max_length=200, blank=True)
    prolific_session_id = models.CharField(max_length=200, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The cohort of the link the participant came by (completions.cohorts); exported.
    cohort = models.CharField(max_length=40, default="crowd")

    class Meta:
        abstract = True
        constraints = [
            models.UniqueConstraint(
                fields=["study", "external_id"],
                condition=~Q(external_id=""),
                name="%(class)s_unique_external",
            ),
        ]

    def __str__(self) -> str:
        return self.pseudonym


class EscalationProfile(models.TextChoices):
    ALWAYS_10 = "Always-10"
    LINEAR_RAMP = "Linear-Ramp"
    MID_SPIKE = "Mid-Spike"
    MID_RAMP = "Mid-Ramp"


class DialogueContext(models.Model):
    """A multi-turn history ending in a seeker turn, to be completed by every system."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="contexts")
    external_id = models.CharField(max_length=200)
    token = models.CharField(max_length=64, unique=True, default=new_token)
    turns = models.JSONField(help_text='[{"speaker": "seeker"|"supporter", "text": "..."}]')
    emotion_type = models.CharField(max_length=100, blank=True)
    problem_type = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=100, blank=True)
    source_id = models.CharField(max_length=200, blank=True)
    adversarial = models.BooleanField(default=False)
    escalation_profile = models.CharField(
        max_length=16, choices=EscalationProfile.choices, blank=True, default=""
    )
    # An adversarial variant points at the context whose seeker turns it rewrote (paper 9.2).
    adversarial_source = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="adversarial_variants",
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], name="context_unique_id"),
        ]
        indexes = [models.Index(fields=["study", "adversarial"])]

    def __str__(self) -> str:
        return self.external_id


class SystemKind(models.TextChoices):
    MODEL = "model"
    HUMAN = "human"
    DATASET = "dataset"


class System(models.Model):
    """Who produced a completion: a model, a human writer, or the original dataset turn."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=SystemKind.choices)
    family = models.CharField(max_length=100, blank=True)
    ttft_ms = models.FloatField(
        null=True, blank=True, help_text="Median time to first token (ms), for Elo vs latency."
    )
    external_score = models.FloatField(
        null=True, blank=True, help_text="An external benchmark score (e.g. AA Intelligence)."
    )
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="system_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Completion(models.Model):
    """One system's final supporter turn for one context."""

    context = models.ForeignKey(
        DialogueContext, on_delete=models.CASCADE, related_name="completions"
    )
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="completions")
    writer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="completions",
    )
    text = models.TextField()
    # A placeholder made by a judgments import whose file had no text: shown as such to
    # admins, never served to raters; a later completions import fills it in.
    text_unknown = models.BooleanField(default=False)
    ttft_ms = models.FloatField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    provenance = models.JSONField(
        default=dict, blank=True, help_text="Prompt hash, model parameters, raw reply, source."
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["context", "system"], name="completion_one_per_system"),
            models.UniqueConstraint(
                fields=["context", "writer"],
                condition=Q(writer__isnull=False),
                name="completion_writer_once_per_context",
            ),
            # Target of the pair -> (completion, context) composite foreign keys.
            models.UniqueConstraint(fields=["id", "context"], name="completion_id_context"),
        ]
        indexes = [
            # The rater claim skips pairs with a placeholder: with this (nearly always empty)
            # index that check costs nothing instead of a scan of the study's completions.
            models.Index(
                fields=["id"], condition=Q(text_unknown=True), name="completion_text_unknown"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.system} on {self.context}"


DEFAULT_SUPPORTER_PROMPT = (
    "You are a supportive listener in an emotional-support conversation. Reply to the seeker's "
    "last message in 1-3 sentences, in a natural, spoken tone: acknowledge their feelings first, "
    "stay with what they said, and do not give medical or legal advice."
)


class SupporterPrompt(models.Model):
    """The system prompt of model completions (paper 9.4), editable per study and versioned:
    an edit adds a version, and every generated completion names the version it used."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="supporter_prompts")
    version = models.PositiveIntegerField()
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "version"], name="supporter_prompt_version")
        ]

    def __str__(self) -> str:
        return f"{self.study} prompt v{self.version}"
