"""A study with completions from two model families and human writers, and label sets."""

from __future__ import annotations

import json

from django.contrib.auth.models import Group, User

from completions import strategies
from completions.access import STUDY_ADMINS
from completions.models import Completion, Study
from labelling import services
from labelling.access import LABELLERS
from labelling.models import LabelSet
from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    StudyFactory,
    SystemFactory,
)

PASSWORD = "correct horse battery"
SYSTEM_NAMES = ("gpt-secret-model", "claude-secret-model", "writer-secret-human")


def build_labelled_study(slug: str = "strat", n_contexts: int = 4) -> Study:
    study = StudyFactory(slug=slug)
    systems = [
        SystemFactory(study=study, name=SYSTEM_NAMES[0], kind="model", family="gpt"),
        SystemFactory(study=study, name=SYSTEM_NAMES[1], kind="model", family="claude"),
        SystemFactory(study=study, name=SYSTEM_NAMES[2], kind="human", family=""),
    ]
    for i in range(n_contexts):
        context = DialogueContextFactory(study=study, external_id=f"ctx-{i}")
        for j, system in enumerate(systems):
            CompletionFactory(
                context=context,
                system=system,
                text=f"It sounds like you're overwhelmed ({i}.{j}). You've shown resilience.",
                metadata={"strategies": ["Questions"]},
            )
    return study


def reply_for(text: str, present: list[str]) -> str:
    labels = {
        name: {
            "status": "present" if name in present else "absent",
            "p": 0.9 if name in present else 0.1,
            "evidence": None,
        }
        for name in strategies.STRATEGY_NAMES
    }
    if "Reflective Statements" in present:
        labels["Reflective Statements"]["evidence"] = "It sounds like you're overwhelmed"
    return json.dumps({"reasoning": "", "labels": labels})


def label_all(study: Study, present_for, *, name: str = "gpt-4o labels") -> LabelSet:
    """A finished LLM label set; ``present_for(completion)`` gives the strategies present."""
    label_set = services.label_set_create(study=study, name=name, labeller="demo-judge")
    for completion in Completion.objects.filter(system__study=study).order_by("id"):
        services.labels_store(
            label_set=label_set,
            completion=completion,
            raw_reply=reply_for(completion.text, present_for(completion)),
        )
    services.label_set_finish(label_set=label_set)
    return label_set


def user(username: str, *, labeller: bool = False, admin: bool = False) -> User:
    account = User.objects.create_user(username, password=PASSWORD, is_staff=admin)
    if labeller:
        account.groups.add(Group.objects.get_or_create(name=LABELLERS)[0])
    if admin:
        account.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    return account
