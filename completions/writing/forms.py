from __future__ import annotations

from django import forms

from .models import WritingSettings

BEHAVIOUR_FIELDS = (
    "measured",
    "active_ms",
    "keystrokes",
    "inserted_chars",
    "focus_lost",
    "longest_insert",
    "insert_after_away",
)


class ConsentForm(forms.Form):
    agree = forms.BooleanField(
        label="I have read the above and agree to take part.",
        error_messages={"required": "Please tick the box to take part."},
    )


class WritingSettingsForm(forms.ModelForm):
    class Meta:
        model = WritingSettings
        fields = [
            "enabled",
            "entry",
            "block_paste",
            "band_min_words",
            "band_max_words",
            "band_min_sentences",
            "band_max_sentences",
            "min_words",
            "max_words",
            "max_chars",
            "lease_seconds",
            "contexts_per_writer",
            "prolific_redirect_url",
            "instructions",
            "consent_text",
        ]
        widgets = {
            "instructions": forms.Textarea(attrs={"rows": 6}),
            "consent_text": forms.Textarea(attrs={"rows": 4}),
        }

    def clean(self):
        data = super().clean()
        low, high = data.get("min_words"), data.get("max_words")
        if low is not None and high is not None and low > high:
            self.add_error("max_words", "The maximum must be at least the minimum.")
        return data


class RejectForm(forms.Form):
    reason = forms.CharField(max_length=500, strip=True, label="Reason")
