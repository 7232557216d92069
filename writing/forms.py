from __future__ import annotations

from typing import Any

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


# The writer settings in the groups the Writers page shows; every word limit is here, once.
SETTINGS_GROUPS = {
    "Entry": ["enabled", "entry", "prolific_redirect_url"],
    "Reply length: refused outside these": ["min_words", "max_words", "max_chars"],
    "Reply length: suggested (a gentle note, never a refusal)": [
        "band_min_words",
        "band_max_words",
        "band_min_sentences",
        "band_max_sentences",
    ],
    "Work": ["contexts_per_writer", "lease_seconds", "block_paste"],
    "What writers read": ["instructions", "consent_text"],
}


class WritingSettingsForm(forms.ModelForm[WritingSettings]):
    class Meta:
        model = WritingSettings
        fields = [name for names in SETTINGS_GROUPS.values() for name in names]
        widgets = {
            "instructions": forms.Textarea(attrs={"rows": 8}),
            "consent_text": forms.Textarea(attrs={"rows": 4}),
        }
        labels = {
            "enabled": "Writing is on",
            "entry": "How writers enter",
            "prolific_redirect_url": "Prolific completion URL",
            "min_words": "Fewest words",
            "max_words": "Most words",
            "max_chars": "Most characters",
            "band_min_words": "Suggested fewest words",
            "band_max_words": "Suggested most words",
            "band_min_sentences": "Suggested fewest sentences",
            "band_max_sentences": "Suggested most sentences",
            "contexts_per_writer": "Contexts per writer",
            "lease_seconds": "Seconds a context stays reserved",
            "block_paste": "Switch pasting off in the reply box",
            "instructions": "Instructions",
            "consent_text": "Consent text",
        }
        help_texts = {
            "enabled": "Writer links accept writers, and contexts can be opened for writing, "
            "only while this is on.",
            "prolific_redirect_url": "Where writers from Prolific are sent when they finish, "
            "with the completion code.",
            "max_words": "A reply with more words is refused (the writer keeps the draft).",
            "band_max_words": "Above this, the page shows a gentle note (the paper: about 40).",
            "instructions": "Markdown: a blank line between paragraphs, “- ” starts a bullet, "
            "**bold**, *italic*. Blank: the default instructions (shown below).",
            "consent_text": "Blank: the default consent text.",
        }

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in SETTINGS_GROUPS.items()]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        for low, high, on, message in ORDER_RULES:
            a, b = data.get(low), data.get(high)
            if a is not None and b is not None and a > b and on not in self.errors:
                self.add_error(on, message)
        return data


# (smaller, larger, the field that gets the message, the message): the limits must nest.
ORDER_RULES = [
    ("min_words", "max_words", "max_words", "The most words must be at least the fewest."),
    (
        "band_min_words", "band_max_words", "band_max_words",
        "The suggested most words must be at least the suggested fewest.",
    ),
    (
        "band_min_sentences", "band_max_sentences", "band_max_sentences",
        "The suggested most sentences must be at least the suggested fewest.",
    ),
    (
        "band_max_words", "max_words", "band_max_words",
        "The suggested most words cannot be above the most words a reply may have.",
    ),
    (
        "min_words", "band_min_words", "band_min_words",
        "The suggested fewest words cannot be below the fewest words a reply must have.",
    ),
]  # fmt: skip


class RejectForm(forms.Form):
    reason = forms.CharField(max_length=500, strip=True, label="Reason")
