"""Forms of the LLM studio pages: an endpoint, and what to launch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django import forms

from . import services
from .kinds import KINDS
from .models import Endpoint

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from completions.models import Study

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


class EndpointForm(forms.ModelForm[Endpoint]):
    """Add or update an endpoint from a study's LLM page.

    A study admin's endpoint belongs to the study and carries its own key, typed once, stored
    encrypted and never shown again. A superuser may also share an endpoint with every study
    and give it a key variable from the operator's list instead. The host and key rules
    themselves are the service's (`services.endpoint_check`), whoever saves."""

    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Stored encrypted and never shown again. Leave empty to keep the stored key "
        "(or for a local server that needs none).",
    )
    remove_key = forms.BooleanField(label="Remove the stored key", required=False)
    shared = forms.BooleanField(
        label="Share with every study (superusers)",
        required=False,
        help_text="A shared endpoint is listed on every study's page; only superusers and the "
        "command line change it.",
    )

    class Meta:
        model = Endpoint
        fields = [
            "name",
            *(name for name in services.ENDPOINT_FIELDS if name != "is_demo"),  # demo only
        ]
        labels = {"api_key_env": "Key variable (shared endpoints)"}
        help_texts = {
            "base_url": "Empty for the provider's API. Other hosts (e.g. a vLLM or Ollama "
            "server) only where the operator allows them.",
            "api_key_env": "Instead of a key: the NAME of an environment variable of the "
            "workers that holds it, from the operator's list (LLM_KEY_ENV_ALLOWLIST).",
        }

    def __init__(self, *args: Any, user: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user, self.study = user, study
        if not user.is_superuser:
            del self.fields["api_key_env"], self.fields["shared"]
        self.order_fields([*self.Meta.fields[:6], "api_key", "remove_key"])

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        endpoint = self.instance
        if endpoint.pk and not (
            endpoint.study_id == self.study.pk or (endpoint.is_shared and self.user.is_superuser)
        ):
            raise forms.ValidationError(f"The name {name} is taken: choose another one.")
        return name

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if not self.user.is_superuser and self.data.get("api_key_env"):
            self.add_error(
                None,
                "Key variables are for shared endpoints set up by the operator: enter this "
                "endpoint's own API key instead. No endpoint was saved.",
            )
        return data

    def validate_unique(self) -> None:
        """The name's owner is checked in clean_name; a same-named endpoint is updated."""

    def owner(self) -> Study | None:
        """The study that owns the saved endpoint, or None for a shared one."""
        return None if self.cleaned_data.get("shared") else self.study

    def upsert_fields(self) -> dict[str, Any]:
        data = self.cleaned_data
        fields = {f: data[f] for f in self.Meta.fields if f in data and f != "name"}
        if self.user.is_superuser and not data.get("shared"):
            fields["api_key_env"] = ""  # a study's own endpoint never names a variable
        key = "" if data.get("remove_key") else (data.get("api_key") or None)
        return {"name": data["name"], "study": self.owner(), "api_key": key, **fields}


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
        queryset=Endpoint.objects.none(),
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
        label="Source contexts (adversarial runs)",
        min_value=1,
        initial=services.ADVERSARIAL_CONTEXTS,
        required=False,
    )

    def __init__(self, *args: Any, endpoints: QuerySet[Endpoint], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        kind = cast(forms.ChoiceField, self.fields["kind"])  # the fields declared above
        kind.choices = [(k, v) for k, v in LAUNCHABLE.items() if k in KINDS]
        chosen = cast(forms.ModelMultipleChoiceField[Endpoint], self.fields["endpoints"])
        chosen.queryset = endpoints  # the study's own and the shared ones

    def fields_by_kind(self) -> list[tuple[forms.BoundField, str]]:
        """Each field with the run kinds it is for ("" when it is for every kind)."""
        return [(self[name], " ".join(FIELD_KINDS.get(name, ()))) for name in self.fields]

    def endpoint_hints(self) -> list[tuple[str, str]]:
        return [(kind, hint) for kind, hint in ENDPOINT_HINTS.items() if kind in KINDS]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        kind = data.get("kind")
        if kind == "adversarial" and not data.get("profile"):
            self.add_error("profile", "Choose an escalation profile for an adversarial run.")
        if data.get("batch") and kind == "adversarial":
            self.add_error("batch", "Batch mode is for generate, judge and label runs.")
        return data

    def params(self) -> dict[str, Any]:
        """The run's parameters beyond kind and endpoints (call after is_valid())."""
        data = self.cleaned_data
        return services.run_params(
            data["kind"],
            batch=bool(data.get("batch")),
            profile=data.get("profile") or "",
            contexts=data.get("contexts"),
        )


class SupporterPromptForm(forms.Form):
    text = forms.CharField(
        label="System prompt of model completions",
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Saving a changed text adds a version; completions keep the version they used.",
    )
