"""The Redis cache backend: Django's, with one connection pool and client per process.

Django keeps a cache object per thread (``django.core.cache.caches``), and its
RedisCache builds a connection pool per object and a ``redis.Redis`` client per
operation. Under Django's own ASGI handler, which ran each request on a thread of
its own, every request opened a new TCP connection to Redis (and its RESP3
handshake) for the session read: a fifth of a page's CPU in bench.http; threads
that live longer (capacityweb.handlers, Celery, Channels' database threads) still
each paid one. redis-py's pools and clients are thread-safe; here they are shared
by every thread of the process, keyed by the servers and options.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.functional import cached_property

_clients: dict[str, RedisCacheClient] = {}
# SharedRedisCache.sliding_log: prune, count, add if under the limit, answer the oldest
# (as a string: Lua numbers come back to Redis as integers, truncated)
SLIDING_LOG_SCRIPT = """
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local allowed = 0
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  allowed = 1
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {allowed, oldest[2] or ARGV[1]}
"""
_clients_lock = threading.Lock()


def stable_digest(value: Any) -> str:
    """A short, stable name for a value (its ``repr``): cache keys and data versions."""
    return hashlib.sha256(repr(value).encode()).hexdigest()[:32]


class SharedClientRedisCacheClient(RedisCacheClient):
    """RedisCacheClient that makes one ``redis.Redis`` per pool instead of one per call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            with _clients_lock:
                client = self._clients.get(index)
                if client is None:
                    pool = self._get_connection_pool(write)
                    client = self._clients[index] = self._client(connection_pool=pool)
        return client


class SharedRedisCache(RedisCache):
    """Django's RedisCache whose client (and so its connection pools) is per process."""

    def count(self, key: str, timeout: int) -> int:
        """Add 1 to the counter at ``key`` and return it; a new counter starts at 1 and
        expires after ``timeout`` seconds. One atomic INCR (plus EXPIRE for a new one)."""
        key = self.make_and_validate_key(key)
        client = self._cache.get_client(key, write=True)
        value = int(client.incr(key))
        if value == 1:
            client.expire(key, timeout)
        return value

    def sliding_log(
        self, key: str, *, member: str, now: float, window: float, limit: int
    ) -> tuple[bool, float]:
        """Whether fewer than ``limit`` times in the sorted set at ``key`` are later than
        ``now - window`` (earlier ones removed); if so ``now`` is added (as ``member``).
        Returns (allowed, the oldest time left in the window). One atomic script."""
        key = self.make_and_validate_key(key)
        client = self._cache.get_client(key, write=True)
        allowed, oldest = client.eval(
            SLIDING_LOG_SCRIPT, 1, key, repr(now), repr(window), limit, member, int(window) + 1
        )
        return bool(allowed), float(oldest)

    @cached_property
    def _cache(self) -> RedisCacheClient:
        identity = repr((self._servers, sorted(self._options.items())))
        with _clients_lock:
            client = _clients.get(identity)
            if client is None:
                client = _clients[identity] = SharedClientRedisCacheClient(
                    self._servers, **self._options
                )
        return client
