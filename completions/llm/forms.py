"""Forms of the LLM studio pages: an endpoint, and what to launch."""

from __future__ import annotations

from django import forms

from .kinds import KINDS
from .models import Endpoint

LAUNCHABLE = {
    "generate": "Generate model completions (one per context)",
    "judge": "LLM judges",
    "label": "Strategy labels (one classifier endpoint)",
    "adversarial": "Adversarial rewrites of seeker turns (one endpoint)",
}
PROFILE_CHOICES = [
    ("Always-10", "Always-10"),
    ("Linear-Ramp", "Linear-Ramp"),
    ("Mid-Spike", "Mid-Spike"),
    ("Mid-Ramp", "Mid-Ramp"),
]


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


# The run kinds each launch field belongs to; the page shows a field only for its kinds (every
# field without JavaScript, each label saying which runs it is for).
FIELD_KINDS = {
    "batch": ("generate", "judge", "label"),
    "profile": ("adversarial",),
    "contexts": ("adversarial",),
}
# What the endpoints are for, by run kind (shown beside the endpoint list).
ENDPOINT_HINTS = {
    "generate": "One model per endpoint: each writes a reply to every context, as a system "
    "named after the endpoint.",
    "judge": "The judges: each compares every pair in both orders (pairs holding a reply of "
    "the judge's own family are skipped).",
    "label": "One classifier endpoint: it labels every reply with the strategies it uses.",
    "adversarial": "One endpoint: it rewrites seeker turns to follow the escalation profile.",
}


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
    batch = forms.BooleanField(
        label="Use the provider's batch API (generate, judge, label: half price, up to 24 h)",
        required=False,
    )
    profile = forms.ChoiceField(
        label="Escalation profile (adversarial runs)", choices=PROFILE_CHOICES, required=False
    )
    contexts = forms.IntegerField(
        label="Source contexts (adversarial runs)", min_value=1, initial=20, required=False
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(k, v) for k, v in LAUNCHABLE.items() if k in KINDS]

    def fields_by_kind(self) -> list[tuple[forms.BoundField, str]]:
        """Each field with the run kinds it is for ("" when it is for every kind)."""
        return [(self[name], " ".join(FIELD_KINDS.get(name, ()))) for name in self.fields]

    def endpoint_hints(self) -> list[tuple[str, str]]:
        return [(kind, hint) for kind, hint in ENDPOINT_HINTS.items() if kind in KINDS]

    def clean(self) -> dict:
        data = super().clean()
        kind = data.get("kind")
        if kind == "adversarial" and not data.get("profile"):
            self.add_error("profile", "Choose an escalation profile for an adversarial run.")
        if data.get("batch") and kind == "adversarial":
            self.add_error("batch", "Batch mode is for generate, judge and label runs.")
        return data

    def params(self) -> dict:
        """The run's parameters beyond kind and endpoints (call after is_valid())."""
        data = self.cleaned_data
        params: dict = {"batch_requested": True} if data.get("batch") else {}
        if data["kind"] == "adversarial":
            params.update(profile=data["profile"], contexts=data.get("contexts") or 20, seed=0)
        return params


class SupporterPromptForm(forms.Form):
    text = forms.CharField(
        label="System prompt of model completions",
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Saving a changed text adds a version; completions keep the version they used.",
    )
