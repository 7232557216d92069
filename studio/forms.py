"""Forms of the studio: the study's settings (grouped as in the paper), uploads, pair design."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from completions import cohorts
from completions.families import AliasError, format_aliases, parse_aliases
from completions.models import Study, System
from completions.phones import parse_regions
from studio.material_formats import HEAD_BYTES, KIND_WORDS, Detection, detect_kind
from studio.models import ImportKind

from .services import MAX_UPLOAD_BYTES

# The paper's grouping of a study's settings (4.2, 9.3, 9.6); the template renders one
# fieldset per group.
GROUPS = {
    "Study": ["name", "slug", "description", "phone_regions"],
    "Raters": [
        "rater_entry",
        "judgments_per_pair",
        "items_per_rater",
        "max_active_raters",
        "max_items_per_context",
        "lease_seconds",
        "show_rubric",
        "axis_marks",
        "rationale_required",
        "rationale_max_chars",
        "pause_lets_finish",
        "completion_code",
        "prolific_redirect_url",
        "consent_text",
        "instructions",
    ],
    "Writers": ["writers_per_context"],
    # Who the raters and writers are (completions.cohorts): one entry link per cohort.
    "Cohorts": ["cohort_labels", "cohort_parameter"],
    "Quality control": ["quality_check_rate"],
    "Pair design": [
        "pair_design",
        "pairs_per_context",
        "pair_seed",
        "adaptive_assignment",
        "adaptive_goal",
        "adaptive_k",
        "adaptive_anchor",
    ],
    # The leaderboard's verdict rule and scale (docs/ranking.md).
    "Analysis": [
        "llm_games",
        "human_majority_min",
        "human_weight_share",
        "leaderboard_anchor",
        "family_aliases",
        "style_features",
        "rater_weights",
        "target_separability",
    ],
}


def style_feature_choices() -> list[tuple[str, str]]:
    """The reply features a leaderboard can control for. Read from the maths (numpy, pandas)
    only when the settings form is shown, never when the web process starts."""
    from ranking.style import FEATURE_CHOICES

    return FEATURE_CHOICES


class StudyForm(forms.ModelForm[Study]):
    style_features = forms.MultipleChoiceField(
        label="Style control",
        choices=lambda: style_feature_choices(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Reply features the leaderboard controls for, as Chatbot Arena's style "
        "control: a second board shows each system's Elo as if its replies had the same style "
        "as its opponents', beside the plain one, with each feature's effect.",
    )
    family_aliases = forms.CharField(
        label="Family aliases",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One 'alias = family' a line, e.g. 'azure-openai = gpt', on top of the "
        "built-in table (openai = gpt, anthropic = claude, google = gemini, meta = llama, ...). "
        "Used to keep LLM judges off their own family and to compare judge families.",
    )

    class Meta:
        model = Study
        fields = [name for names in GROUPS.values() for name in names]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "consent_text": forms.Textarea(attrs={"rows": 4}),
            "instructions": forms.Textarea(attrs={"rows": 4}),
        }
        help_texts = {
            "slug": "Short name used in the studio's addresses (letters, digits, dashes).",
            "prolific_redirect_url": "Prolific's completion URL; raters are sent there at the "
            "end with the completion code.",
            "pairs_per_context": "Balanced design only: pairs per context.",
            "writers_per_context": "Distinct writers who write a reply to each context. Word "
            "limits, instructions and the writer link are on the study's Writers page.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The analysis settings have defaults: a form posted without them keeps those.
        for name in (
            "llm_games",
            "human_majority_min",
            "human_weight_share",
            "rater_weights",
            "target_separability",
            "adaptive_goal",
            "adaptive_k",
        ):
            self.fields[name].required = False
        if self.instance.pk:
            self.initial["family_aliases"] = format_aliases(self.instance.family_aliases or {})

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in GROUPS.items()]

    def clean_family_aliases(self) -> dict[str, str]:
        try:
            return parse_aliases(self.cleaned_data.get("family_aliases") or "")
        except AliasError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean_style_features(self) -> list[str]:
        chosen = self.cleaned_data.get("style_features") or []
        return [name for name, _label in style_feature_choices() if name in chosen]

    def clean_cohort_labels(self) -> str:
        try:
            return ", ".join(cohorts.parse_labels(self.cleaned_data.get("cohort_labels") or ""))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean_phone_regions(self) -> str:
        try:
            return ", ".join(parse_regions(self.cleaned_data.get("phone_regions") or ""))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean_cohort_parameter(self) -> str:
        name = (self.cleaned_data.get("cohort_parameter") or "").strip()
        if name and (not name.replace("_", "").isalnum() or name == cohorts.PARAMETER):
            raise forms.ValidationError(
                "Letters, digits and underscores only (e.g. COHORT), and not 'cohort', which "
                "the signed cohort links use."
            )
        return name

    def clean_human_weight_share(self) -> float:
        share: float | None = self.cleaned_data.get("human_weight_share")
        if share is None:
            default: float = Study._meta.get_field("human_weight_share").default
            return default
        if not 0 < share < 1:
            raise forms.ValidationError(
                "A share strictly between 0 and 1: 0.5 weighs humans and LLM judges equally."
            )
        return share

    def clean_rater_weights(self) -> str:
        return self.cleaned_data.get("rater_weights") or "none"

    def clean_target_separability(self) -> float:
        target: float | None = self.cleaned_data.get("target_separability")
        if target is None:
            default: float = Study._meta.get_field("target_separability").default
            return default
        if not 0 < target <= 1:
            raise forms.ValidationError("A share above 0 and at most 1: 0.8 means 80 % of pairs.")
        return target

    def clean_human_majority_min(self) -> int:
        value: int | None = self.cleaned_data.get("human_majority_min")
        if value is None:
            default: int = Study._meta.get_field("human_majority_min").default
            return default
        return value

    def clean_llm_games(self) -> str:
        return self.cleaned_data.get("llm_games") or "both"

    def clean_leaderboard_anchor(self) -> str:
        return self._system_name("leaderboard_anchor")

    def clean_adaptive_anchor(self) -> str:
        return self._system_name("adaptive_anchor")

    def clean_adaptive_goal(self) -> str:
        return self.cleaned_data.get("adaptive_goal") or "order"

    def clean_adaptive_k(self) -> int:
        k: int | None = self.cleaned_data.get("adaptive_k")
        if k is None:
            default: int = Study._meta.get_field("adaptive_k").default
            return default
        return k

    def _system_name(self, field: str) -> str:
        """A system of this study named in ``field``, or blank."""
        anchor = (self.cleaned_data.get(field) or "").strip()
        if not anchor:
            return ""
        names = (
            list(
                System.objects.filter(study=self.instance)
                .order_by("name")
                .values_list("name", flat=True)
            )
            if self.instance.pk
            else []
        )
        if anchor not in names:
            listed = ", ".join(names[:20]) or "none yet"
            raise forms.ValidationError(f"No system is called {anchor!r}. Systems: {listed}.")
        return anchor

    def clean_quality_check_rate(self) -> float:
        rate: float = self.cleaned_data["quality_check_rate"]
        if not 0 <= rate < 1:
            raise forms.ValidationError("A share from 0 up to (not including) 1, e.g. 0.1.")
        return rate


class StudyEditForm(StudyForm):
    """Editing keeps the slug: links already handed out use it."""

    class Meta(StudyForm.Meta):
        fields = [n for n in StudyForm.Meta.fields if n != "slug"]

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [
            (title, [self[name] for name in names if name in self.fields])
            for title, names in GROUPS.items()
        ]


DETECT = "detect"


class UploadForm(forms.Form):
    """A material file and what it holds: recognised from its content unless the admin says.

    `cleaned_data["kind"]` is the kind to import as; `detection` says what the file looks like.
    A file that looks like another kind than the one chosen is refused before anything is
    stored, with both named (importing it would only fail later, less clearly).
    """

    kind = forms.ChoiceField(
        label="What the file holds",
        choices=[(DETECT, "Recognise it from the file (recommended)"), *ImportKind.choices],
        initial=DETECT,
    )
    file = forms.FileField(
        label="File to upload",
        help_text="ESConv JSON, or JSON Lines of contexts, completions or judgments: see the "
        "examples and JSON Schemas below.",
    )

    detection: Detection | None = None

    def clean_file(self) -> UploadedFile[bytes]:
        upload: UploadedFile[bytes] = self.cleaned_data["file"]
        # FileField already refused an empty file: a received one always has a size (the type
        # allows None for a file being built).
        size = upload.size or 0
        if size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                f"The file is {size / 1e6:.0f} MB; the limit is "
                f"{MAX_UPLOAD_BYTES / 1e6:.0f} MB. Use the import commands for larger files."
            )
        upload.seek(0)
        self.detection = detect_kind(upload.read(HEAD_BYTES))
        upload.seek(0)
        return upload

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        chosen, found = data.get("kind"), self.detection
        if chosen is None or found is None:
            return data
        if chosen == DETECT and found.kind is None:
            self.add_error(
                "file",
                f"{data['file'].name}: we cannot tell what this file holds: {found.description}. "
                "Choose what it holds above, or compare it with the examples below.",
            )
        elif chosen == DETECT:
            data["kind"] = found.kind
        elif found.kind is not None and found.kind != chosen:
            self.add_error(
                "kind",
                f"You chose {KIND_WORDS[chosen]}, but {data['file'].name} looks like "
                f"{found.words} ({found.description}). Choose that (or “Recognise it from the "
                "file”) and upload it again.",
            )
        return data


class PairDesignForm(forms.Form):
    design = forms.ChoiceField(
        choices=[("all", "All pairs per context"), ("balanced", "Balanced sample")]
    )
    per_context = forms.IntegerField(
        label="Pairs per context (balanced only)", min_value=1, required=False
    )
    seed = forms.IntegerField(label="Seed", required=False)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("design") == "balanced" and not data.get("per_context"):
            self.add_error("per_context", "A balanced design needs pairs per context.")
        return data


class ExclusionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("exclude", "Exclude"), ("include", "Include"), ("auto", "Automatic")]
    )
    reason = forms.CharField(max_length=500, required=False)


class PlannerForm(forms.Form):
    """The pairs preview's planner: the judgments a design needs for a half-width."""

    half_width = forms.FloatField(
        label="Wanted mean half-width (Elo)",
        min_value=1.0,
        max_value=1000.0,
        required=False,
        help_text="The 95% interval's half-width you want on the systems' Elo, e.g. 20.",
    )
