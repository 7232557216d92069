"""Forms for the rater pages: consent, and one judgment on the 5-point scale of Figure 2."""

from __future__ import annotations

from typing import Any

from django import forms

from completions.models import Study

from .models import AXES, AXIS_NAMES
from .services import SCALE

CHOICE_LABEL = "Which response is the better reply to the seeker?"
RATIONALE_LABEL = "Why? (a sentence is enough)"
RATIONALE_REQUIRED_LABEL = "Why? (required; a sentence is enough)"
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
        label=CHOICE_LABEL,
        choices=list(SCALE.items()),
        coerce=int,
        widget=forms.RadioSelect,
        error_messages={"required": "Please choose one point on the scale."},
    )
    rationale = forms.CharField(
        label=RATIONALE_LABEL,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study
        if study.rationale_required:
            self.fields["rationale"].required = True
            self.fields["rationale"].label = RATIONALE_REQUIRED_LABEL
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

    def clean_rationale(self) -> str:
        # Checked here rather than by a MaxLengthValidator so the message can say how long
        # it may be without repeating the (possibly huge) text back.
        text: str = self.cleaned_data["rationale"]
        limit = self.study.rationale_max_chars
        if len(text) > limit:
            raise forms.ValidationError(
                f"Your reason is too long ({len(text):,} characters; at most {limit:,}). "
                "Only its first part is shown below: please shorten it."
            )
        return text

    def axis_marks(self) -> dict[str, str]:
        return {
            axis: self.cleaned_data[f"axis_{axis}"]
            for axis in AXES
            if self.cleaned_data.get(f"axis_{axis}")
        }


def judgment_form_view(*, study: Study, form: JudgmentForm | None = None) -> dict[str, Any]:
    """What the judging form shows, as plain data for a template that writes its inputs by hand.

    Rendering Django's radio widgets (and building a form just to show an empty one) cost more
    CPU than the rest of the round trip's page, which is served hundreds of times a second.
    `form` is a submitted (bound) form to show again with its errors and values.
    """
    bound = form if form is not None and form.is_bound else None
    errors = bound.errors if bound is not None else {}
    data = bound.data if bound is not None else {}

    def first_error(name: str) -> str:
        return str(errors[name][0]) if name in errors else ""

    axes = [
        {
            "label": AXIS_NAMES[axis],
            "name": f"axis_{axis}",
            "options": [
                {
                    "value": value,
                    "label": label,
                    "id": f"id_axis_{axis}_{i}",
                    "checked": value == (data.get(f"axis_{axis}") or ""),
                }
                for i, (value, label) in enumerate(AXIS_CHOICES)
            ],
        }
        for axis in (AXES if study.axis_marks else ())
    ]
    required = bool(study.rationale_required)
    return {
        "non_field_errors": bound.non_field_errors() if bound is not None else "",
        "choice_label": CHOICE_LABEL,
        "choice_error": first_error("choice"),
        "axes": axes,
        "rationale_label": RATIONALE_REQUIRED_LABEL if required else RATIONALE_LABEL,
        "rationale_required": required,
        "rationale_error": first_error("rationale"),
        # Never more than the limit is sent back: a 1 MiB "reason" is not echoed into the page.
        "rationale_value": data.get("rationale", "")[: study.rationale_max_chars]
        if bound is not None
        else "",
        "first_error": next((n for n in ("choice", "rationale") if n in errors), ""),
    }
