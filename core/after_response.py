"""Work that must not delay a response: run once the response has been sent.

With eager Celery (the embedded demo, the unit tests) a task runs in the process that publishes
it. A refit queued by a page read would then run inside that request and the reader would wait
for it; `after_response(fn)` keeps such work out of the request: inside a request, `fn` runs when
Django signals that the response is finished (`request_finished`: the server has sent the body),
in the same thread; outside a request (a command, a test calling a service) it runs at once.

A failure is logged and never reaches the reader, who has their page already (a refit records
its own failure on its job).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.core.signals import request_finished, request_started
from django.db import connections

logger = logging.getLogger(__name__)
_local = threading.local()


def after_response(fn: Callable[[], object]) -> None:
    """Run ``fn`` after the current response has been sent, or now outside a request."""
    pending: list[Callable[[], object]] | None = getattr(_local, "pending", None)
    if pending is None:
        fn()
    else:
        pending.append(fn)


def in_request() -> bool:
    """Whether this thread is serving a request (so `after_response` would defer)."""
    return getattr(_local, "pending", None) is not None


def _started(**kwargs: Any) -> None:
    _local.pending = []


def _finished(**kwargs: Any) -> None:
    pending: list[Callable[[], object]] = getattr(_local, "pending", None) or []
    _local.pending = None  # work queued by this work runs at once
    for fn in pending:
        try:
            fn()
        except Exception:
            logger.exception("work after the response failed")
    if pending:
        _close_old_connections()


def _close_old_connections() -> None:
    """As Django does at the end of a request (the work may have opened a connection this
    thread keeps), except inside a transaction (a test's)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


request_started.connect(_started, dispatch_uid="core.after_response.started")
request_finished.connect(_finished, dispatch_uid="core.after_response.finished")
