from __future__ import annotations

import difflib
from typing import Any

from django import forms

from annotation.services import SCALE
from completions.models import DialogueContext, Study

from .models import CareSettings, QualificationItem
from .selectors import support_link_valid


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


class CareSettingsForm(forms.ModelForm[CareSettings]):
    class Meta:
        model = CareSettings
        fields = [
            "qualification_enabled",
            "pass_share",
            "fail_outcome",
            "screenout_code",
            "stop_outcome",
            "stop_code",
            "allow_withdrawal",
            "notes_from_screening",
            "break_after_minutes",
            "support_text",
            "support_links",
        ]
        widgets = {"pass_share": forms.NumberInput(attrs={"step": "0.05", "min": 0, "max": 1})}

    def clean_support_links(self) -> str:
        """Every line is 'label | https://address': a malformed one is refused, never dropped."""
        value: str = self.cleaned_data["support_links"]
        bad = [
            f"line {number}: “{line.strip()[:80]}”"
            for number, line in enumerate(value.splitlines(), start=1)
            if line.strip() and not support_link_valid(line)
        ]
        if bad:
            raise forms.ValidationError(
                "Each line is a label, a bar and an https:// address, e.g. "
                "“Samaritans | https://www.samaritans.org”. Not understood: " + "; ".join(bad)
            )
        return value

    def clean_pass_share(self) -> float:
        value: float = self.cleaned_data["pass_share"]
        if not 0 <= value <= 1:
            raise forms.ValidationError("A share between 0 and 1, e.g. 0.75.")
        return value


class QualificationItemForm(forms.ModelForm[QualificationItem]):
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

    def __init__(self, *args: Any, study: Study | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study

    def clean_context(self) -> DialogueContext:
        """The study's context with this id; a typo gets a message, not a missing page."""
        external_id = self.cleaned_data["context"].strip()
        found = DialogueContext.objects.filter(study=self.study, external_id=external_id).first()
        if found is None:
            ids = DialogueContext.objects.filter(study=self.study).values_list(
                "external_id", flat=True
            )
            close = difflib.get_close_matches(external_id, list(ids), n=1)
            hint = f" Did you mean “{close[0]}”?" if close else ""
            raise forms.ValidationError(
                f"This study has no context with the id “{external_id[:80]}”.{hint} Copy the "
                "id as the material lists it (the Material page, or the skips table below)."
            )
        return found

    text = forms.CharField(
        label="What it touches (empty: remove the note)",
        max_length=300,
        required=False,
        widget=forms.TextInput(attrs={"size": 60}),
    )
