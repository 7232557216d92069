"""The admin's form for one quality check (the conversation as "seeker: ..." lines)."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import QualityCheckItem
from annotation.services import SCALE
from annotation.services.checks import turns_from_text, turns_to_text

ASKED_POINTS = [("", "–")] + [(point, f"{point}: {SCALE[point]}") for point in (1, 2, 4, 5)]


class QualityCheckForm(forms.ModelForm[QualityCheckItem]):
    conversation = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text='One turn a line, "supporter: ..." or "seeker: ...", ending with the seeker '
        "(paste one of the study's conversations, so that the check looks like its items).",
    )
    expected_choice = forms.TypedChoiceField(
        label="Point the instruction asks for",
        choices=ASKED_POINTS,
        coerce=int,
        required=False,
        empty_value=None,
        help_text="Attention checks only: the rater passes with exactly this point.",
    )

    class Meta:
        model = QualityCheckItem
        fields = ["kind", "text_a", "text_b", "expected", "expected_choice", "note"]
        labels = {
            "text_a": "Reply A (shown on the left for attention checks; gold checks are shown "
            "either way round)",
            "text_b": "Reply B",
            "expected": "The better reply (gold checks; an attention check's follows its point)",
            "note": "Note (for admins only; raters never see it)",
        }
        widgets = {
            "text_a": forms.Textarea(attrs={"rows": 4}),
            "text_b": forms.Textarea(attrs={"rows": 4}),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.order_fields(["kind", "conversation"])
        self.fields["expected"].required = False  # an attention check's follows its point
        if self.instance.pk and not self.is_bound:
            self.initial["conversation"] = turns_to_text(self.instance.turns)

    def clean_conversation(self) -> list[dict[str, Any]]:
        try:
            return turns_from_text(self.cleaned_data["conversation"])
        except ValueError as exc:
            raise forms.ValidationError(f"The conversation: {exc}.") from exc

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        choice = data.get("expected_choice")
        if data.get("kind") == QualityCheckItem.Kind.ATTENTION:
            if not choice:
                self.add_error(
                    "expected_choice", "An attention check asks for one point: choose which."
                )
            else:
                data["expected"] = "a" if choice < 3 else "b"
        elif not data.get("expected"):
            self.add_error("expected", "A gold check has a better reply: choose which.")
        if data.get("text_a", "").strip() == data.get("text_b", "").strip() != "":
            self.add_error("text_b", "The two replies are the same: a rater could not choose.")
        return data

    def save(self, commit: bool = True) -> QualityCheckItem:
        self.instance.turns = self.cleaned_data["conversation"]
        return super().save(commit=commit)
