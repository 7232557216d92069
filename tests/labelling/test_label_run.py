"""Label and adversarial runs on the engine, against the fake server through the real SDKs."""

from __future__ import annotations

import pytest

from completions import strategies
from completions.models import DialogueContext
from labelling.models import CompletionLabels, LabelSetStatus
from llm import services
from llm.executor import run_execute
from llm.models import RunStatus, UnitStatus
from llm.selectors import run_counts
from ranking import services as ranking_services
from tests.factories import DialogueContextFactory, StudyFactory
from tests.factories.labelling import build_labelled_study
from tests.factories.llm import endpoint

pytestmark = pytest.mark.django_db


def _run(study, kind, ep, **params):
    run = services.run_plan(study=study, kind=kind, endpoints=[ep], params=params)
    services.run_start(run=run)
    run_execute(run.pk)
    run.refresh_from_db()
    return run


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_label_run_labels_every_completion_and_feeds_the_analyses(fake_llm, provider):
    study = build_labelled_study()
    ep = endpoint(fake_llm, f"labeller-{provider}", provider=provider, family="gpt")
    run = _run(study, "label", ep)
    assert run.status == RunStatus.FINISHED
    assert run_counts(run)["done"] == 12
    label_set = run.label_sets.get()
    assert label_set.status == LabelSetStatus.FINISHED and label_set.run == run
    row = CompletionLabels.objects.filter(label_set=label_set).first()
    assert set(row.labels) == set(strategies.STRATEGY_NAMES)  # jsonb keeps no key order
    evidence = row.labels["Reflective Statements"]["evidence"]
    assert row.labels["Reflective Statements"]["status"] == "present"
    assert evidence and evidence in row.completion.text
    analysis = ranking_services.strategy_analysis(study)
    assert analysis["labels"]["run"] == run.pk
    assert "Reflective Statements" in analysis["strategies"]["strategies"]
    # A second run on the same material is answered from the cache: nothing paid twice.
    before = fake_llm.state.total
    again = _run(study, "label", ep)
    assert fake_llm.state.total == before and run_counts(again)["done"] == 12


def test_a_label_reply_that_breaks_the_schema_is_repaired_once_then_invalid(fake_llm):
    study = build_labelled_study(n_contexts=1)
    ep = endpoint(fake_llm, "labeller-offtaxonomy", model="labeller-offtaxonomy")
    run = _run(study, "label", ep)
    counts = run_counts(run)
    assert counts["invalid"] == 3 and counts["done"] == 0
    unit = run.units.first()
    assert unit.status == UnitStatus.INVALID and unit.repairs == 1
    assert "not in the taxonomy: 'Self-disclosure'" in unit.error and unit.raw_reply
    assert not CompletionLabels.objects.exists()


def test_evidence_not_in_the_response_is_set_aside_and_the_labels_are_stored(fake_llm):
    study = build_labelled_study(n_contexts=1)
    run = _run(study, "label", endpoint(fake_llm, "labeller-bad", model="labeller-badevidence"))
    assert run_counts(run)["done"] == 3 and all(u.repairs == 0 for u in run.units.all())
    first = strategies.STRATEGY_NAMES[0]
    for row in CompletionLabels.objects.filter(label_set__run=run):
        assert row.labels[first]["status"] == "present" and first in row.present
        assert row.labels[first]["evidence"] is None
        assert row.labels[first]["evidence_unverified"] == "words never said"
    unit = run.units.first()
    assert unit.result["normalised"] == [
        f"{first}: evidence not found in the response, set aside (status kept)"
    ]


def test_a_broken_label_reply_that_the_repair_fixes_is_stored(fake_llm):
    study = build_labelled_study(n_contexts=1)
    ep = endpoint(fake_llm, "labeller-fix", model="labeller-offtaxonomy-once")
    run = _run(study, "label", ep)
    assert run_counts(run)["done"] == 3
    assert all(u.repairs == 1 for u in run.units.all())


def test_a_schema_breaking_label_reply_is_invalid_never_labels(fake_llm):
    study = build_labelled_study(n_contexts=1)
    run = _run(study, "label", endpoint(fake_llm, "labeller-bad", model="labeller@bad=schema"))
    assert run_counts(run)["invalid"] == 3
    assert "does not match the schema" in run.units.first().error


def test_a_label_run_needs_exactly_one_classifier(fake_llm):
    study = build_labelled_study(n_contexts=1)
    a, b = endpoint(fake_llm, "lab-a"), endpoint(fake_llm, "lab-b")
    with pytest.raises(ValueError, match="exactly one"):
        services.run_plan(study=study, kind="label", endpoints=[a, b])


SOURCE = [
    {"speaker": "supporter", "text": "Hello, how are you today?"},
    {"speaker": "seeker", "text": "Not great. I lost my job last week."},
    {"speaker": "supporter", "text": "I'm sorry to hear that. What happened?"},
    {"speaker": "seeker", "text": "They cut the whole team."},
    {"speaker": "supporter", "text": "That must have been a shock."},
    {"speaker": "seeker", "text": "I don't know what to tell my family."},
]


def _contexts():
    study = StudyFactory()
    for i, (emotion, problem) in enumerate(
        [("anxiety", "job"), ("anxiety", "job"), ("sadness", "breakup"), ("anger", "school")]
    ):
        DialogueContextFactory(
            study=study,
            external_id=f"src-{i}",
            turns=SOURCE,
            emotion_type=emotion,
            problem_type=problem,
        )
    return study


def test_an_adversarial_run_adds_linked_variants_that_go_to_the_leaderboard_split(fake_llm):
    study = _contexts()
    ep = endpoint(fake_llm, "rewriter", provider="anthropic", family="claude")
    run = _run(study, "adversarial", ep, profile="Linear-Ramp", contexts=3, seed=0)
    assert run.status == RunStatus.FINISHED and run_counts(run)["done"] == 3
    variants = DialogueContext.objects.filter(study=study, adversarial=True)
    assert variants.count() == 3
    assert {v.emotion_type for v in variants} == {"anxiety", "sadness", "anger"}
    variant = variants.first()
    assert variant.escalation_profile == "Linear-Ramp"
    assert variant.adversarial_source.study == study
    assert variant.metadata["adversarial"]["hostility"] == [2, 6, 10]
    assert [t["text"] for t in variant.turns if t["speaker"] == "supporter"] == [
        t["text"] for t in SOURCE if t["speaker"] == "supporter"
    ]
    # A re-run plans nothing for sources that already have a variant for this profile.
    again = services.run_plan(
        study=study,
        kind="adversarial",
        endpoints=[ep],
        params={"profile": "Linear-Ramp", "contexts": 3},
    )
    assert again.plan["units"] == 0 and again.plan["already_rewritten"] == 3


def test_a_rewrite_breaking_a_rule_is_repaired_once_then_invalid(fake_llm):
    study = _contexts()
    ep = endpoint(fake_llm, "rewriter-bad", model="rewriter-brokenrule")
    run = _run(study, "adversarial", ep, profile="Always-10", contexts=2)
    counts = run_counts(run)
    assert counts["invalid"] == 2 and counts["done"] == 0
    unit = run.units.first()
    assert "supporter turn 1, kept verbatim from the source" in unit.error and unit.repairs == 1
    assert not DialogueContext.objects.filter(adversarial=True).exists()


def test_an_unknown_profile_is_refused_at_planning(fake_llm):
    with pytest.raises(ValueError, match="unknown escalation profile"):
        services.run_plan(
            study=_contexts(),
            kind="adversarial",
            endpoints=[endpoint(fake_llm, "rw")],
            params={"profile": "Sudden"},
        )
