"""Forms for the rater pages: consent, and one judgment on the 5-point scale of Figure 2."""

from __future__ import annotations

from django import forms

from completions.models import Study

from .models import AXES, AXIS_NAMES
from .services import SCALE

AXIS_CHOICES = [
    ("", "No clear difference"),
    ("A", "A is clearly better"),
    ("B", "B is clearly better"),
]


class ConsentForm(forms.Form):
    agree = forms.BooleanField(
        label="I have read the information above and agree to take part.",
        error_messages={"required": "Please tick the box to give your consent, or close the page."},
    )


class JudgmentForm(forms.Form):
    choice = forms.TypedChoiceField(
        label="Which response is the better reply to the seeker?",
        choices=list(SCALE.items()),
        coerce=int,
        widget=forms.RadioSelect,
        error_messages={"required": "Please choose one point on the scale."},
    )
    rationale = forms.CharField(
        label="Why? (a sentence is enough)",
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    def __init__(self, *args, study: Study, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.study = study
        if study.rationale_required:
            self.fields["rationale"].required = True
            self.fields["rationale"].label = "Why? (required; a sentence is enough)"
            self.fields["rationale"].error_messages["required"] = (
                "Please write a short reason for your choice."
            )
        if study.axis_marks:
            for axis in AXES:
                self.fields[f"axis_{axis}"] = forms.ChoiceField(
                    label=AXIS_NAMES[axis],
                    choices=AXIS_CHOICES,
                    required=False,
                    widget=forms.RadioSelect,
                )

    def axis_fields(self) -> list:
        return [self[f"axis_{axis}"] for axis in AXES if f"axis_{axis}" in self.fields]

    def axis_marks(self) -> dict[str, str]:
        return {
            axis: self.cleaned_data[f"axis_{axis}"]
            for axis in AXES
            if self.cleaned_data.get(f"axis_{axis}")
        }
