"""Users on teams, token-authenticated API clients, and the throttle counters reset per test."""

from __future__ import annotations

import pytest
from builders import make_user, token_client


@pytest.fixture(autouse=True)
def fresh_throttle_counters(monkeypatch):
    """Throttle counters live in the cache; each test starts with none, and the throttle's
    clock stands still, so a burst never straddles two rate windows (minutes)."""
    from django.core.cache import cache

    from capacityweb.api.throttling import CountingScopedRateThrottle

    monkeypatch.setattr(CountingScopedRateThrottle, "timer", staticmethod(lambda: 1_800_000_000.0))
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def team_a_client(db):
    return token_client(make_user("alice", teams=("team-a",)))


@pytest.fixture
def team_b_client(db):
    return token_client(make_user("bob", teams=("team-b",)))


@pytest.fixture
def staff_client(db):
    return token_client(make_user("root", staff=True))


@pytest.fixture
def cluster(db):
    from topology.models import Cluster

    return Cluster.objects.create(name="prod-gpu", source_kind="files")
