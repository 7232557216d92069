"""A study open for writing: contexts, a model system with completions, writing enabled."""

from __future__ import annotations

from completions.models import Study
from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    StudyFactory,
    SystemFactory,
)
from writing.services import writing_contexts_open, writing_settings

TURNS = [
    {"speaker": "supporter", "text": "Hi, what's on your mind today?"},
    {"speaker": "seeker", "text": "I failed my driving test again and I feel useless."},
]
GOOD_TEXT = (
    "That sounds really discouraging, especially after all the practice you put in. "
    "Failing a test does not make you useless. What part of the test felt hardest?"
)


def build_writing_study(
    *, n_contexts: int = 3, per_context: int = 3, slug: str = "write-study", **settings
) -> Study:
    study = StudyFactory(
        slug=slug, name="Writing study", writers_per_context=per_context, status="draft"
    )
    model = SystemFactory(study=study, name="zorblax-gpt-9", family="famgpt", kind="model")
    for i in range(n_contexts):
        context = DialogueContextFactory(
            study=study, external_id=f"ctx-secret-{i}", turns=TURNS, bare=True
        )
        CompletionFactory(context=context, system=model, text=f"Model reply {i}.")
    ws = writing_settings(study)
    ws.enabled = True
    ws.save()
    writing_contexts_open(study=study)  # while writing is on, as the Writers page requires
    for key, value in settings.items():
        setattr(ws, key, value)
    ws.save()
    return study


def behaviour(**overrides) -> dict:
    data = {
        "measured": "1",
        "active_ms": "60000",
        "keystrokes": "160",
        "inserted_chars": "0",
        "focus_lost": "0",
        "longest_insert": "0",
        "insert_after_away": "0",
    }
    data.update({key: str(value) for key, value in overrides.items()})
    return data
