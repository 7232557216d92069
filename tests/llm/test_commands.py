"""The llm_endpoint and llm_run commands (contracts other tools read) against the fake server."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Judgment
from llm.models import Endpoint
from tests.factories.llm import study_with_pairs

pytestmark = pytest.mark.django_db


def _call(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_llm_endpoint_add_creates_then_updates_without_storing_a_key(fake_llm, monkeypatch):
    monkeypatch.setenv("HEART_TEST_KEY", "sk-secret-value")
    out = _call(
        "llm_endpoint", "add", "judge-a", "--provider", "openai", "--model", "m",
        "--family", "gpt", "--base-url", fake_llm.url + "/v1", "--api-key-env", "HEART_TEST_KEY",
        "--max-concurrency", "3", "--price-in", "2.5", "--price-out", "10",
    )  # fmt: skip
    assert "Created endpoint judge-a" in out
    _call("llm_endpoint", "add", "judge-a", "--max-concurrency", "5")
    endpoint = Endpoint.objects.get(name="judge-a")
    assert endpoint.max_concurrency == 5 and endpoint.price_out == 10 and endpoint.family == "gpt"
    assert "sk-secret-value" not in json.dumps(list(Endpoint.objects.values()), default=str)


def test_llm_endpoint_refuses_a_new_endpoint_without_model():
    with pytest.raises(CommandError, match="needs model"):
        _call("llm_endpoint", "add", "x", "--provider", "openai", "--family", "gpt")


def test_llm_run_judge_then_status_json(fake_llm):
    study = study_with_pairs(1)
    for name, provider, family in (("j-gpt", "openai", "gpt"), ("j-claude", "anthropic", "claude")):
        base = fake_llm.url + ("/v1" if provider == "openai" else "")
        _call(
            "llm_endpoint", "add", name, "--provider", provider, "--model", name,
            "--family", family, "--base-url", base,
        )  # fmt: skip
    out = _call(
        "llm_run", "judge", "--study", study.slug, "--judge", "j-gpt", "--judge", "j-claude"
    )
    assert "Skipped (own family): 6" in out and "finished" in out
    assert Judgment.objects.filter(study=study, judge_kind="llm").count() == 12
    rows = json.loads(_call("llm_run", "status", "--study", study.slug, "--format", "json"))
    assert len(rows) == 1
    row = rows[0]
    assert set(row) == {
        "run", "kind", "status", "units", "done", "failed", "invalid",
        "skipped_own_family", "tokens_in", "tokens_out", "cost", "judges",
    }  # fmt: skip
    assert row["kind"] == "judge" and row["status"] == "finished"
    assert row["units"] == 12 and row["done"] == 12 and row["skipped_own_family"] == 6
    assert row["judges"] == ["j-claude", "j-gpt"]


def test_llm_run_generate_names_systems_after_endpoints(fake_llm):
    study = study_with_pairs(2)
    _call(
        "llm_endpoint", "add", "gen-new", "--provider", "openai", "--model", "gen-new",
        "--family", "llama", "--base-url", fake_llm.url + "/v1",
    )  # fmt: skip
    _call("llm_run", "generate", "--study", study.slug, "--endpoint", "gen-new")
    system = study.systems.get(name="gen-new")
    assert system.family == "llama" and system.completions.count() == 2
    rows = json.loads(_call("llm_run", "status", "--study", study.slug, "--format", "json"))
    assert rows[0]["endpoints"] == ["gen-new"]


def test_llm_run_refuses_an_unknown_endpoint():
    study = study_with_pairs(1)
    with pytest.raises(CommandError, match="unknown endpoint"):
        _call("llm_run", "judge", "--study", study.slug, "--judge", "nope")
