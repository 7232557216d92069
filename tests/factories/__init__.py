"""factory_boy factories shared by the test suite."""

from __future__ import annotations

from datetime import timedelta

import factory
from django.utils import timezone

from annotation.models import Assignment, Judgment, Pair, QualityCheckItem, Rater
from care.models import CareSettings, ContentNote, QualificationItem
from completions.models import Completion, DialogueContext, Study, System
from llm.models import Endpoint, Run, Unit
from ranking.models import DesignStatus, RefitJob
from studio.models import ImportJob, ReleaseHold
from writing.models import Writer, Writing

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

    class Params:
        # The model's blank metadata, as an import of bare contexts leaves it.
        bare = factory.Trait(emotion_type="", problem_type="", source="")


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
    """A human verdict on a pair; with ``quality_item=...`` a verdict on that check instead."""

    class Meta:
        model = Judgment

    quality_item = None
    pair = factory.Maybe(
        "quality_item", yes_declaration=None, no_declaration=factory.SubFactory(PairFactory)
    )
    study = factory.Maybe(
        "quality_item",
        yes_declaration=factory.SelfAttribute("quality_item.study"),
        no_declaration=factory.SelfAttribute("pair.study"),
    )
    judge_kind = "human"
    judge = factory.Sequence(lambda n: f"judge-{n}")
    winner = "a"
    strength = 1
    strength_max = 2
    shown_left = "a"
    submitted_at = factory.LazyFunction(timezone.now)


class AssignmentFactory(factory.django.DjangoModelFactory):
    """A lease of a pair (or, with ``quality_item=...``, of a check) to a rater of its study."""

    class Meta:
        model = Assignment

    rater = factory.SubFactory(RaterFactory)
    quality_item = None
    pair = factory.Maybe(
        "quality_item",
        yes_declaration=None,
        no_declaration=factory.SubFactory(
            PairFactory, context__study=factory.SelfAttribute("...rater.study")
        ),
    )
    shown_left = "a"
    position = 0
    served_at = factory.LazyFunction(timezone.now)
    lease_expires_at = factory.LazyAttribute(lambda o: o.served_at + timedelta(minutes=5))


class WriterFactory(factory.django.DjangoModelFactory):
    """A writer; their own human system, as writer_enter makes it."""

    class Meta:
        model = Writer

    study = factory.SubFactory(StudyFactory)
    system = factory.SubFactory(
        SystemFactory,
        study=factory.SelfAttribute("..study"),
        name=factory.SelfAttribute("..pseudonym"),
        kind="human",
        family="human",
    )
    pseudonym = factory.Sequence(lambda n: f"w-test{n:05d}")


class WritingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Writing

    writer = factory.SubFactory(WriterFactory)
    study = factory.SelfAttribute("writer.study")
    context = factory.SubFactory(DialogueContextFactory, study=factory.SelfAttribute("..study"))
    leased_at = factory.LazyFunction(timezone.now)
    lease_expires_at = factory.LazyAttribute(lambda o: o.leased_at + timedelta(hours=1))


class EndpointFactory(factory.django.DjangoModelFactory):
    """A shared (study-less) endpoint; the other fields keep the model's defaults."""

    class Meta:
        model = Endpoint

    name = factory.Sequence(lambda n: f"endpoint-{n}")
    provider = "openai"
    model = "m"
    family = "gpt"


class RunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Run

    study = factory.SubFactory(StudyFactory)
    kind = "judge"


class UnitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Unit

    run = factory.SubFactory(RunFactory)
    key = factory.Sequence(lambda n: f"u{n}")
    endpoint = factory.SubFactory(EndpointFactory)


class ImportJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ImportJob

    study = factory.SubFactory(StudyFactory)
    kind = "contexts"
    filename = "c.jsonl"


class ReleaseHoldFactory(factory.django.DjangoModelFactory):
    """A writer's text held back from a release (give ``completion=...`` of the study)."""

    class Meta:
        model = ReleaseHold

    study = factory.SubFactory(StudyFactory)
    kind = "writer_text"
    found = "e-mail address"


class RefitJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = RefitJob

    study = factory.SubFactory(StudyFactory)
    trigger = "manual"


class DesignStatusFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DesignStatus

    study = factory.SubFactory(StudyFactory)
    computed_at = factory.LazyFunction(timezone.now)


class CareSettingsFactory(factory.django.DjangoModelFactory):
    """A study's care settings; the model's defaults (qualification off) unless given."""

    class Meta:
        model = CareSettings

    study = factory.SubFactory(StudyFactory)


class ContentNoteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ContentNote

    context = factory.SubFactory(DialogueContextFactory)
    text = "Mentions losing a job."


class QualificationItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = QualificationItem

    study = factory.SubFactory(StudyFactory)
    phase = "qualification"
    turns = factory.LazyFunction(lambda: [dict(t) for t in TURNS])
    text_a = QualityCheckItemFactory.text_a
    text_b = QualityCheckItemFactory.text_b
    expected = "a"
    explanation = "It acknowledges the feeling and stays with it."
