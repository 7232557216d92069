"""Validation of the leaderboard filters (page, plots, tables and API share them)."""

from __future__ import annotations

from typing import TypedDict

from django import forms

from .models import JudgeFilter, Preset, SubsetFilter


class Filters(TypedDict):
    """A leaderboard's filter: who judged, which contexts, which analysis choices."""

    judges: str
    subset: str
    preset: str


class LeaderboardFilterForm(forms.Form):
    judges = forms.ChoiceField(choices=JudgeFilter.choices, required=False, label="Judges")
    subset = forms.ChoiceField(choices=SubsetFilter.choices, required=False, label="Contexts")
    preset = forms.ChoiceField(choices=Preset.choices, required=False, label="Choices")
    # Checked against the study's context fields by the view (they differ per study).
    by = forms.CharField(required=False, max_length=100, label="Split by")

    def filters(self, *, default_judges: str = JudgeFilter.ALL) -> Filters:
        """The cleaned filters with defaults (``default_judges``, the study's primary board;
        all contexts; the default preset); call after is_valid()."""
        return {
            "judges": self.cleaned_data.get("judges") or default_judges,
            "subset": self.cleaned_data.get("subset") or SubsetFilter.ALL,
            "preset": self.cleaned_data.get("preset") or Preset.DEFAULT,
        }


class BoardSystemForm(forms.Form):
    """Take a system off the board (a reason is required) or put it back."""

    system = forms.ChoiceField(label="System")
    reason = forms.CharField(
        label="Reason",
        max_length=2000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Kept in the board's record and the release bundle, with the date.",
    )

    def __init__(self, *args, systems: list[str], **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        field = self.fields["system"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(name, name) for name in systems]
