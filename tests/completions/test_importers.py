"""JSONL imports of contexts and completions: validation, metadata, idempotency, all or nothing."""

from __future__ import annotations

import json

import pytest

from completions.importers import ImportFileError
from completions.models import Completion, DialogueContext, System
from completions.services import completions_import, contexts_import, system_get_or_create
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db

TURNS = [
    {"speaker": "supporter", "text": "Hi, what brings you here?"},
    {"speaker": "seeker", "text": "I am so stressed about my exams."},
]


def write_jsonl(path, rows) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


def context_row(i: int, **extra) -> dict:
    return {
        "id": f"c{i}",
        "turns": TURNS,
        "emotion_type": "anxiety",
        "problem_type": "exams",
        "adversarial": False,
        "escalation_profile": None,
        "source": "test",
        **extra,
    }


def completion_row(i: int, system: str = "gpt-4o", **extra) -> dict:
    return {
        "context_id": f"c{i}",
        "system": system,
        "family": "gpt",
        "kind": "model",
        "text": f"That sounds stressful ({i}).",
        "ttft_ms": 500 + i,
        **extra,
    }


def test_contexts_import_keeps_unknown_keys_in_metadata(tmp_path):
    study = StudyFactory()
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            context_row(
                1, adversarial=True, escalation_profile="Mid-Spike", rewrite_of="c0", tags=["x"]
            ),
            context_row(2),
        ],
    )
    report = contexts_import(study=study, path=path)
    assert (report.created, report.already_present) == (2, 0)
    c1 = DialogueContext.objects.get(study=study, external_id="c1")
    assert c1.metadata == {"rewrite_of": "c0", "tags": ["x"]}
    assert (c1.adversarial, c1.escalation_profile, c1.turns) == (True, "Mid-Spike", TURNS)


def test_contexts_import_is_idempotent(tmp_path):
    study = StudyFactory()
    path = write_jsonl(tmp_path / "c.jsonl", [context_row(1), context_row(2)])
    contexts_import(study=study, path=path)
    report = contexts_import(study=study, path=path)
    assert (report.created, report.already_present) == (0, 2)
    assert DialogueContext.objects.filter(study=study).count() == 2


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ({"turns": []}, "non-empty"),
        ({"turns": [{"speaker": "bot", "text": "hi"}]}, "speaker"),
        ({"turns": list(reversed(TURNS))}, "last turn must be a seeker turn"),
        ({"escalation_profile": "Sudden"}, "escalation_profile"),
        ({"id": ""}, "'id'"),
    ],
)
def test_a_bad_context_line_is_reported_and_nothing_is_kept(tmp_path, bad, reason):
    study = StudyFactory()
    path = write_jsonl(
        tmp_path / "c.jsonl", [context_row(1), context_row(2, **bad), context_row(3)]
    )
    with pytest.raises(ImportFileError, match=rf"line 2: .*{reason}"):
        contexts_import(study=study, path=path)
    assert not DialogueContext.objects.filter(study=study).exists()


def test_a_truncated_jsonl_file_is_refused_with_its_line(tmp_path):
    study = StudyFactory()
    full = "".join(json.dumps(context_row(i)) + "\n" for i in range(3))
    path = tmp_path / "c.jsonl"
    path.write_text(full[: len(full) - 20])
    with pytest.raises(ImportFileError, match="line 3: invalid JSON"):
        contexts_import(study=study, path=str(path))
    assert not DialogueContext.objects.filter(study=study).exists()


def test_completions_import_creates_systems_and_keeps_strategies(tmp_path):
    study = StudyFactory()
    contexts_import(
        study=study, path=write_jsonl(tmp_path / "c.jsonl", [context_row(1), context_row(2)])
    )
    path = write_jsonl(
        tmp_path / "m.jsonl",
        [
            completion_row(1, strategies=["Questions"]),
            completion_row(2),
            completion_row(1, system="writers", kind="human", family="human", ttft_ms=None),
        ],
    )
    report = completions_import(study=study, path=path)
    assert (report.created, report.systems_created) == (3, 2)
    gpt = System.objects.get(study=study, name="gpt-4o")
    assert (gpt.kind, gpt.family, gpt.ttft_ms) == ("model", "gpt", 501.5)
    done = Completion.objects.get(system=gpt, context__external_id="c1")
    assert done.metadata == {"strategies": ["Questions"]}
    assert done.ttft_ms == 501
    again = completions_import(study=study, path=path)
    assert (again.created, again.already_present) == (0, 3)
    assert Completion.objects.filter(context__study=study).count() == 3


def test_a_conflicting_system_kind_is_an_error_naming_the_line(tmp_path):
    study = StudyFactory()
    contexts_import(study=study, path=write_jsonl(tmp_path / "c.jsonl", [context_row(1)]))
    system_get_or_create(study=study, name="gpt-4o", kind="human")
    path = write_jsonl(tmp_path / "m.jsonl", [completion_row(1)])
    with pytest.raises(ImportFileError, match="line 1: system 'gpt-4o' exists with kind"):
        completions_import(study=study, path=path)
    assert not Completion.objects.exists()


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        (completion_row(9), "unknown context 'c9'"),
        (completion_row(1, kind="robot"), "'kind'.*not 'robot'"),
        (completion_row(1, text=""), "'text'"),
        (completion_row(1, ttft_ms="fast"), "ttft_ms"),
        ("{not json", "invalid JSON"),
    ],
)
def test_a_bad_completion_line_keeps_nothing(tmp_path, row, reason):
    study = StudyFactory()
    contexts_import(study=study, path=write_jsonl(tmp_path / "c.jsonl", [context_row(1)]))
    path = write_jsonl(tmp_path / "m.jsonl", [completion_row(1, system="ok"), row])
    with pytest.raises(ImportFileError, match=f"line 2: .*{reason}"):
        completions_import(study=study, path=path)
    assert not Completion.objects.exists()
    assert not System.objects.filter(name="ok").exists()


def test_a_different_text_for_an_existing_completion_is_an_error(tmp_path):
    study = StudyFactory()
    contexts_import(study=study, path=write_jsonl(tmp_path / "c.jsonl", [context_row(1)]))
    completions_import(study=study, path=write_jsonl(tmp_path / "a.jsonl", [completion_row(1)]))
    path = write_jsonl(tmp_path / "b.jsonl", [completion_row(1, text="Another reply.")])
    with pytest.raises(ImportFileError, match="line 1: gpt-4o already has a different"):
        completions_import(study=study, path=path)


def test_a_repeated_id_with_other_content_in_one_file_is_an_error(tmp_path):
    study = StudyFactory()
    path = write_jsonl(tmp_path / "c.jsonl", [context_row(1), context_row(1, emotion_type="x")])
    with pytest.raises(ImportFileError, match="line 2: context 'c1' repeats line 1"):
        contexts_import(study=study, path=path)
