"""The run engine against the fake server through the real SDKs: generation, cache, budget,
cancel, retries, and what each kind of provider failure leaves behind."""

from __future__ import annotations

import time

import pytest

from completions.models import Completion, System
from llm import services
from llm.executor import run_execute
from llm.models import CachedCall, RunStatus, UnitStatus
from llm.selectors import run_counts, run_status_row
from tests.factories import DialogueContextFactory, StudyFactory
from tests.factories.llm import endpoint

pytestmark = pytest.mark.django_db


def _study(n: int = 3):
    study = StudyFactory()
    for i in range(n):
        DialogueContextFactory(
            study=study,
            turns=[
                {"speaker": "seeker", "text": f"I lost my job last week ({i})."},
                {"speaker": "supporter", "text": "That must be a shock."},
                {"speaker": "seeker", "text": "I don't know how to tell my family."},
            ],
        )
    return study


def _generate(study, *endpoints, budget=None):
    run = services.run_plan(study=study, kind="generate", endpoints=endpoints, budget_usd=budget)
    services.run_start(run=run)  # eager in tests: dispatch waits for the commit we never make
    run_execute(run.pk)
    run.refresh_from_db()
    return run


def test_a_generate_run_writes_one_completion_per_context_with_ttft_and_provenance(fake_llm):
    study = _study(3)
    gpt = endpoint(fake_llm, "gen-gpt", model="gen-gpt@ttft=40", family="gpt")
    claude = endpoint(fake_llm, "gen-claude", model="gen-claude@ttft=40", provider="anthropic")
    run = _generate(study, gpt, claude)
    assert run.status == RunStatus.FINISHED
    assert run_counts(run)["done"] == 6
    completions = Completion.objects.filter(context__study=study)
    assert completions.count() == 6
    for completion in completions:
        assert completion.ttft_ms >= 40  # the server waited 40 ms before the first token
        assert completion.latency_ms >= completion.ttft_ms
        prov = completion.provenance
        assert prov["model_reported"] in ("gen-gpt", "gen-claude")
        assert prov["parameters"]["temperature"] == 0.0 and prov["parameters"]["top_p"] == 1.0
        assert len(prov["prompt_hash"]) == 64 and prov["raw_reply"] == completion.text
        assert prov["request_id"] and prov["prompt_version"] == 1
    system = System.objects.get(study=study, name="gen-gpt")
    assert system.kind == "model" and system.family == "gpt" and system.ttft_ms >= 40
    row = run_status_row(run)
    assert row["endpoints"] == ["gen-claude", "gen-gpt"] and row["tokens_in"] > 0


def test_a_second_study_on_the_same_material_is_answered_from_the_cache(fake_llm):
    gpt = endpoint(fake_llm, "cache-gpt", price_in=1.0, price_out=2.0)
    first = _generate(_study(2), gpt)
    sent = fake_llm.state.total
    assert sent == 2 and first.cost > 0
    second = _generate(_study(2), gpt)
    assert fake_llm.state.total == sent  # nothing sent again
    assert second.cost == 0 and run_counts(second)["from_cache"] == 2
    cached = Completion.objects.filter(context__study=second.study)
    assert cached.count() == 2 and all(c.ttft_ms is None for c in cached)
    assert CachedCall.objects.count() == 2


def test_a_run_executed_twice_or_planned_again_never_doubles_a_completion(fake_llm):
    study = _study(2)
    gpt = endpoint(fake_llm, "idem-gpt")
    run = _generate(study, gpt)
    assert run_execute(run.pk) == "stopped"  # finished: nothing to claim
    again = _generate(study, gpt)
    assert again.plan["units"] == 0 and again.plan["already_generated"] == 2
    assert Completion.objects.filter(context__study=study).count() == 2
    assert fake_llm.state.total == 2


def test_a_run_stops_at_its_budget(fake_llm):
    study = _study(6)
    pricey = endpoint(fake_llm, "budget-gpt", price_in=1000.0, price_out=1000.0, max_concurrency=1)
    run = services.run_plan(study=study, kind="generate", endpoints=[pricey], budget_usd=0.1)
    assert run.plan["est_cost"] > 0.1
    services.run_start(run=run)
    run_execute(run.pk)
    run.refresh_from_db()
    counts = run_counts(run)
    assert run.status == RunStatus.BUDGET
    assert 1 <= counts["done"] < 6 and counts["remaining"] == 6 - counts["done"]
    assert run.cost >= 0.1


def test_a_cancelled_run_sends_nothing_more_and_can_be_resumed(fake_llm):
    study = _study(2)
    gpt = endpoint(fake_llm, "cancel-gpt")
    run = services.run_plan(study=study, kind="generate", endpoints=[gpt])
    services.run_start(run=run)
    assert services.run_cancel(run=run)
    run_execute(run.pk)
    assert fake_llm.state.total == 0 and run_counts(run)["remaining"] == 2
    services.run_resume(run=run)
    run_execute(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and run_counts(run)["done"] == 2


def test_retry_failed_requeues_only_the_failed_units(fake_llm):
    study = _study(3)
    flaky = endpoint(fake_llm, "flaky", model="flaky@status=500*1")
    run = _generate(study, flaky)
    counts = run_counts(run)
    assert counts["failed"] == 3 and counts["done"] == 0
    unit = run.units.first()
    assert unit.error.startswith("http: HTTP 500") and unit.sends == 1
    assert services.run_retry_failed(run=run) == 3
    run_execute(run.pk)
    run.refresh_from_db()
    assert run_counts(run)["done"] == 3 and run.status == RunStatus.FINISHED
    assert fake_llm.state.total == 6  # three failures, three successes: nothing else resent


def test_the_sdk_honours_retry_after_on_429(fake_llm):
    study = _study(1)
    limited = endpoint(
        fake_llm, "limited", model="limited@status=429*1,retry_after=0.6", max_retries=1
    )
    started = time.monotonic()
    run = _generate(study, limited)
    assert time.monotonic() - started >= 0.6  # the SDK waited as the server asked
    assert run_counts(run)["done"] == 1
    assert fake_llm.state.total == 2
    assert run.units.get().sends == 1  # one send of ours; the retry is the SDK's own


@pytest.mark.parametrize(
    ("model", "error"),
    [
        ("bad@status=500", "http: HTTP 500"),
        ("bad@bad=http", "bad_response"),
        ("bad@hang", "timeout"),
        ("bad@drop=1", "connection"),
    ],
)
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_provider_failure_is_a_failed_unit_and_never_a_completion(
    fake_llm, model, error, provider
):
    study = _study(1)
    broken = endpoint(fake_llm, f"broken-{provider}", model=model, provider=provider, timeout_s=0.5)
    run = _generate(study, broken)
    unit = run.units.get()
    assert unit.status == UnitStatus.FAILED and unit.error.startswith(error)
    assert run.status == RunStatus.FINISHED  # counted, not fatal
    assert not Completion.objects.filter(context__study=study).exists()
    assert not CachedCall.objects.exists()  # errors are never cached


def test_a_missing_key_variable_fails_units_with_a_clear_message(fake_llm, monkeypatch, settings):
    settings.LLM_KEY_ENV_ALLOWLIST = ["HEART_TEST_MISSING_KEY"]
    monkeypatch.delenv("HEART_TEST_MISSING_KEY", raising=False)
    keyed = endpoint(fake_llm, "keyed", api_key_env="HEART_TEST_MISSING_KEY")
    assert "HEART_TEST_MISSING_KEY is not set" in services.endpoint_key_problem(keyed)
    run = _generate(_study(1), keyed)
    assert "HEART_TEST_MISSING_KEY is not set" in run.units.get().error
