"""factory_boy factories shared by the test suite."""

from __future__ import annotations

import factory
from django.utils import timezone

from annotation.models import Judgment, Pair, QualityCheckItem, Rater
from completions.models import Completion, DialogueContext, Study, System

TURNS = [
    {"speaker": "supporter", "text": "Hi there, how are you doing today?"},
    {
        "speaker": "seeker",
        "text": "Honestly, I'm really down. Work has been tough and I keep "
        "getting benched. I don't know what to do.",
    },
]


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    slug = factory.Sequence(lambda n: f"study-{n}")
    name = factory.LazyAttribute(lambda o: f"Study {o.slug}")
    status = "open"  # test studies are judged at once; new studies start as drafts (tested)


class DialogueContextFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DialogueContext

    study = factory.SubFactory(StudyFactory)
    external_id = factory.Sequence(lambda n: f"ctx-{n}")
    turns = factory.LazyFunction(lambda: [dict(t) for t in TURNS])
    emotion_type = "sadness"
    problem_type = "job crisis"
    source = "test"


class SystemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = System

    study = factory.SubFactory(StudyFactory)
    name = factory.Sequence(lambda n: f"model-{n}")
    kind = "model"
    family = "gpt"


class CompletionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Completion

    context = factory.SubFactory(DialogueContextFactory)
    system = factory.SubFactory(SystemFactory, study=factory.SelfAttribute("..context.study"))
    text = factory.Sequence(lambda n: f"That sounds really hard ({n}). What feels heaviest?")


class PairFactory(factory.django.DjangoModelFactory):
    """A pair on one context; the two completions are made in canonical (id) order."""

    class Meta:
        model = Pair

    study = factory.SelfAttribute("context.study")
    context = factory.SubFactory(DialogueContextFactory)
    completion_a = factory.SubFactory(CompletionFactory, context=factory.SelfAttribute("..context"))
    completion_b = factory.SubFactory(CompletionFactory, context=factory.SelfAttribute("..context"))
    quota = factory.SelfAttribute("study.judgments_per_pair")


class RaterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Rater

    study = factory.SubFactory(StudyFactory)
    pseudonym = factory.Sequence(lambda n: f"r-test{n:05d}")
    consented_at = factory.LazyFunction(timezone.now)


class QualityCheckItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = QualityCheckItem

    study = factory.SubFactory(StudyFactory)
    kind = "gold"
    turns = factory.LazyFunction(lambda: [dict(t) for t in TURNS])
    text_a = (
        "I hear you, and it sounds like you're feeling really stuck and disconnected "
        "right now. That heaviness can be so overwhelming."
    )
    text_b = "Whats been going on. You are feeling bad. This is not good situation."
    expected = "a"


class JudgmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Judgment

    pair = factory.SubFactory(PairFactory)
    study = factory.SelfAttribute("pair.study")
    judge_kind = "human"
    judge = factory.Sequence(lambda n: f"judge-{n}")
    winner = "a"
    strength = 1
    strength_max = 2
    shown_left = "a"
    submitted_at = factory.LazyFunction(timezone.now)
