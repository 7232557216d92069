"""Label sets, validation samples, consensus and the F1/kappa report."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from completions import strategies
from labelling import selectors, services
from labelling.models import CompletionLabels, HumanLabel
from tests.factories.labelling import build_labelled_study, label_all, reply_for, user

pytestmark = pytest.mark.django_db


def test_a_reply_is_stored_once_per_completion_and_set():
    study = build_labelled_study()
    label_set = label_all(study, lambda c: ["Reflective Statements", "Affirmation"])
    completion = label_set.rows.first().completion
    again = services.labels_store(
        label_set=label_set, completion=completion, raw_reply=reply_for(completion.text, [])
    )
    assert again.present == ["Affirmation", "Reflective Statements"]
    assert CompletionLabels.objects.filter(label_set=label_set).count() == 12
    assert label_set.taxonomy_hash == strategies.TAXONOMY_HASH


def test_an_invalid_reply_is_not_stored():
    study = build_labelled_study()
    label_set = services.label_set_create(study=study, name="bad")
    completion = study.contexts.first().completions.first()
    with pytest.raises(strategies.LabelReplyError):
        services.labels_store(label_set=label_set, completion=completion, raw_reply="{}")
    assert not label_set.rows.exists()


def test_the_export_follows_the_design_format(tmp_path):
    study = build_labelled_study()
    label_set = label_all(study, lambda c: ["Reflective Statements"])
    out = tmp_path / "labels.jsonl"
    call_command("export_strategy_labels", "--study", study.slug, "-o", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 12
    first = rows[0]
    assert set(first) == {"context_id", "system", "run", "labels"}
    assert first["context_id"] == "ctx-0" and first["run"] == f"labelset-{label_set.pk}"
    assert list(first["labels"]) == list(strategies.STRATEGY_NAMES)
    assert first["labels"]["Reflective Statements"] == {
        "status": "present",
        "p": 0.9,
        "evidence": "It sounds like you're overwhelmed",
    }


def test_the_export_without_labels_says_what_to_run(tmp_path):
    study = build_labelled_study()
    with pytest.raises(CommandError, match="llm_run label"):
        call_command("export_strategy_labels", "--study", study.slug, "-o", str(tmp_path / "x"))


def test_the_sample_is_stratified_by_system_kind_and_family():
    study = build_labelled_study(n_contexts=5)
    sample = services.sample_create(study=study, size=6, seed=3)
    strata = Counter(sample.items.values_list("stratum", flat=True))
    assert strata == {"model/gpt": 2, "model/claude": 2, "human": 2}
    again = services.sample_create(study=study, size=6, seed=3)
    assert list(again.items.values_list("completion_id", flat=True)) == list(
        sample.items.values_list("completion_id", flat=True)
    )


def test_a_sample_needs_two_labellers_and_some_completions():
    study = build_labelled_study()
    with pytest.raises(services.LabellingError, match="two labellers"):
        services.sample_create(study=study, size=3, labellers_per_item=1)
    with pytest.raises(services.LabellingError, match="no completions"):
        services.sample_create(study=build_labelled_study("empty", n_contexts=0), size=3)


def test_consensus_needs_agreement_or_an_adjudication_and_the_report_compares():
    study = build_labelled_study()
    # The LLM marks Reflective Statements everywhere and Affirmation nowhere.
    label_set = label_all(study, lambda c: ["Reflective Statements"])
    sample = services.sample_create(study=study, size=3)
    ann, bob = user("ann", labeller=True), user("bob", labeller=True)
    items = list(sample.items.all())
    # Item 0: both say Reflective Statements. Item 1: both say Affirmation + Reflective.
    # Item 2: they disagree on Affirmation.
    for labeller in (ann, bob):
        services.human_label_submit(
            item=items[0], labeller=labeller, present=["Reflective Statements"]
        )
        services.human_label_submit(
            item=items[1], labeller=labeller, present=["Affirmation", "Reflective Statements"]
        )
    services.human_label_submit(item=items[2], labeller=ann, present=["Affirmation"])
    services.human_label_submit(item=items[2], labeller=bob, present=[])
    states = selectors.item_states(sample)
    assert [s.consensus for s in states] == [
        ["Reflective Statements"],
        ["Affirmation", "Reflective Statements"],
        None,
    ]
    assert states[2].disputed == ["Affirmation"]
    report = selectors.validation_report(sample, label_set)
    assert report["n_items"] == 2 and report["progress"]["disagreements"] == 1
    services.adjudicate(item=items[2], present=["Affirmation"], decided_by=None)
    report = selectors.validation_report(sample, label_set)
    rows = {row["strategy"]: row for row in report["strategies"]}
    # Three items. Reflective: truth 1,1,0 vs LLM 1,1,1 -> F1 = 4/5; kappa: p_o 2/3,
    # p_e = (2/3)(1) + (1/3)(0) = 2/3 -> 0. Affirmation: truth 0,1,1 vs LLM 0,0,0 -> F1 0,
    # kappa: p_e = (2/3)(0)+(1/3)(1) = 1/3, p_o = 1/3 -> 0.
    assert report["n_items"] == 3
    assert rows["Reflective Statements"]["f1"] == pytest.approx(0.8)
    assert rows["Reflective Statements"]["kappa"] == pytest.approx(0.0)
    assert rows["Affirmation"]["f1"] == pytest.approx(0.0)
    assert rows["Chit Chat"]["f1"] is None  # never marked by either side
    assert report["macro_f1"] == pytest.approx(0.4)


def test_a_labeller_cannot_label_the_same_item_twice_or_off_taxonomy():
    study = build_labelled_study()
    sample = services.sample_create(study=study, size=1)
    ann = user("ann", labeller=True)
    item = sample.items.get()
    services.human_label_submit(item=item, labeller=ann, present=[])
    with pytest.raises(services.LabellingError, match="already labelled"):
        services.human_label_submit(item=item, labeller=ann, present=["Affirmation"])
    with pytest.raises(services.LabellingError, match="Not in the taxonomy: Questions"):
        services.human_label_submit(
            item=item, labeller=user("bob", labeller=True), present=["Questions"]
        )
    assert HumanLabel.objects.count() == 1


def test_the_queue_gives_each_item_to_the_quota_of_labellers_only():
    study = build_labelled_study()
    sample = services.sample_create(study=study, size=2)
    ann, bob, cat = (user(n, labeller=True) for n in ("ann", "bob", "cat"))
    for labeller in (ann, bob):
        while (item := selectors.next_item(sample, labeller)) is not None:
            services.human_label_submit(item=item, labeller=labeller, present=[])
    assert selectors.next_item(sample, cat) is None
    assert selectors.samples_for_labeller(cat) == []
