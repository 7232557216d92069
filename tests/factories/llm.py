"""A small study with model systems of several families, completions and all pairs."""

from __future__ import annotations

from itertools import combinations

from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    EndpointFactory,
    PairFactory,
    StudyFactory,
    SystemFactory,
)

SYSTEMS = [("gpt-x", "gpt"), ("claude-x", "claude"), ("llama-x", "llama"), ("humans", "")]
TEXTS = {
    "gpt-x": "I'm so sorry you're going through this; it sounds exhausting. What feels heaviest?",
    "claude-x": "That sounds really hard, and it makes sense that you feel stuck right now.",
    "llama-x": "Lots of people go through this, just stay positive.",
    "humans": "I hear you. Losing a job out of nowhere is a shock; how are you holding up?",
}


def endpoint(server, name: str, *, family: str = "gpt", provider: str = "openai", **fields):
    model = fields.pop("model", name)
    base = server.url + ("/v1" if provider == "openai" else "")
    return EndpointFactory(
        name=name,
        provider=provider,
        model=model,
        family=family,
        base_url=base,
        max_concurrency=fields.pop("max_concurrency", 4),
        timeout_s=fields.pop("timeout_s", 5),
        max_retries=fields.pop("max_retries", 0),
        **fields,
    )


def study_with_pairs(n_contexts: int = 2, systems=SYSTEMS):
    study = StudyFactory()
    made = {
        name: SystemFactory(
            study=study, name=name, family=family, kind="model" if family else "human"
        )
        for name, family in systems
    }
    for i in range(n_contexts):
        context = DialogueContextFactory(study=study)
        completions = [
            CompletionFactory(
                context=context, system=made[name], text=f"{TEXTS.get(name, 'Okay.')} ({i})"
            )
            for name, _ in systems
        ]
        for a, b in combinations(sorted(completions, key=lambda c: c.pk), 2):
            PairFactory(study=study, context=context, completion_a=a, completion_b=b)
    return study
