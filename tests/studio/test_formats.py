"""The published JSON Schemas are generated from the one definition of each format, and current."""

from __future__ import annotations

import json

import jsonschema
import pytest
from django.core.management import call_command

from annotation.judgment_export import judgments_export
from studio.formats import schema_dir, schema_texts
from tests.factories import JudgmentFactory, QualityCheckItemFactory, RaterFactory


def _schema(name: str) -> dict:
    return json.loads((schema_dir() / f"{name}.schema.json").read_text())


def test_the_published_schemas_are_current():
    for name, text in schema_texts().items():
        assert (schema_dir() / name).read_text() == text, f"run manage.py format_schemas: {name}"
    call_command("format_schemas", "--check")


def test_the_design_examples_validate_and_bad_lines_do_not():
    context = {
        "id": "esconv-12-t7",
        "turns": [{"speaker": "supporter", "text": "Hi"}, {"speaker": "seeker", "text": "..."}],
        "emotion_type": "anxiety",
        "problem_type": "job crisis",
        "adversarial": False,
        "escalation_profile": None,
        "source": "ESConv",
    }
    completion = {
        "context_id": "esconv-12-t7",
        "system": "gpt-4o",
        "family": "gpt",
        "kind": "model",
        "text": "...",
        "ttft_ms": 512,
    }
    minimal = {"context_id": "c", "system_a": "x", "system_b": "y", "judge": "j", "winner": "a"}
    jsonschema.validate(context, _schema("contexts"))
    jsonschema.validate(completion, _schema("completions"))
    jsonschema.validate(minimal, _schema("judgments"))
    for bad in ({"winner": "left"}, {"axes": {"Z": {"winner": "a"}}}, {"strength": 9}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(minimal | bad, _schema("judgments"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {k: v for k, v in minimal.items() if k != "judge"}, _schema("judgments")
        )


@pytest.mark.django_db
def test_every_exported_judgment_validates_against_the_published_schema(tmp_path):
    judgment = JudgmentFactory(axes={"H": {"winner": "a", "strength": 2}}, rationale="=1+1")
    rater = RaterFactory(study=judgment.study)
    JudgmentFactory(pair=judgment.pair, rater=rater, judge=rater.pseudonym, submitted_at=None)
    item = QualityCheckItemFactory(study=judgment.study)
    JudgmentFactory(pair=None, quality_item=item, study=judgment.study, quality_check=True)
    path = tmp_path / "out.jsonl"
    assert judgments_export(study=judgment.study, fmt="jsonl", path=path) == 3
    schema = _schema("judgments")
    for line in path.read_text().splitlines():
        jsonschema.validate(json.loads(line), schema)
