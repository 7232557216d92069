"""The Prolific page's forms: the pay settings, the token, and which step to run."""

from __future__ import annotations

from django import forms

from llm import keys

from .models import ProlificSettings


class ProlificSettingsForm(forms.ModelForm[ProlificSettings]):
    class Meta:
        model = ProlificSettings
        fields = [
            "currency",
            "hourly_rate",
            "estimated_minutes",
            "places",
            "completed_action",
            "participant_group",
            "bonus_per_rater",
            "bonus_per_writing",
        ]


class ProlificTokenForm(forms.Form):
    token = forms.CharField(
        label="Prolific API token",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False),
        help_text="Stored encrypted and never shown again. Leave empty and save to remove it.",
    )

    def clean_token(self) -> str:
        token: str = self.cleaned_data["token"]
        problem = keys.key_problem(token) if token else None
        if problem:
            raise forms.ValidationError(problem.replace("an API key", "a Prolific token"))
        return token


class ProlificStepForm(forms.Form):
    step = forms.ChoiceField(choices=[(s, s) for s in ("publish", "sync", "pay")])
    dry_run = forms.BooleanField(required=False)
