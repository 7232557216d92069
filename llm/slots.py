"""The per-endpoint concurrency limit across every worker and process: N slot rows in PostgreSQL.

A process takes free slots with `SELECT ... FOR UPDATE SKIP LOCKED` and a conditional update,
and holds each with a lease it renews while working. A killed process's slots come back when
their lease runs out; nothing else (no lock service, no Redis key) is involved. Each call in
flight holds one slot, so at most `max_concurrency` calls run at once for an endpoint.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .models import Endpoint, EndpointSlot


def slots_sync(endpoint: Endpoint) -> None:
    """Make the slot rows match `max_concurrency` (extra rows go once nobody holds them)."""
    have = set(EndpointSlot.objects.filter(endpoint=endpoint).values_list("index", flat=True))
    missing = [i for i in range(endpoint.max_concurrency) if i not in have]
    EndpointSlot.objects.bulk_create(
        [EndpointSlot(endpoint=endpoint, index=i) for i in missing], ignore_conflicts=True
    )
    EndpointSlot.objects.filter(
        Q(holder="") | Q(lease_until__lt=timezone.now()),
        endpoint=endpoint,
        index__gte=endpoint.max_concurrency,
    ).delete()


def slots_acquire(endpoint: Endpoint, *, holder: str, want: int, lease_s: float) -> int:
    """Take up to `want` free slots for `holder`; returns how many it now holds in all."""
    now = timezone.now()
    if want > 0:
        with transaction.atomic():
            free = list(
                EndpointSlot.objects.select_for_update(skip_locked=True)
                .filter(Q(holder="") | Q(lease_until__lt=now), endpoint=endpoint)
                .filter(index__lt=endpoint.max_concurrency)
                .order_by("index")
                .values_list("id", flat=True)[:want]
            )
            EndpointSlot.objects.filter(Q(holder="") | Q(lease_until__lt=now), id__in=free).update(
                holder=holder, lease_until=now + timedelta(seconds=lease_s)
            )
    return EndpointSlot.objects.filter(endpoint=endpoint, holder=holder).count()


def slots_renew(*, holder: str, lease_s: float) -> None:
    EndpointSlot.objects.filter(holder=holder).update(
        lease_until=timezone.now() + timedelta(seconds=lease_s)
    )


def slots_release(*, holder: str, endpoint: Endpoint | None = None, keep: int = 0) -> None:
    """Give back a holder's slots (all of them, or all but `keep` of one endpoint's)."""
    held = EndpointSlot.objects.filter(holder=holder)
    if endpoint is not None:
        held = held.filter(endpoint=endpoint)
    ids = list(held.order_by("-index").values_list("id", flat=True))
    ids = ids[: max(0, len(ids) - keep)]
    EndpointSlot.objects.filter(id__in=ids, holder=holder).update(holder="", lease_until=None)
