"""Forms of the LLM studio pages: an endpoint, and what to launch."""

from __future__ import annotations

from django import forms

from .kinds import KINDS
from .models import Endpoint

LAUNCHABLE = {"generate": "Generate model completions (one per context)", "judge": "LLM judges"}


class EndpointForm(forms.ModelForm):
    class Meta:
        model = Endpoint
        fields = [
            "name",
            "label",
            "provider",
            "base_url",
            "model",
            "family",
            "api_key_env",
            "price_in",
            "price_out",
            "max_concurrency",
            "timeout_s",
            "max_retries",
        ]
        help_texts = {
            "base_url": "Empty for the provider's API; e.g. http://localhost:11434/v1 (Ollama) "
            "or http://localhost:8000/v1 (vLLM).",
            "api_key_env": "The NAME of the environment variable holding the key (e.g. "
            "OPENAI_API_KEY), never the key itself. Empty for local servers.",
        }

    def clean_api_key_env(self) -> str:
        value = self.cleaned_data["api_key_env"].strip()
        if value and not value.replace("_", "").isalnum():
            raise forms.ValidationError(
                "Give the name of an environment variable (letters, digits, _), not a key."
            )
        return value


class RunLaunchForm(forms.Form):
    kind = forms.ChoiceField(label="Run", choices=[])
    endpoints = forms.ModelMultipleChoiceField(
        label="Endpoints (judges for a judge run)",
        queryset=Endpoint.objects.order_by("-is_demo", "name"),
        widget=forms.CheckboxSelectMultiple,
    )
    budget_usd = forms.FloatField(
        label="Budget (USD, optional)", required=False, min_value=0.000001
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(k, v) for k, v in LAUNCHABLE.items() if k in KINDS]
