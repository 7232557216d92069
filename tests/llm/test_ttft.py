"""What the recorded time to first token (TTFT) measures, against the fake server's injected
delay: the server's wait for the first content token, and neither the SDK's work before the
request nor its parsing of that token, nor the SDK's retries before the answering attempt.

Each test stalls the client for longer than the tolerance at the place it checks, so a TTFT
taken there would be off by the stall: these are checks of what is measured, not benchmarks.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import anthropic
import openai
import pytest

from llm import services
from llm.clients import ClientPool, EndpointConfig, LLMRequest, complete
from llm.executor import Executor
from tests.factories.llm import endpoint, study_with_pairs

TTFT_MS = 100
STALL_S = 0.25  # longer than the tolerance below: a TTFT that counted it would fail
TOLERANCE_MS = 100  # the client's own transit and scheduling, on a shared test machine
SDKS = {"openai": openai.AsyncOpenAI, "anthropic": anthropic.AsyncAnthropic}


def _config(server, provider: str, model: str, retries: int = 0) -> EndpointConfig:
    base = server.url + ("/v1" if provider == "openai" else "")
    return EndpointConfig(
        name=f"ttft-{provider}", provider=provider, model=model, base_url=base, max_retries=retries
    )


def _call(server, provider: str, model: str, retries: int = 0, text: str = "hello"):
    async def go():
        pool = ClientPool()
        try:
            request = LLMRequest(system="Be kind.", messages=[{"role": "user", "content": text}])
            return await complete(pool, _config(server, provider, model, retries), request)
        finally:
            await pool.close()

    # Its own thread: the browser tests' Playwright leaves an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        reply = pool.submit(asyncio.run, go()).result()
    injected = dict(server.state.ttft)[reply.request_id]  # what the server really waited
    return reply, injected


def _carries_text(data) -> bool:
    """A stream event with reply text in it (OpenAI chunk or Anthropic text delta)."""
    if not isinstance(data, dict):
        return False
    deltas = [c.get("delta") or {} for c in data.get("choices") or []]
    deltas.append(data.get("delta") or {})
    return any(d.get("content") or d.get("text") for d in deltas)


def _assert_measures_the_server_delay(reply, injected: float) -> None:
    assert injected >= TTFT_MS  # the server never answers early
    assert reply.ttft_ms >= injected  # the whole server delay is in the TTFT
    assert reply.ttft_ms - injected < TOLERANCE_MS  # and the stall is not
    assert reply.latency_ms >= reply.ttft_ms


@pytest.mark.parametrize("provider", sorted(SDKS))
def test_ttft_excludes_the_sdk_work_before_the_request(fake_llm, monkeypatch, provider):
    sdk = SDKS[provider]
    build = sdk._build_request

    def slow_build(self, *args, **kwargs):
        time.sleep(STALL_S)  # the SDK building, validating, signing the request
        return build(self, *args, **kwargs)

    monkeypatch.setattr(sdk, "_build_request", slow_build)
    reply, injected = _call(fake_llm, provider, f"ttft-pre@ttft={TTFT_MS}", text="pre")
    _assert_measures_the_server_delay(reply, injected)


@pytest.mark.parametrize("provider", sorted(SDKS))
def test_ttft_stops_when_the_first_token_arrives_not_when_the_sdk_has_parsed_it(
    fake_llm, monkeypatch, provider
):
    sdk = SDKS[provider]
    process = sdk._process_response_data

    def slow_process(self, *, data, **kwargs):
        if _carries_text(data):
            time.sleep(STALL_S)  # decoding the event that carries the first token
        return process(self, data=data, **kwargs)

    monkeypatch.setattr(sdk, "_process_response_data", slow_process)
    reply, injected = _call(fake_llm, provider, f"ttft-post@ttft={TTFT_MS}", text="post")
    _assert_measures_the_server_delay(reply, injected)
    assert reply.latency_ms - reply.ttft_ms >= STALL_S * 1000  # the stall did happen, after it


def test_ttft_belongs_to_the_attempt_that_answered(fake_llm):
    # The first attempt gets a 500; the SDK waits (its backoff) and retries: the model's TTFT is
    # that of the answer, not the error plus the backoff.
    reply, injected = _call(
        fake_llm, "openai", f"ttft-retry@ttft={TTFT_MS},status=500*1", retries=1, text="retry"
    )
    assert reply.request_id.endswith("-2")  # the second attempt answered
    _assert_measures_the_server_delay(reply, injected)


@pytest.mark.django_db
def test_streamed_runs_keep_at_most_llm_streams_per_process_in_flight(fake_llm, settings):
    settings.LLM_STREAMS_PER_PROCESS = 4
    settings.LLM_EXECUTORS_PER_RUN = 1
    study = study_with_pairs(n_contexts=1)
    wide = [endpoint(fake_llm, f"wide-{i}", max_concurrency=32) for i in range(2)]
    generate = services.run_plan(study=study, kind="generate", endpoints=wide)
    assert sorted(Executor(generate.pk).slot_cap.values()) == [2, 2]  # 4 split over 2
    judge = services.run_plan(study=study, kind="judge", endpoints=wide[:1])
    assert list(Executor(judge.pk).slot_cap.values()) == [32]  # not streamed: no cap
