"""Batch mode for LLM runs: submit a run's units to the provider's batch API, poll, ingest.

- `batch_run_start(run)`: a planned judge, generate or label run starts in batch mode: a task
  submits one provider batch per endpoint (units claimed with the batch's token and a lease
  longer than the providers' 24 h window, so no normal executor takes them meanwhile). Units
  whose request is in the call cache are answered at once and never sent.
- `batches_poll()` (Celery beat): looks at every submitted batch; an ended one is ingested:
  each reply is parsed by the run kind and stored exactly as the normal path would (same
  cache, same unit fields), at batch prices (LLM_BATCH_PRICE_FACTOR, 0.5); errored, expired,
  missing and schema-breaking requests go back to the normal path (their units become
  pending and the run is dispatched again, where the usual retry and repair apply).
- A batch reply has no time to first token: generation in batch mode records none.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.structured import InvalidReply

from ..clients import LLMReply, reply_max_chars
from ..executor import Executor, Outcome, Work, endpoint_config, reply_from_cache
from ..kinds import get_kind
from ..models import (
    BatchStatus,
    CachedCall,
    Endpoint,
    ProviderBatch,
    Run,
    RunStatus,
    Unit,
    UnitStatus,
)
from . import run_dispatch

if TYPE_CHECKING:  # the provider SDKs load in the worker that submits and polls, not in pages
    from .. import batch_providers as providers

log = logging.getLogger(__name__)

BATCH_KINDS = ("judge", "generate", "label")
# Celery task names (llm/tasks.py): those of the former `llm_batch` app, so a task queued before
# an upgrade still finds its function.
BATCH_SUBMIT_TASK = "llm.batch.tasks.llm_batch_submit"
BATCH_POLL_TASK = "llm.batch.tasks.llm_batches_poll"
#: Longer than the providers' 24-hour completion window: an executor never takes these units
#: while their batch is out; if the poller is gone for longer, the normal path takes over.
BATCH_LEASE = timedelta(hours=25)


class BatchError(ValueError):
    pass


def batch_run_start(*, run: Run, submit: bool = True) -> bool:
    """Planned -> running in batch mode; the submission task runs once the transaction
    commits (unless the caller submits itself: the CLI in the embedded default)."""
    if run.kind not in BATCH_KINDS:
        raise BatchError(f"batch mode is for {', '.join(BATCH_KINDS)} runs, not {run.kind!r}")
    changed = Run.objects.filter(pk=run.pk, status=RunStatus.PLANNED).update(
        status=RunStatus.RUNNING,
        started_at=timezone.now(),
        params={**run.params, "batch": True},
    )
    if changed and submit:
        from core.enqueue import enqueue

        transaction.on_commit(lambda: enqueue(BATCH_SUBMIT_TASK, run.pk))
    return bool(changed)


class BatchIngest(Executor):
    """The executor's storing path, for replies that came back from a batch."""

    def __init__(self, run_id: int, token: str) -> None:
        super().__init__(run_id)
        self.token = token
        self.price_factor = float(getattr(settings, "LLM_BATCH_PRICE_FACTOR", 0.5))
        self.max_chars = reply_max_chars(self.run.kind)

    def _cost_of(self, reply: LLMReply, endpoint: Endpoint) -> float:
        return (
            0.0
            if reply.from_cache
            else self.price_factor * endpoint.cost(reply.tokens_in, reply.tokens_out)
        )

    def store_replies(self, works: list[Work], replies: dict[str, LLMReply]) -> list[int]:
        """Parse and store; returns the unit ids to route back (no reply, or invalid)."""
        finished, back = [], []
        for work in works:
            reply = replies.get(work.key)
            if reply is None or len(reply.text) > self.max_chars:
                back.append(work.unit.pk)  # the normal path (and its cap) takes it
                continue
            try:
                finished.append(
                    (Outcome(work, reply=reply), self.kind.parse(work.unit, reply.text), "")
                )
            except InvalidReply:
                self._account(reply, self.endpoints[work.unit.endpoint_id])  # paid all the same
                back.append(work.unit.pk)
        if finished:
            self._store(finished)
        return back


def _claim(run: Run, endpoint: Endpoint, batch: ProviderBatch) -> list[Unit]:
    with transaction.atomic():
        ids = list(
            Unit.objects.select_for_update(skip_locked=True)
            .filter(run=run, endpoint=endpoint, status=UnitStatus.PENDING)
            .values_list("id", flat=True)
        )
        Unit.objects.filter(id__in=ids, status=UnitStatus.PENDING).update(
            status=UnitStatus.IN_FLIGHT,
            claim_token=batch.claim_token,
            lease_until=timezone.now() + BATCH_LEASE,
            attempts=F("attempts") + 1,
        )
    units = list(Unit.objects.filter(id__in=ids, claim_token=batch.claim_token).order_by("id"))
    for unit in units:
        unit.run, unit.endpoint = run, endpoint
    return units


def _works(run: Run, units: list[Unit]) -> tuple[list[Work], list[int]]:
    """The units' requests and cache keys; ids of units whose target is gone."""
    if not units:
        return [], []
    config = endpoint_config(units[0].endpoint)
    requests = get_kind(run.kind).build_requests(units)
    works = [
        Work(u, requests[u.pk], requests[u.pk].cache_key(config)) for u in units if u.pk in requests
    ]
    return works, [u.pk for u in units if u.pk not in requests]


def _route_back(batch: ProviderBatch, unit_ids: list[int]) -> int:
    return Unit.objects.filter(
        id__in=unit_ids, claim_token=batch.claim_token, status=UnitStatus.IN_FLIGHT
    ).update(status=UnitStatus.PENDING, claim_token="", lease_until=None)


def batches_submit(*, run_id: int) -> list[ProviderBatch]:
    """One provider batch per endpoint with pending units (cache hits answered at once)."""
    run = Run.objects.select_related("study").get(pk=run_id)
    made = []
    for endpoint in run.endpoints.order_by("name"):
        if not Unit.objects.filter(run=run, endpoint=endpoint, status=UnitStatus.PENDING).exists():
            continue
        batch = ProviderBatch.objects.create(run=run, endpoint=endpoint, provider=endpoint.provider)
        made.append(_submit_one(run, endpoint, batch))
    if any(b.status == BatchStatus.FAILED for b in made) or not made:
        transaction.on_commit(lambda: run_dispatch(run_id=run.pk))
    return made


def _submit_one(run: Run, endpoint: Endpoint, batch: ProviderBatch) -> ProviderBatch:
    from .. import batch_providers as providers

    works, gone = _works(run, _claim(run, endpoint, batch))
    _route_back(batch, gone)  # the normal path fails them plainly
    cached = {c.key: c for c in CachedCall.objects.filter(key__in=[w.key for w in works])}
    hits = [w for w in works if w.key in cached]
    if hits:
        ingest = BatchIngest(run.pk, batch.claim_token)
        ingest.store_replies(hits, {k: reply_from_cache(c) for k, c in cached.items()})
    to_send = [w for w in works if w.key not in cached]
    by_key: dict[str, list[int]] = defaultdict(list)
    for work in to_send:
        by_key[work.key].append(work.unit.pk)
    batch.n_from_cache = len(hits)
    if not by_key:
        batch.status = BatchStatus.INGESTED
        batch.save()
        return batch
    try:
        batch.provider_batch_id, batch.input_file_id = providers.submit(
            endpoint_config(endpoint), {w.key: w.request for w in to_send}
        )
    except Exception as exc:  # any SDK or config error: the normal path does the work instead
        log.warning("batch submission for run %s failed: %s", run.pk, exc)
        batch.status, batch.error = BatchStatus.FAILED, f"submission failed: {exc}"
        batch.n_routed_back = _route_back(batch, [w.unit.pk for w in to_send])
        batch.save()
        return batch
    for work in to_send:
        work.unit.request_hash = work.key
    Unit.objects.bulk_update([w.unit for w in to_send], ["request_hash"])
    Unit.objects.filter(id__in=[w.unit.pk for w in to_send]).update(sends=F("sends") + 1)
    batch.requests, batch.n_requests = dict(by_key), len(by_key)
    batch.status, batch.provider_status = BatchStatus.SUBMITTED, "submitted"
    batch.save()
    return batch


def batches_pending(run: Run) -> bool:
    return ProviderBatch.objects.filter(run=run, status=BatchStatus.SUBMITTED).exists()


def batches_poll(*, run: Run | None = None, dispatch: bool = True) -> list[int]:
    """Look at every submitted batch (of ``run``, or all); ingest those that ended and hand
    their runs back to the normal path (unless the caller executes the run itself)."""
    ingested = []
    batches = ProviderBatch.objects.filter(status=BatchStatus.SUBMITTED).select_related("endpoint")
    if run is not None:
        batches = batches.filter(run=run)
    for batch in batches:
        try:
            if batch_poll(batch=batch, dispatch=dispatch):
                ingested.append(batch.pk)
        except Exception as exc:  # one provider's outage must not stop the others' polling
            log.warning("polling %s failed: %s", batch, exc)
            ProviderBatch.objects.filter(pk=batch.pk).update(
                checked_at=timezone.now(), error=f"poll failed: {exc}"
            )
    return ingested


def batch_poll(*, batch: ProviderBatch, dispatch: bool = True) -> bool:
    from .. import batch_providers as providers

    config = endpoint_config(batch.endpoint)
    seen = providers.look(config, batch.provider_batch_id)
    batch.provider_status, batch.checked_at = seen.status, timezone.now()
    if not seen.ended:
        batch.save(update_fields=["provider_status", "checked_at"])
        return False
    results = providers.results(config, batch.provider_batch_id)
    batch_ingest(batch=batch, results=results, dispatch=dispatch)
    return True


def batch_ingest(
    *, batch: ProviderBatch, results: list[providers.BatchResult], dispatch: bool = True
) -> None:
    """Store what succeeded; everything else goes back to the normal path."""
    if not ProviderBatch.objects.filter(pk=batch.pk, status=BatchStatus.SUBMITTED).update(
        status=BatchStatus.INGESTED
    ):
        return  # another poller got there first
    batch.status = BatchStatus.INGESTED
    run = batch.run
    units = list(
        Unit.objects.filter(claim_token=batch.claim_token, status=UnitStatus.IN_FLIGHT).order_by(
            "id"
        )
    )
    for unit in units:
        unit.run, unit.endpoint = run, batch.endpoint
    works, gone = _works(run, units)
    replies = {r.custom_id: r.reply for r in results if r.reply is not None}
    back = BatchIngest(run.pk, batch.claim_token).store_replies(works, replies) + gone
    batch.n_routed_back = _route_back(batch, back)
    batch.n_succeeded = sum(1 for r in results if r.reply is not None)
    batch.ended_at = timezone.now()
    batch.save()
    # The normal path takes what came back, then finishes the run (on_finish included).
    if dispatch:
        transaction.on_commit(lambda: run_dispatch(run_id=run.pk))
