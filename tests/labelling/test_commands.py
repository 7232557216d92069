"""`llm_run label`, `llm_run adversarial` (with and without --batch) and the labels export."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from completions.models import DialogueContext
from labelling.models import CompletionLabels
from llm.management.commands.llm_run import Command as LlmRunCommand
from llm.models import Run
from tests.factories.labelling import build_labelled_study
from tests.factories.llm import endpoint
from tests.labelling.test_label_run import _contexts

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_llm_run_label_then_export(fake_llm, tmp_path):
    study = build_labelled_study(n_contexts=1)
    endpoint(fake_llm, "demo-labeller")
    output = run("llm_run", "label", "--study", study.slug, "--judge", "demo-labeller")
    assert "3 done, 0 failed, 0 invalid" in output
    target = tmp_path / "labels.jsonl"
    run("export_strategy_labels", "--study", study.slug, "-o", str(target))
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(rows) == 3 and rows[0]["run"] == str(Run.objects.get(kind="label").pk)


def test_llm_run_label_in_batch_mode(fake_llm, monkeypatch):
    monkeypatch.setattr(LlmRunCommand, "batch_poll_seconds", 0.0)
    study = build_labelled_study(n_contexts=1)
    endpoint(fake_llm, "batch-labeller", provider="anthropic")
    output = run("llm_run", "label", "--study", study.slug, "--judge", "batch-labeller", "--batch")
    assert "Submitted anthropic batch" in output and "3 done" in output
    assert CompletionLabels.objects.count() == 3
    run_row = Run.objects.get(kind="label")
    assert run_row.params["batch"] is True and run_row.status == "finished"


def test_llm_run_adversarial(fake_llm):
    study = _contexts()
    endpoint(fake_llm, "demo-rewriter")
    output = run(
        "llm_run",
        "adversarial",
        "--study",
        study.slug,
        "--endpoint",
        "demo-rewriter",
        "--profile",
        "Mid-Spike",
        "--contexts",
        "2",
    )
    assert "2 done" in output
    assert DialogueContext.objects.filter(study=study, escalation_profile="Mid-Spike").count() == 2


def test_an_unknown_profile_is_refused_by_the_command(fake_llm):
    study = _contexts()
    endpoint(fake_llm, "rw")
    with pytest.raises(CommandError):
        run(
            "llm_run", "adversarial", "--study", study.slug, "--endpoint", "rw", "--profile", "Nope"
        )
