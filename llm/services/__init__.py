"""Writes of the LLM engine: endpoints, planning, starting, cancelling and retrying runs."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from .. import hosts, keys
from ..kinds import Plan, get_kind
from ..models import Endpoint, Provider, Run, RunStatus, Unit, UnitStatus

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from completions.models import Study

#: An endpoint's settings, in the order every form shows them (the studio's, the admin's).
ENDPOINT_FIELDS = (
    "label",
    "provider",
    "base_url",
    "model",
    "family",
    "api_key_env",
    "price_in",
    "price_out",
    "max_concurrency",
    "timeout_s",
    "max_retries",
    "is_demo",
)


RUN_TASK = "llm.tasks.llm_run_execute"


class EndpointError(ValueError):
    """Bad endpoint settings: the message says which and why (`field`: the form field)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


_KEEP: Any = object()


def endpoint_check(
    *, provider: str, base_url: str, api_key_env: str, study_id: int | None, resolve: bool = True
) -> None:
    """The rules every endpoint obeys, however it is saved (form, API, CLI, Django admin):
    an allowed host; a key variable only on a shared endpoint, and only one the operator lists."""
    if problem := hosts.base_url_problem(provider, base_url, resolve=resolve):
        raise EndpointError(f"base URL refused: {problem}", field="base_url")
    if not api_key_env:
        return
    if study_id is not None:
        raise EndpointError(
            "key variables are for shared endpoints set up by the operator: enter this "
            "endpoint's own API key instead",
            field="api_key_env",
        )
    if problem := keys.key_env_problem(api_key_env):
        raise EndpointError(problem, field="api_key_env")


def endpoint_upsert(
    *, name: str, study: Any = _KEEP, api_key: str | None = None, **fields: Any
) -> tuple[Endpoint, bool]:
    """Create or update the endpoint called `name` (None values keep the current setting).

    `study`: the owning study, None for a shared endpoint (a new endpoint is shared unless
    told). `api_key`: a key to store encrypted (it replaces a key variable); "" removes the
    stored key."""
    fields = {k: v for k, v in fields.items() if v is not None}
    unknown = set(fields) - set(ENDPOINT_FIELDS)
    if unknown:
        raise EndpointError(f"unknown endpoint settings: {', '.join(sorted(unknown))}")
    if "provider" in fields and fields["provider"] not in Provider.values:
        raise EndpointError(f"provider must be one of {', '.join(Provider.values)}")
    if fields.get("max_concurrency", 1) < 1:
        raise EndpointError("max concurrency must be at least 1")
    if min(fields.get("price_in", 0), fields.get("price_out", 0)) < 0:
        raise EndpointError("prices cannot be negative")
    endpoint = Endpoint.objects.filter(name=name).first()
    created = endpoint is None
    if created:
        missing = [f for f in ("provider", "model", "family") if not fields.get(f)]
        if missing:
            raise EndpointError(f"a new endpoint needs {', '.join(missing)}")
        endpoint = Endpoint(name=name)
    assert endpoint is not None  # found above, or made just now
    for key, value in fields.items():
        setattr(endpoint, key, value)
    if study is not _KEEP:
        endpoint.study = study
    if api_key and fields.get("api_key_env"):
        raise EndpointError("give either an API key or a key variable, not both", field="api_key")
    if fields.get("api_key_env"):
        endpoint.api_key_encrypted = endpoint.api_key_hint = ""  # one source of key
    if api_key is not None:
        _endpoint_key_set(endpoint, api_key)
    endpoint_check(
        provider=endpoint.provider,
        base_url=endpoint.base_url,
        api_key_env=endpoint.api_key_env,
        study_id=endpoint.study_id,
    )
    endpoint.full_clean()
    endpoint.save()
    return endpoint, created


def _endpoint_key_set(endpoint: Endpoint, api_key: str) -> None:
    if not api_key:
        endpoint.api_key_encrypted = endpoint.api_key_hint = ""
        return
    if problem := keys.key_problem(api_key):
        raise EndpointError(problem, field="api_key")
    try:
        endpoint.api_key_encrypted = keys.key_encrypt(api_key)
    except keys.KeyUnavailable as exc:
        raise EndpointError(str(exc), field="api_key") from None
    endpoint.api_key_hint = keys.key_hint(api_key)
    endpoint.api_key_env = ""  # one source of key: the stored one


def endpoint_key_problem(endpoint: Endpoint) -> str | None:
    """Why calls to this endpoint cannot authenticate or reach their host here, or None."""
    if endpoint.api_key_encrypted:
        if not keys.can_store_keys():
            return f"endpoint {endpoint} has a stored key but LLM_KEY_ENCRYPTION_KEY is not set"
    elif endpoint.api_key_env:
        if problem := keys.key_env_problem(endpoint.api_key_env):
            return f"endpoint {endpoint}: {problem}"
        if not os.environ.get(endpoint.api_key_env):
            return f"environment variable {endpoint.api_key_env} is not set for endpoint {endpoint}"
    if problem := hosts.base_url_problem(endpoint.provider, endpoint.base_url, resolve=False):
        return f"endpoint {endpoint}: {problem}"
    return None


def endpoints_check_usable(*, study: Study, endpoints: Iterable[Endpoint]) -> None:
    """An endpoint serves the study that owns it, or every study when shared."""
    for endpoint in endpoints:
        if endpoint.study_id not in (None, study.pk):
            raise EndpointError(f"unknown endpoint: {endpoint.name}", field="endpoints")


#: Source contexts an adversarial run rewrites when the launcher does not say.
ADVERSARIAL_CONTEXTS = 20


def run_params(
    kind: str, *, batch: bool = False, profile: str = "", contexts: int | None = None
) -> dict[str, Any]:
    """A run's parameters beyond kind and endpoints, as the LLM page and the API launch it."""
    params: dict[str, Any] = {"batch_requested": True} if batch else {}
    if kind == "adversarial":
        params.update(profile=profile, contexts=contexts or ADVERSARIAL_CONTEXTS, seed=0)
    return params


@transaction.atomic
def run_plan(
    *,
    study: Study,
    kind: str,
    endpoints: Iterable[Endpoint],
    params: dict[str, Any] | None = None,
    budget_usd: float | None = None,
    user: User | None = None,
) -> Run:
    """Create a run and its units with the plan (units, tokens, cost) before anything is sent."""
    run_kind = get_kind(kind)
    endpoints = list(endpoints)
    if not endpoints:
        raise EndpointError("choose at least one endpoint")
    endpoints_check_usable(study=study, endpoints=endpoints)
    if budget_usd is not None and budget_usd <= 0:
        raise EndpointError("the budget must be a positive amount of USD")
    run = Run.objects.create(
        study=study, kind=kind, params=params or {}, budget_usd=budget_usd, created_by=user
    )
    run.endpoints.set(endpoints)
    plan = run_kind.plan(run)
    Unit.objects.bulk_create(
        [
            Unit(run=run, key=u.key, endpoint_id=u.endpoint_id, payload=u.payload)
            for u in plan.units
        ],
        batch_size=2000,
    )
    run.plan = _plan_summary(plan, endpoints)
    run.save(update_fields=["plan"])
    return run


def _plan_summary(plan: Plan, endpoints: list[Endpoint]) -> dict[str, Any]:
    by_endpoint: dict[int, dict[str, Any]] = {
        e.pk: {"name": e.name, "units": 0, "est_tokens_in": 0, "est_tokens_out": 0}
        for e in endpoints
    }
    for unit in plan.units:
        row = by_endpoint[unit.endpoint_id]
        row["units"] += 1
        row["est_tokens_in"] += unit.est_tokens_in
        row["est_tokens_out"] += unit.est_tokens_out
    for e in endpoints:
        row = by_endpoint[e.pk]
        row["est_cost"] = round(e.cost(row["est_tokens_in"], row["est_tokens_out"]), 6)
    rows = list(by_endpoint.values())
    total = sum(r["est_cost"] for r in rows)
    n = len(plan.units)
    return {
        **plan.summary,
        "units": n,
        "est_tokens_in": sum(r["est_tokens_in"] for r in rows),
        "est_tokens_out": sum(r["est_tokens_out"] for r in rows),
        "est_cost": round(total, 6),
        "est_cost_per_unit": total / n if n else 0.0,
        "endpoints": rows,
    }


def run_start(*, run: Run, dispatch: bool = True) -> bool:
    """Planned -> running, then (unless the caller executes it itself) hand it to a worker
    once the transaction commits."""
    changed = Run.objects.filter(pk=run.pk, status=RunStatus.PLANNED).update(
        status=RunStatus.RUNNING, started_at=timezone.now()
    )
    if changed and dispatch:
        transaction.on_commit(lambda: run_dispatch(run_id=run.pk))
    return bool(changed)


def runs_execute_inline() -> bool:
    """True where no worker exists (eager Celery): a CLI runs the executor itself."""
    return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))


def run_dispatch(*, run_id: int) -> None:
    """Queue the run on the `llm` queue; in the embedded default (eager Celery) run it on a
    background thread so that the page that launched it can show its progress."""
    from core.enqueue import enqueue

    eager = getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False)
    if eager and getattr(settings, "LLM_EAGER_THREAD", True):
        threading.Thread(target=_execute_in_thread, args=(run_id,), daemon=True).start()
    else:
        # Several executors may share a run (each takes its share of the endpoint's slots),
        # so one run's client-side CPU spreads over the worker's processes. With the broker
        # down the outbox keeps them (the run stays "running" and starts once it is back).
        for _ in range(max(1, int(getattr(settings, "LLM_EXECUTORS_PER_RUN", 1)))):
            enqueue(RUN_TASK, run_id)


def _execute_in_thread(run_id: int) -> None:
    from ..executor import run_execute

    try:
        run_execute(run_id)
    finally:
        connection.close()  # this thread's own connection


def run_cancel(*, run: Run) -> bool:
    """Stop claiming new units; calls already in flight finish and are kept (they are paid)."""
    return bool(
        Run.objects.filter(
            pk=run.pk, status__in=[RunStatus.PLANNED, RunStatus.RUNNING, RunStatus.BUDGET]
        ).update(status=RunStatus.CANCELLED, finished_at=timezone.now())
    )


@transaction.atomic
def run_retry_failed(*, run: Run) -> int:
    """Re-queue only the failed and invalid units; returns how many."""
    n = Unit.objects.filter(run=run, status__in=[UnitStatus.FAILED, UnitStatus.INVALID]).update(
        status=UnitStatus.PENDING, repairs=0, claim_token="", lease_until=None
    )
    if n:
        run_resume(run=run)
    return n


def run_resume(*, run: Run, budget_usd: float | None = None) -> None:
    """Set a stopped (cancelled, budget, finished) run running again on what is left."""
    fields: dict[str, Any] = {"status": RunStatus.RUNNING, "finished_at": None}
    if budget_usd is not None:
        fields["budget_usd"] = budget_usd
    Run.objects.filter(pk=run.pk).exclude(status=RunStatus.PLANNED).update(**fields)
    transaction.on_commit(lambda: run_dispatch(run_id=run.pk))


def runs_resume_stalled() -> list[int]:
    """Queue every running run again (after a worker restart): an executor that finds others
    still working shares the units with them; one whose units are gone just finishes."""
    ids = list(Run.objects.filter(status=RunStatus.RUNNING).values_list("id", flat=True))
    for run_id in ids:
        run_dispatch(run_id=run_id)
    return ids
