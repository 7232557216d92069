from __future__ import annotations

from django import forms

from completions.strategies import STRATEGY_NAMES


class StrategyLabelForm(forms.Form):
    """The 15 strategies as checkboxes: checked = present, unchecked = absent."""

    item = forms.CharField(widget=forms.HiddenInput)
    present = forms.MultipleChoiceField(
        choices=[(name, name) for name in STRATEGY_NAMES],
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    note = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )


class AdjudicationForm(forms.Form):
    present = forms.MultipleChoiceField(
        choices=[(name, name) for name in STRATEGY_NAMES],
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )


class SampleForm(forms.Form):
    size = forms.IntegerField(min_value=1, max_value=5000)
    labellers_per_item = forms.IntegerField(min_value=2, max_value=10, initial=2)
    seed = forms.IntegerField(initial=0)
