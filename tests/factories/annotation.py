"""Test data for the rater experience: a study with recognisable system, family and writer names
(so the blinding tests can look for them), contexts, completions and all pairs per context."""

from __future__ import annotations

from itertools import combinations

from django.contrib.auth import get_user_model

from completions.models import Study
from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    PairFactory,
    StudyFactory,
    SystemFactory,
)

# Distinctive strings: none of them may ever reach a rater's browser.
SYSTEMS = [
    ("zorblax-gpt-9", "famgptzeta", "model"),
    ("quillon-claude-7", "famclaudeomega", "model"),
    ("human-writers-yarrow", "famhumankappa", "human"),
]
WRITER_USERNAME = "writer_wilhelmina_q"
TURNS = [
    {"speaker": "supporter", "text": "Hi there, how are you doing today?"},
    {
        "speaker": "seeker",
        "text": "Honestly, I'm a bit down. Work's been tough; I keep getting "
        "benched and I'm at a loss for what to do.",
    },
]


def build_study(*, n_contexts: int = 3, quota: int = 5, systems=SYSTEMS, **study_fields) -> Study:
    """A study with `n_contexts` contexts, one completion per system each, all pairs."""
    study = StudyFactory(
        slug=study_fields.pop("slug", "blind-study"),
        name="Rater test study",
        judgments_per_pair=quota,
        status=study_fields.pop("status", "open"),  # it has its pairs: opened, as an admin would
        **study_fields,
    )
    writer, _ = get_user_model().objects.get_or_create(username=WRITER_USERNAME)
    system_rows = [
        SystemFactory(study=study, name=name, family=family, kind=kind)
        for name, family, kind in systems
    ]
    for i in range(n_contexts):
        context = DialogueContextFactory(
            study=study, external_id=f"esconv-secret-ctx-{i}", turns=TURNS, bare=True
        )
        completions = [
            CompletionFactory(
                context=context,
                system=system,
                writer=writer if system.kind == "human" and i == 0 else None,
                text=f"Reply {i}-{j}: that sounds really hard. What feels heaviest right now?",
            )
            for j, system in enumerate(system_rows)
        ]
        for a, b in combinations(sorted(completions, key=lambda c: c.pk), 2):
            PairFactory(study=study, context=context, completion_a=a, completion_b=b, quota=quota)
    return study


def forbidden_strings(study: Study) -> list[str]:
    """Everything that would unblind a rater or leak an internal identifier."""
    names = []
    for system in study.systems.all():
        names += [system.name, system.family]
    names.append(WRITER_USERNAME)
    names += list(study.contexts.values_list("external_id", flat=True))
    names += list(study.contexts.values_list("token", flat=True))
    names += list(study.pairs.values_list("token", flat=True))
    return [n for n in names if n]
