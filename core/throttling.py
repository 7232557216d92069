"""The API's per-user and per-address rate limits, counted atomically.

DRF's own throttles read a client's list of request times from the cache, append one and write
it back: requests in parallel each read the same list and each pass, so 8 threads got 1,300
answers in 32 s against a limit of 1,200 a minute. Here the check and the count are one step:

- on Redis (REDIS_URL set), one Lua script trims a sorted set of the client's request times to
  the window, counts it and adds this request only if there is room. Redis runs a script
  whole, so no two requests can both take the last place, whatever the number of web
  processes and threads;
- on a per-process cache (the embedded default, without Redis), a lock around DRF's own
  read-modify-write does the same within the process, which is all that cache is shared by.

The window slides (the last `duration` seconds), as DRF's does. If Redis cannot be reached the
request is let through, as every other cache use here degrades (Redis is a cache, never a
dependency).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from django.core.cache import cache
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

# KEYS[1]: the client's request log. ARGV: now (ms), window (ms), limit, a unique member.
# Returns 0 when the request is counted, else the milliseconds until a place frees.
TAKE_A_PLACE = """
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
    redis.call('ZADD', KEYS[1], now, ARGV[4])
    redis.call('PEXPIRE', KEYS[1], window)
    return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
"""
_LOCAL = threading.Lock()


def _redis() -> Any | None:
    """The default cache's Redis client, or None when the cache is not Redis."""
    client = getattr(cache, "client", None)
    get_client = getattr(client, "get_client", None)
    return get_client(write=True) if get_client is not None else None


def take_a_place(key: str, limit: int, duration: float) -> float | None:
    """Count one request under `key` if fewer than `limit` were counted in the last `duration`
    seconds: None if counted, else the seconds to wait."""
    client = _redis()
    if client is None:
        return _take_locally(key, limit, duration)
    from redis.exceptions import RedisError

    now_ms = int(time.time() * 1000)
    try:
        script = client.register_script(TAKE_A_PLACE)
        wait_ms = int(
            script(
                keys=[cache.make_key(key)],
                args=[now_ms, int(duration * 1000), limit, f"{now_ms}-{uuid.uuid4().hex}"],
            )
        )
    except RedisError:
        return None  # Redis away: let the request through, as every cache use here does
    return None if wait_ms == 0 else wait_ms / 1000


def _take_locally(key: str, limit: int, duration: float) -> float | None:
    with _LOCAL:
        now = time.time()
        history = [t for t in cache.get(key, []) if t > now - duration]
        if len(history) >= limit:
            return max(0.001, float(min(history)) + duration - now)
        cache.set(key, [now, *history], duration)  # newest first, as DRF keeps it
        return None


class AtomicRateMixin(SimpleRateThrottle):
    """allow_request() as DRF's, with the check and the count done in one atomic step; the
    key (user or address) and the rate are the throttle class's own."""

    num_requests: int  # set by SimpleRateThrottle.__init__ from the rate
    duration: int
    _wait: float | None = None

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self._wait = take_a_place(self.key, self.num_requests, self.duration)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class UserRateLimit(AtomicRateMixin, UserRateThrottle):
    """Per signed-in user (token or session), else per address: the scope `user`."""


class AnonRateLimit(AtomicRateMixin, AnonRateThrottle):
    """Per address for requests without a user: the scope `anon`."""
