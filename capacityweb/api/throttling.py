"""API throttles: DRF's scoped rates, counted with one atomic increment per request.

DRF's ``SimpleRateThrottle`` reads the client's request history (a list of
timestamps) from the cache, appends and writes it back. Under concurrent
requests that is a race — several web workers read the same history and each
lets its request through — and the value grows with the rate (60,000 floats
pickled both ways per request at 1,000/minute). Here each (scope, client,
window) has one integer counter in the cache; one Redis INCR (``count`` of
capacityweb.cache.SharedRedisCache) or ``incr`` under the local-memory cache's
lock is atomic, so N concurrent requests count N and the N+1st gets 429.

A fixed window lets at most twice the rate through across one window boundary;
``wait()`` (the Retry-After header) is the time left in the current window. That
is accepted for the high rates (``writes``, ``reports``), not for the scopes in
SLIDING_WINDOW_SCOPES (``test-sends``: 5 an hour, each a mail or a post): there
the cache keeps the times of the requests let through in the last ``duration``
seconds (a Redis sorted set pruned and counted in one script, or a list under a
lock in the local-memory cache), so no ``duration`` seconds anywhere hold more
than the rate; ``wait()`` is when the oldest of them leaves the window.

Users named in THROTTLE_EXEMPT_USERNAMES are never throttled: service accounts
such as the schema fuzzer of tests/api/test_schema.py, whose requests would
otherwise be mostly 429s.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

from django.conf import settings
from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle


def exempt(user: Any) -> bool:
    """A user THROTTLE_EXEMPT_USERNAMES names (a service account): no rate applies."""
    return bool(user and user.is_authenticated) and (
        user.get_username() in settings.THROTTLE_EXEMPT_USERNAMES
    )


SLIDING_WINDOW_SCOPES = frozenset({"test-sends"})
_local_log_lock = threading.Lock()  # the local-memory cache is per process: so is its lock


def local_sliding_log(
    cache: Any, key: str, *, now: float, window: float, limit: int
) -> tuple[bool, float]:
    """(allowed, oldest time still in the window) with the times kept as a list in
    ``cache`` (the local-memory cache: no Redis); this request's time added if allowed."""
    with _local_log_lock:
        times = [t for t in cache.get(key, []) if t > now - window]
        allowed = len(times) < limit
        if allowed:
            times.append(now)
        cache.set(key, times, timeout=int(window) + 1)
    return allowed, min(times, default=now)


class WindowCounterThrottle(SimpleRateThrottle):
    """SimpleRateThrottle's rate and cache key, counted per fixed window, or in a
    sliding window for the scopes in SLIDING_WINDOW_SCOPES (module docstring)."""

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None or exempt(request.user):
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        self.now = self.timer()
        if getattr(self, "scope", None) in SLIDING_WINDOW_SCOPES:
            return self._allow_in_sliding_window(f"{key}_log")
        window = int(self.now // self.duration)
        self.window_end = (window + 1) * self.duration
        counter = f"{key}_w{window}"
        return self._count(counter) <= self.num_requests

    def _count(self, counter: str) -> int:
        """Add this request to the counter and return its value (atomic in the cache)."""
        count = getattr(self.cache, "count", None)  # capacityweb.cache.SharedRedisCache
        if count is not None:
            return int(count(counter, timeout=self.duration + 1))
        try:
            return int(self.cache.incr(counter))
        except ValueError:  # the window's first request: open its counter (+1 s: it outlives it)
            if self.cache.add(counter, 1, timeout=self.duration + 1):
                return 1
            return int(self.cache.incr(counter))  # another request opened it meanwhile

    def _allow_in_sliding_window(self, log: str) -> bool:
        """Fewer than the rate's requests in the last ``duration`` seconds: count this one."""
        arguments = {"now": self.now, "window": self.duration, "limit": self.num_requests}
        sliding_log = getattr(self.cache, "sliding_log", None)  # SharedRedisCache
        if sliding_log is not None:
            allowed, oldest = sliding_log(log, member=uuid.uuid4().hex, **arguments)
        else:
            allowed, oldest = local_sliding_log(self.cache, log, **arguments)
        self.window_end = oldest + self.duration
        return allowed

    def wait(self) -> float:
        return max(0.0, self.window_end - self.now)


class CountingScopedRateThrottle(ScopedRateThrottle, WindowCounterThrottle):
    """``throttle_scope`` of the view picks the rate (as ScopedRateThrottle); counted per window.

    ScopedRateThrottle.allow_request sets the scope and rate, then its ``super()``
    call reaches WindowCounterThrottle (method resolution order), not DRF's history.
    """


class ScopeOf:
    """What ScopedRateThrottle reads from a view: its ``throttle_scope``."""

    def __init__(self, scope: str) -> None:
        self.throttle_scope = scope


def allow_scoped(request: Any, scope: str) -> tuple[bool, float]:
    """Count a plain Django view's request against ``scope``'s rate, as the API's views
    are (the same counter per user): (allowed, seconds until the window ends)."""
    throttle = CountingScopedRateThrottle()
    allowed = throttle.allow_request(request, ScopeOf(scope))
    return allowed, (0.0 if allowed else throttle.wait())
