"""The import commands on the real ESConv files shipped in /work/shared/data (or data/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from completions.models import Completion, DialogueContext, Study, System

pytestmark = pytest.mark.django_db

# The full shared files (a repository data/ folder may hold only a sample).
DATA = next(
    (
        p
        for p in (Path("/work/shared/data"), Path(__file__).resolve().parents[2] / "data")
        if (p / "FailedESConv.json").exists() and (p / "esconv-dialogs.json").exists()
    ),
    Path("/work/shared/data"),
)
FILES = ["esconv-dialogs.json", "FailedESConv.json"]


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def counts(study: Study) -> tuple[int, int]:
    return (
        DialogueContext.objects.filter(study=study).count(),
        Completion.objects.filter(context__study=study).count(),
    )


@pytest.mark.parametrize("name", FILES)
def test_import_esconv_screens_the_real_file_and_is_idempotent(name):
    first = run("import_esconv", str(DATA / name), "--study", "esc", "--create")
    study = Study.objects.get(slug="esc")
    n_contexts, n_completions = counts(study)
    assert n_contexts > 50 and n_completions == n_contexts
    assert "dialogues kept:" in first and "dropped (no_candidate):" in first
    assert f"contexts created: {n_contexts}" in first
    context = DialogueContext.objects.filter(study=study).first()
    assert context.turns[-1]["speaker"] == "seeker" and context.source == "ESConv"
    reply = Completion.objects.get(context=context)
    assert reply.system.name == "original-dataset" and reply.system.kind == "dataset"
    assert isinstance(reply.metadata["strategies"], list)
    second = run("import_esconv", str(DATA / name), "--study", "esc")
    assert counts(study) == (n_contexts, n_completions)
    assert "contexts created: 0" in second
    assert f"contexts already present: {n_contexts}" in second


def test_both_files_go_into_one_study_with_one_dataset_system():
    for name in FILES:
        run("import_esconv", str(DATA / name), "--study", "esc", "--create")
    study = Study.objects.get(slug="esc")
    assert System.objects.filter(study=study).count() == 1
    failed = DialogueContext.objects.filter(study=study, source_id__startswith="esconv-")
    assert (
        failed.exclude(source_id__startswith="esconv-dev")
        .exclude(source_id__startswith="esconv-test")
        .exists()
    )


def test_the_limit_option_screens_only_the_first_dialogues():
    out = run("import_esconv", str(DATA / FILES[1]), "--study", "esc", "--create", "--limit", "10")
    assert "dialogues read: 10" in out


def test_a_truncated_esconv_file_is_refused_and_the_database_is_unchanged(tmp_path):
    run("import_esconv", str(DATA / FILES[1]), "--study", "esc", "--create", "--limit", "20")
    study = Study.objects.get(slug="esc")
    before = counts(study)
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes((DATA / FILES[0]).read_bytes()[:5000])
    with pytest.raises(CommandError, match=r"not valid JSON \(line \d+, column \d+"):
        run("import_esconv", str(truncated), "--study", "esc")
    assert counts(study) == before


def test_a_bad_dialogue_is_refused_by_index_and_nothing_is_kept(tmp_path):
    dialogues = json.loads((DATA / FILES[1]).read_text())[:5]
    dialogues[3]["dialog"][0]["speaker"] = "narrator"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(dialogues))
    with pytest.raises(CommandError, match="dialogue 3"):
        run("import_esconv", str(path), "--study", "esc", "--create")
    assert not DialogueContext.objects.exists()


def test_a_missing_study_is_a_clear_error_without_create(tmp_path):
    with pytest.raises(CommandError, match="no study with slug 'nope' .*--create"):
        run("import_esconv", str(DATA / FILES[1]), "--study", "nope")
    assert not Study.objects.filter(slug="nope").exists()


def test_import_contexts_and_completions_commands_print_a_summary(tmp_path):
    ctx = tmp_path / "c.jsonl"
    ctx.write_text(
        json.dumps({"id": "c1", "turns": [{"speaker": "seeker", "text": "help"}]}) + "\n"
    )
    comp = tmp_path / "m.jsonl"
    comp.write_text(
        json.dumps(
            {
                "context_id": "c1",
                "system": "m",
                "family": "gpt",
                "kind": "model",
                "text": "hello",
                "ttft_ms": 3,
            }
        )
        + "\n"
    )
    out = run("import_contexts", str(ctx), "--study", "s", "--create")
    assert "contexts created: 1" in out
    out = run("import_completions", str(comp), "--study", "s")
    assert "completions created: 1" in out and "systems created: 1" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"context_id": "c1"\n')
    with pytest.raises(CommandError, match="line 1: invalid JSON"):
        run("import_completions", str(bad), "--study", "s")
