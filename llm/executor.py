"""The run executor: claims units, calls the providers concurrently, stores what came back.

All database work happens in the calling thread (a Celery worker process, a CLI, a test); the
calls run on an asyncio loop in a helper thread, so one process keeps up to `max_concurrency`
calls in flight per endpoint while the ORM stays synchronous. Safe to run twice at once for the
same run: units are claimed with conditional updates under a per-executor token and a lease,
results are stored in the transaction that marks their unit done, and a unit whose lease ran out
(its executor died) is claimed again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from core.structured import InvalidReply

from . import slots
from .clients import (
    CallError,
    ClientPool,
    EndpointConfig,
    LLMReply,
    LLMRequest,
    complete,
    reply_max_chars,
)
from .kinds import Done, RunKind, get_kind
from .metrics import llm_units_finished
from .models import CachedCall, Endpoint, Run, RunStatus, Unit, UnitStatus

log = logging.getLogger(__name__)

# Replies are stored (one transaction) when this many are waiting or this long has passed.
SETTLE_BATCH = 16
SETTLE_EVERY_S = 0.1
STATUS_EVERY_S = 0.5  # how often a busy executor looks at the run (cancel, budget)


def endpoint_config(endpoint: Endpoint) -> EndpointConfig:
    return EndpointConfig(
        name=endpoint.name,
        provider=endpoint.provider,
        model=endpoint.model,
        base_url=endpoint.base_url,
        api_key_env=endpoint.api_key_env,
        api_key_encrypted=endpoint.api_key_encrypted,
        timeout_s=endpoint.timeout_s,
        max_retries=endpoint.max_retries,
    )


class LoopThread:
    """An asyncio loop on a daemon thread, with the SDK clients living on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pool = ClientPool()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def call(
        self, endpoint: EndpointConfig, request: LLMRequest, max_chars: int
    ) -> Future[LLMReply]:
        call = complete(self.pool, endpoint, request, max_chars=max_chars)
        return asyncio.run_coroutine_threadsafe(call, self.loop)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.pool.close(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)
        self.loop.close()


@dataclass
class Work:
    """A unit in flight in this executor."""

    unit: Unit
    request: LLMRequest
    key: str
    first_raw: str = ""
    first_error: str = ""


@dataclass
class Outcome:
    work: Work
    reply: LLMReply | None = None
    error: CallError | None = None

    @property
    def answer(self) -> LLMReply:
        """The reply of an outcome without an error (an outcome has one or the other)."""
        assert self.reply is not None, "an outcome without an error has a reply"
        return self.reply


class Executor:
    """Works on one run until no unit is left, the run is cancelled or over budget, or its time
    slice is used up (then the Celery task queues a fresh one, so no task runs for hours)."""

    def __init__(self, run_id: int, *, slice_s: float | None = None) -> None:
        self.run_id = run_id
        self.token = uuid.uuid4().hex
        self.lease_s = float(getattr(settings, "LLM_LEASE_SECONDS", 60))
        self.poll_s = float(getattr(settings, "LLM_POLL_SECONDS", 0.2))
        self.slice_s = (
            slice_s if slice_s is not None else getattr(settings, "LLM_SLICE_SECONDS", 1200)
        )
        self.run = Run.objects.select_related("study").get(pk=run_id)
        self.kind: RunKind = get_kind(self.run.kind)
        self.max_chars = reply_max_chars(self.run.kind)
        endpoints = Endpoint.objects.filter(units__run=self.run).distinct()
        self.endpoints = {e.pk: e for e in endpoints}
        self.configs = {pk: endpoint_config(e) for pk, e in self.endpoints.items()}
        self.inflight: dict[Future[LLMReply], Work] = {}
        self.completed: dict[Future[LLMReply], Work] = {}  # replies in, not stored yet
        # Claimed (leased) units not sent yet, per endpoint: a freed slot takes the next one
        # without a database round trip. A killed executor's buffer is claimed again later.
        self.buffer: dict[int, deque[Work]] = {}
        self.slots_held = dict.fromkeys(self.endpoints, 0)
        self.est_unit_cost = float(self.run.plan.get("est_cost_per_unit", 0.0))
        share = max(1, int(getattr(settings, "LLM_EXECUTORS_PER_RUN", 1)))
        # This executor's cap on an endpoint's slots: its share, so parallel executors split them.
        self.slot_cap = {pk: -(-e.max_concurrency // share) for pk, e in self.endpoints.items()}
        if self.kind.streams and self.endpoints:
            # Streamed calls (TTFT recorded): at most LLM_STREAMS_PER_PROCESS in flight in this
            # process, split over the run's endpoints, so the recorded TTFT is not our backlog.
            streams = max(1, int(getattr(settings, "LLM_STREAMS_PER_PROCESS", 4)))
            per_endpoint = max(1, streams // len(self.endpoints))
            self.slot_cap = {pk: min(cap, per_endpoint) for pk, cap in self.slot_cap.items()}
        self.buffer = {pk: deque() for pk in self.endpoints}

    # ------------------------------------------------------------------ main loop

    def execute(self) -> str:
        """Returns "finished", "stopped" (cancelled/budget) or "sliced" (more to do later)."""
        for endpoint in self.endpoints.values():
            slots.slots_sync(endpoint)
        runner = LoopThread()
        try:
            return self._loop(runner)
        finally:
            self._release_buffer()
            self._drain(runner)
            slots.slots_release(holder=self.token)
            runner.close()

    def _loop(self, runner: LoopThread) -> str:
        """Send from the buffer the moment a slot frees (no database in between); settle
        replies and refill the buffer in batches, so database round trips are per batch."""
        started = last_renew = last_settle = last_status = time.monotonic()
        run = self._run_state()
        while True:
            now = time.monotonic()
            if now - last_status >= STATUS_EVERY_S or not self.inflight:
                run, last_status = self._run_state(), now
            sliced = now - started > self.slice_s
            claiming = run.status == RunStatus.RUNNING and not sliced
            if claiming and self._over_budget(run):
                Run.objects.filter(pk=self.run_id, status=RunStatus.RUNNING).update(
                    status=RunStatus.BUDGET
                )
                claiming = False
            if not claiming:
                self._release_buffer()
            launched = self._launch_more(runner, claim=claiming)
            if not self.inflight and not self.completed:
                if not claiming:
                    return "sliced" if sliced and run.status == RunStatus.RUNNING else "stopped"
                if not launched:
                    if self._finish_if_done():
                        return "finished"
                    if self._waiting_on_batches():
                        return "stopped"  # the batch poller dispatches the run when it ends
                    time.sleep(self.poll_s)  # others' units in flight, or leases to run out
                    continue
            if self.inflight:
                done, _ = wait(
                    list(self.inflight), timeout=self.poll_s, return_when=FIRST_COMPLETED
                )
                for future in done:
                    self.completed[future] = self.inflight.pop(future)
                self._send_buffered(runner)  # reuse the freed slots at once
            now = time.monotonic()
            if self.completed and (
                len(self.completed) >= SETTLE_BATCH
                or now - last_settle >= SETTLE_EVERY_S
                or not self.inflight
            ):
                self._settle(runner)
                last_settle = now
            if now - last_renew > self.lease_s / 3:
                self._renew()
                last_renew = now

    def _run_state(self) -> Run:
        return Run.objects.only("status", "cost", "budget_usd").get(pk=self.run_id)

    def _over_budget(self, run: Run) -> bool:
        if run.budget_usd is None:
            return False
        pending = len(self.inflight) + sum(len(b) for b in self.buffer.values())
        return run.cost + pending * self.est_unit_cost >= run.budget_usd

    def _drain(self, runner: LoopThread) -> None:
        """Settle what is still in flight (an exception left it): its calls were paid for."""
        while self.inflight or self.completed:
            if self.inflight:
                done, _ = wait(
                    list(self.inflight), timeout=self.poll_s, return_when=FIRST_COMPLETED
                )
                for future in done:
                    self.completed[future] = self.inflight.pop(future)
            if self.completed:
                self._settle(runner, relaunch=False)

    def _renew(self) -> None:
        until = timezone.now() + timedelta(seconds=self.lease_s)
        Unit.objects.filter(claim_token=self.token, status=UnitStatus.IN_FLIGHT).update(
            lease_until=until
        )
        slots.slots_renew(holder=self.token, lease_s=self.lease_s)

    def _waiting_on_batches(self) -> bool:
        """Everything left is out in a provider batch (batch mode): nothing to wait for here."""
        left = Unit.objects.filter(
            run_id=self.run_id, status__in=[UnitStatus.PENDING, UnitStatus.IN_FLIGHT]
        )
        return not left.exclude(claim_token__startswith="batch-").exists()

    def _finish_if_done(self) -> bool:
        left = Unit.objects.filter(
            run_id=self.run_id, status__in=[UnitStatus.PENDING, UnitStatus.IN_FLIGHT]
        ).exists()
        if left:
            return False
        changed = Run.objects.filter(pk=self.run_id, status=RunStatus.RUNNING).update(
            status=RunStatus.FINISHED, finished_at=timezone.now()
        )
        if changed:
            self.kind.on_finish(self.run)
        return True

    # ------------------------------------------------------------------ claiming and calling

    def _in_flight_for(self, endpoint_id: int) -> int:
        return sum(1 for w in self.inflight.values() if w.unit.endpoint_id == endpoint_id)

    def _free(self, endpoint_id: int) -> int:
        return self.slots_held[endpoint_id] - self._in_flight_for(endpoint_id)

    def _send_buffered(self, runner: LoopThread) -> int:
        """Fill free slots from the buffer: no database work."""
        sent = 0
        for endpoint_id, queue in self.buffer.items():
            for _ in range(min(len(queue), max(0, self._free(endpoint_id)))):
                work = queue.popleft()
                call = runner.call(self.configs[endpoint_id], work.request, self.max_chars)
                self.inflight[call] = work
                sent += 1
        return sent

    def _launch_more(self, runner: LoopThread, *, claim: bool) -> int:
        launched = self._send_buffered(runner)
        if not claim:
            return launched
        for endpoint_id, endpoint in self.endpoints.items():
            cap = self.slot_cap[endpoint_id]
            if self.slots_held[endpoint_id] < cap:
                self.slots_held[endpoint_id] = slots.slots_acquire(
                    endpoint,
                    holder=self.token,
                    want=cap - self.slots_held[endpoint_id],
                    lease_s=self.lease_s,
                )
            held, queue = self.slots_held[endpoint_id], self.buffer[endpoint_id]
            if held <= 0 or len(queue) > held // 2:
                continue  # enough queued: claim again when it runs low, in one batch
            busy = self._in_flight_for(endpoint_id)
            units = self._claim(endpoint_id, 2 * held - busy - len(queue))
            if not units and not busy and not queue:
                # Nothing to do here for now: let other processes have the slots.
                slots.slots_release(holder=self.token, endpoint=endpoint)
                self.slots_held[endpoint_id] = 0
            launched += self._launch(runner, units)
        return launched + self._send_buffered(runner)

    def _release_buffer(self) -> None:
        """Give claimed-but-unsent units back (cancel, budget, end of a slice)."""
        works = [w for queue in self.buffer.values() for w in queue]
        if not works:
            return
        for queue in self.buffer.values():
            queue.clear()
        Unit.objects.filter(
            id__in=[w.unit.pk for w in works], claim_token=self.token, status=UnitStatus.IN_FLIGHT
        ).update(status=UnitStatus.PENDING, claim_token="", lease_until=None, sends=F("sends") - 1)

    def _claim(self, endpoint_id: int, n: int) -> list[Unit]:
        now = timezone.now()
        claimable = Q(status=UnitStatus.PENDING) | Q(
            status=UnitStatus.IN_FLIGHT, lease_until__lt=now
        )
        with transaction.atomic():
            ids = list(
                Unit.objects.select_for_update(skip_locked=True)
                .filter(claimable, run_id=self.run_id, endpoint_id=endpoint_id)
                .order_by("id")
                .values_list("id", flat=True)[:n]
            )
            if not ids:
                return []
            Unit.objects.filter(claimable, id__in=ids).update(
                status=UnitStatus.IN_FLIGHT,
                claim_token=self.token,
                lease_until=now + timedelta(seconds=self.lease_s),
                attempts=F("attempts") + 1,
            )
        units = list(Unit.objects.filter(id__in=ids, claim_token=self.token).order_by("id"))
        for unit in units:  # the kinds read these: no query per unit
            unit.run, unit.endpoint = self.run, self.endpoints[unit.endpoint_id]
        return units

    def _launch(self, runner: LoopThread, units: list[Unit]) -> int:
        if not units:
            return 0
        requests = self.kind.build_requests(units)
        works = [
            Work(u, requests[u.pk], requests[u.pk].cache_key(self.configs[u.endpoint_id]))
            for u in units
            if u.pk in requests
        ]
        # A unit whose target is gone (e.g. a deleted pair) fails plainly instead of crashing.
        unbuildable = [
            (Outcome(Work(u, LLMRequest(system="", messages=[]), ""), error=_gone()), None, "")
            for u in units
            if u.pk not in requests
        ]
        if unbuildable:
            self._store(unbuildable)
        self._send(runner, works)
        return len(units)

    def _send(self, runner: LoopThread, works: list[Work]) -> None:
        """Answer from the cache where possible; send the rest to the providers."""
        cached = {c.key: c for c in CachedCall.objects.filter(key__in=[w.key for w in works])}
        hits = [w for w in works if w.key in cached]
        misses = [w for w in works if w.key not in cached]
        if misses:
            Unit.objects.filter(id__in=[w.unit.pk for w in misses]).update(sends=F("sends") + 1)
        for work in misses:
            self.buffer[work.unit.endpoint_id].append(work)
        for work in hits:
            future: Future[LLMReply] = Future()
            future.set_result(reply_from_cache(cached[work.key]))
            self.inflight[future] = work

    # ------------------------------------------------------------------ storing

    def _settle(self, runner: LoopThread, *, relaunch: bool = True) -> None:
        outcomes: list[Outcome] = []
        repairs: list[Work] = []
        done, self.completed = self.completed, {}
        for future, work in done.items():
            try:
                outcomes.append(Outcome(work, reply=future.result()))
            except CallError as exc:
                outcomes.append(Outcome(work, error=exc))
        finished: list[tuple[Outcome, dict[str, Any] | None, str]] = []
        for outcome in outcomes:
            if outcome.error is not None:
                finished.append((outcome, None, ""))
                continue
            try:
                result = self.kind.parse(outcome.work.unit, outcome.answer.text)
                finished.append((outcome, result, ""))
            except InvalidReply as exc:
                work = outcome.work
                if relaunch and not work.first_raw and work.unit.repairs == 0:
                    repairs.append(self._repair(work, outcome.answer, str(exc)))
                    self._account(outcome.answer, self.endpoints[work.unit.endpoint_id])
                else:
                    finished.append((outcome, None, str(exc)))
        if finished:
            self._store(finished)
        if repairs:
            self._send(runner, repairs)

    def _repair(self, work: Work, reply: LLMReply, error: str) -> Work:
        request = self.kind.repair_request(work.request, reply.text, error)
        work.unit.repairs = 1
        return Work(
            work.unit,
            request,
            request.cache_key(self.configs[work.unit.endpoint_id]),
            first_raw=reply.text,
            first_error=error,
        )

    def _account(self, reply: LLMReply, endpoint: Endpoint) -> None:
        """A paid reply that will not be stored with a unit (e.g. before a repair)."""
        if reply.from_cache:
            return
        unit_cost = self._cost_of(reply, endpoint)
        Run.objects.filter(pk=self.run_id).update(
            tokens_in=F("tokens_in") + reply.tokens_in,
            tokens_out=F("tokens_out") + reply.tokens_out,
            cost=F("cost") + unit_cost,
        )

    def _cost_of(self, reply: LLMReply, endpoint: Endpoint) -> float:
        return 0.0 if reply.from_cache else endpoint.cost(reply.tokens_in, reply.tokens_out)

    @transaction.atomic
    def _store(self, finished: Sequence[tuple[Outcome, dict[str, Any] | None, str]]) -> None:
        ids = [o.work.unit.pk for o, _, _ in finished]
        owned = set(
            Unit.objects.select_for_update()
            .filter(id__in=ids, claim_token=self.token, status=UnitStatus.IN_FLIGHT)
            .values_list("id", flat=True)
        )
        calls = self._cache_replies([(o, r) for o, r, _ in finished if r is not None])
        now = timezone.now()
        done: list[Done] = []
        units: list[Unit] = []
        tokens_in = tokens_out = 0
        cost = 0.0
        for outcome, result, invalid in finished:
            unit, reply = outcome.work.unit, outcome.reply
            if reply is not None and not reply.from_cache:
                tokens_in += reply.tokens_in
                tokens_out += reply.tokens_out
                cost += self._cost_of(reply, self.endpoints[unit.endpoint_id])
            if unit.pk not in owned:
                continue  # our lease ran out and another executor took the unit over
            self._fill_unit(unit, outcome, result, invalid, calls.get(outcome.work.key), now)
            units.append(unit)
            if result is not None:
                done.append(Done(unit, result, outcome.answer, outcome.work.request, unit.call_id))
        if done:
            self.kind.store(self.run, done)
        _units_save_results(units)
        statuses = [unit.status for unit in units]
        transaction.on_commit(lambda: llm_units_finished(kind=self.run.kind, statuses=statuses))
        Run.objects.filter(pk=self.run_id).update(
            tokens_in=F("tokens_in") + tokens_in,
            tokens_out=F("tokens_out") + tokens_out,
            cost=F("cost") + cost,
        )

    def _fill_unit(
        self,
        unit: Unit,
        outcome: Outcome,
        result: dict[str, Any] | None,
        invalid: str,
        call_id: int | None,
        now: datetime,
    ) -> None:
        reply, work = outcome.reply, outcome.work
        unit.finished_at = now
        unit.claim_token = ""
        unit.lease_until = None
        unit.request_hash = work.key
        if result is not None:
            unit.status = UnitStatus.DONE
            unit.result = result
            unit.error = ""
        elif outcome.error is not None:
            error = outcome.error
            # A reply cut at the cap is the provider's answer, unusable: invalid, not failed.
            unit.status = UnitStatus.INVALID if error.kind == "too_large" else UnitStatus.FAILED
            unit.error = f"{error.kind}: {error}"
            _keep_raw(unit, _both(work, error.raw) if error.raw else work.first_raw, error.cut)
        else:
            unit.status = UnitStatus.INVALID
            first = f"first reply: {work.first_error}; " if work.first_raw else ""
            unit.error = f"{first}{'repair reply' if work.first_raw else 'reply'}: {invalid}"
            _keep_raw(unit, _both(work, outcome.answer.text), False)
        if reply is not None:
            endpoint = self.endpoints[unit.endpoint_id]
            unit.from_cache = reply.from_cache
            unit.call_id = call_id
            unit.tokens_in, unit.tokens_out = reply.tokens_in, reply.tokens_out
            unit.cost = self._cost_of(reply, endpoint)
            unit.ttft_ms = None if reply.from_cache else reply.ttft_ms
            unit.latency_ms = None if reply.from_cache else reply.latency_ms

    def _cache_replies(self, parsed: list[tuple[Outcome, dict[str, Any]]]) -> dict[str, int]:
        """Store each valid new reply under its request key; return key -> CachedCall id."""
        fresh = [o for o, _ in parsed if not o.answer.from_cache]
        CachedCall.objects.bulk_create(
            [
                CachedCall(
                    key=o.work.key,
                    provider=self.configs[o.work.unit.endpoint_id].provider,
                    model=self.configs[o.work.unit.endpoint_id].model,
                    request=o.work.request.to_json(),
                    text=o.answer.text,
                    model_reported=o.answer.model_reported,
                    request_id=o.answer.request_id,
                    tokens_in=o.answer.tokens_in,
                    tokens_out=o.answer.tokens_out,
                    ttft_ms=o.answer.ttft_ms,
                    latency_ms=o.answer.latency_ms,
                )
                for o in fresh
            ],
            ignore_conflicts=True,
        )
        keys = [o.work.key for o, _ in parsed]
        return dict(CachedCall.objects.filter(key__in=keys).values_list("key", "id"))


def _both(work: Work, text: str) -> str:
    """The raw reply as kept: after a repair, the first reply and the repair reply."""
    if not work.first_raw:
        return text
    return f"{work.first_raw}\n\n--- repair reply ---\n\n{text}"


def _keep_raw(unit: Unit, raw: str, cut: bool) -> None:
    """Keep the first LLM_RAW_REPLY_KEEP_CHARS of a raw reply, with its full length and hash."""
    keep = int(getattr(settings, "LLM_RAW_REPLY_KEEP_CHARS", 20_000))
    unit.raw_reply = raw[:keep]
    unit.raw_reply_chars = len(raw)
    unit.raw_reply_sha256 = hashlib.sha256(raw.encode()).hexdigest() if raw else ""
    unit.raw_reply_cut = cut


UNIT_RESULT_FIELDS = [
    "status",
    "result",
    "error",
    "raw_reply",
    "raw_reply_chars",
    "raw_reply_sha256",
    "raw_reply_cut",
    "finished_at",
    "claim_token",
    "lease_until",
    "request_hash",
    "repairs",
    "from_cache",
    "call",
    "tokens_in",
    "tokens_out",
    "cost",
    "ttft_ms",
    "latency_ms",
]


# PostgreSQL: one UPDATE ... FROM jsonb_to_recordset(...) for a batch of units. Django's
# bulk_update builds a CASE expression per field and unit, which cost more CPU than the calls.
_PG_UPDATE = """
UPDATE llm_unit AS u SET status = v.status, result = v.result, error = v.error,
    raw_reply = v.raw_reply, raw_reply_chars = v.raw_reply_chars,
    raw_reply_sha256 = v.raw_reply_sha256, raw_reply_cut = v.raw_reply_cut,
    finished_at = v.finished_at, claim_token = '', lease_until = NULL,
    request_hash = v.request_hash, repairs = v.repairs, from_cache = v.from_cache,
    call_id = v.call_id, tokens_in = v.tokens_in, tokens_out = v.tokens_out, cost = v.cost,
    ttft_ms = v.ttft_ms, latency_ms = v.latency_ms
FROM jsonb_to_recordset(%s::jsonb) AS v(id bigint, status text, result jsonb, error text,
    raw_reply text, raw_reply_chars integer, raw_reply_sha256 text, raw_reply_cut boolean,
    finished_at timestamptz, request_hash text, repairs integer,
    from_cache boolean, call_id bigint, tokens_in integer, tokens_out integer,
    cost double precision, ttft_ms double precision, latency_ms double precision)
WHERE u.id = v.id
"""


def _units_save_results(units: list[Unit]) -> None:
    if not units:
        return
    if connection.vendor != "postgresql":
        Unit.objects.bulk_update(units, UNIT_RESULT_FIELDS)
        return
    rows = [
        {
            "id": u.pk,
            "status": u.status,
            "result": u.result,
            "error": u.error,
            "raw_reply": u.raw_reply,
            "raw_reply_chars": u.raw_reply_chars,
            "raw_reply_sha256": u.raw_reply_sha256,
            "raw_reply_cut": u.raw_reply_cut,
            "finished_at": u.finished_at.isoformat() if u.finished_at else None,
            "request_hash": u.request_hash,
            "repairs": u.repairs,
            "from_cache": u.from_cache,
            "call_id": u.call_id,
            "tokens_in": u.tokens_in,
            "tokens_out": u.tokens_out,
            "cost": u.cost,
            "ttft_ms": u.ttft_ms,
            "latency_ms": u.latency_ms,
        }
        for u in units
    ]
    with connection.cursor() as cursor:
        cursor.execute(_PG_UPDATE, [json.dumps(rows)])


def _gone() -> CallError:
    return CallError("build", "the unit's target no longer exists (deleted?)")


def reply_from_cache(call: CachedCall) -> LLMReply:
    """A stored call as the reply it was (the executor's and the batches' cache hits)."""
    return LLMReply(
        text=call.text,
        tokens_in=call.tokens_in,
        tokens_out=call.tokens_out,
        model_reported=call.model_reported,
        request_id=call.request_id,
        finish_reason="cached",
        from_cache=True,
    )


def run_execute(run_id: int, *, slice_s: float | None = None) -> str:
    """Work on a run (see Executor); safe to call from several processes at once."""
    return Executor(run_id, slice_s=slice_s).execute()
