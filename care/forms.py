from __future__ import annotations

from django import forms

from annotation.services import SCALE

from .models import CareSettings, QualificationItem


class QualificationAnswerForm(forms.Form):
    choice = forms.TypedChoiceField(
        choices=list(SCALE.items()),
        coerce=int,
        error_messages={"required": "Please choose one point on the scale."},
    )


class SkipForm(forms.Form):
    reason = forms.CharField(
        label="Why are you skipping it? (optional, never counted against you)",
        required=False,
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 3}),
    )


class CareSettingsForm(forms.ModelForm):
    class Meta:
        model = CareSettings
        fields = [
            "qualification_enabled",
            "pass_share",
            "fail_outcome",
            "screenout_code",
            "stop_outcome",
            "stop_code",
            "notes_from_screening",
            "break_after_minutes",
            "support_text",
            "support_links",
        ]
        widgets = {"pass_share": forms.NumberInput(attrs={"step": "0.05", "min": 0, "max": 1})}

    def clean_pass_share(self) -> float:
        value = self.cleaned_data["pass_share"]
        if not 0 <= value <= 1:
            raise forms.ValidationError("A share between 0 and 1, e.g. 0.75.")
        return value


class QualificationItemForm(forms.ModelForm):
    seeker = forms.CharField(
        label="The seeker's last message", widget=forms.Textarea(attrs={"rows": 2})
    )

    class Meta:
        model = QualificationItem
        fields = ["phase", "seeker", "text_a", "text_b", "expected", "explanation"]
        labels = {
            "text_a": "Reply A (shown on the left)",
            "text_b": "Reply B (shown on the right)",
            "expected": "The better reply",
            "explanation": "Why most raters prefer it (shown after a training answer)",
        }
        widgets = {
            "text_a": forms.Textarea(attrs={"rows": 3}),
            "text_b": forms.Textarea(attrs={"rows": 3}),
            "explanation": forms.Textarea(attrs={"rows": 2}),
        }

    def save(self, commit: bool = True) -> QualificationItem:
        self.instance.turns = [{"speaker": "seeker", "text": self.cleaned_data["seeker"]}]
        return super().save(commit=commit)


class ContentNoteForm(forms.Form):
    context = forms.CharField(label="Context id (as in the material)", max_length=200)
    text = forms.CharField(
        label="What it touches (empty: remove the note)",
        max_length=300,
        required=False,
        widget=forms.TextInput(attrs={"size": 60}),
    )
