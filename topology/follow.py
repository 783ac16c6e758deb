"""One ingester per cluster, reading its source again and again (``ingest --follow``).

::

    hold the cluster's IngestLock ──► read + store (services.ingest_from_source) ──┐
      │ held by another: stand by,      ok: next read after the interval, or as     │
      │ take over when it lapses        soon as a watch brings a change (+ debounce)│
      │                                 unreachable / refused: the previous snapshot│
      │                                 stays, next read after base·2ⁿ (≤ cap) s    │
      └──────────────────────── renew the lock ◄────────────────────────────────────┘

The lock is the one the worker's periodic ingest takes (``topology.tasks``), so a
follower and the worker never read the same cluster twice: while a follower renews
the lock, the worker's ingests find it held and skip; a follower started while another
ingester holds it stands by. The follower never gives up on an unreachable source:
the source keeps its stores and resourceVersions, and the retries are capped at
``INGEST_RETRY_CAP_SECONDS``.

A followed kube source keeps its watches open between reads (``topology.ingest.kubewatch``):
the follower reads ``INGEST_DEBOUNCE_SECONDS`` after the first change a watch brings
(a burst of events makes one snapshot), and otherwise every ``interval_seconds``, which
then only renews the lock and re-checks the kinds not served. What the last read parsed
and dumped is kept (``services.IngestCaches``), so a change costs what changed.
"""

from __future__ import annotations

import gc
import os
import random
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import reset_queries
from django.utils import timezone

from topology import services
from topology.ingest.sourceread import SourceError, SourceUnreachable
from topology.model.hardware import ModelError
from topology.models import Cluster, Snapshot


def holder_name(role: str) -> str:
    """Who holds a lock, as a conflict message names it: role, pid and host."""
    return f"{role} (pid {os.getpid()} on {socket.gethostname()})"


class LockHeld(Exception):
    """Another ingester is reading the cluster; the message names it."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for one pass, on again after it.

    A followed cluster's store and caches are millions of long-lived objects, and a pass
    that stores a new snapshot allocates enough to set off a full collection that walks
    them all: at 2,000 nodes about 2.5 s of the pass (issue 31, docs/BENCHMARKS.md).
    Paused, that work is left to the collections that follow the pass, while the
    follower waits, instead of lying between a change and its evaluation on the page.
    Reference counting frees what a pass drops as usual; only cycles wait.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def held_message(cluster: Cluster) -> str:
    lock = services.ingest_lock_holder(cluster_id=cluster.pk)
    if lock is None:
        return f"{cluster.name}: ingest lock just taken by another ingester"
    return (
        f"{cluster.name}: ingested by {lock.holder or 'another ingester'} "
        f"(lock held until {lock.expires_at:%Y-%m-%d %H:%M:%S} UTC)"
    )


@dataclass
class Follower:
    """Reads ``cluster``'s source every ``interval_seconds`` while it holds the lock."""

    cluster: Cluster
    interval_seconds: float
    on_snapshot: Callable[[Snapshot], None]
    say: Callable[[str], None]
    on_unchanged: Callable[[], None] = lambda: None  # e.g. evaluate a snapshot that has none
    holder: str = field(default_factory=lambda: holder_name("ingest --follow"))
    # (source_kind, source_settings) a command gave: saved on the cluster only once the lock
    # is held, so a refused ingester never points the holder's (or the worker's) reads at
    # its own source
    source: tuple[str, dict[str, Any]] | None = None
    sleep: Callable[[float], None] = time.sleep
    random: random.Random = field(default_factory=random.Random)
    failures: int = 0
    token: str | None = None
    standing_by: bool = False
    reading: bool = False  # the last pass read the source: its watches can wake the next
    debounce_seconds: float = field(default_factory=lambda: settings.INGEST_DEBOUNCE_SECONDS)

    @property
    def lock_seconds(self) -> int:
        """Long enough to outlast a read and the longest wait before the next renewal."""
        longest_wait = max(self.interval_seconds, settings.INGEST_RETRY_CAP_SECONDS)
        return max(services.DEFAULT_LOCK_SECONDS, int(3 * longest_wait))

    def once(self) -> Snapshot | None:
        """One read under the lock (``LockHeld`` if another ingester has it); errors raise.
        Nothing reads again: the source and what it read are let go before the snapshot
        is evaluated, so the two never take memory together."""
        if not self.hold(stand_by=False):
            raise LockHeld(held_message(self.cluster))
        try:
            return self.read(last=True)
        finally:
            self.release()

    def run(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Read until ``stop()``; never gives up on a source that does not answer."""
        try:
            while not stop():
                delay = self.step()
                reset_queries()  # DEBUG logs each query's SQL, the snapshot's JSON included
                self.pause(delay)
        finally:
            self.release()
            services.close_source(cluster=self.cluster)

    def pause(self, delay: float) -> None:
        """Wait ``delay`` seconds before the next pass, or, while the source is read, until
        its open watches bring a change, then ``debounce_seconds`` more."""
        if not self.reading:
            self.sleep(delay)
            return
        changed = services.wait_for_change(cluster=self.cluster, timeout_seconds=delay)
        if changed is None:  # the source cannot tell (files, replay)
            self.sleep(delay)
        elif changed:
            self.sleep(self.debounce_seconds)

    def step(self) -> float:
        """One pass; the seconds to wait before the next."""
        self.reading = False
        if not self.hold():
            return self.interval_seconds
        try:
            with collector_paused():
                self.read(follow=True)
        except (ModelError, SourceError) as error:
            self.failures += 1
            delay = self.retry_delay(self.failures)
            what = "unreachable" if isinstance(error, SourceUnreachable) else "refused"
            self.say(
                f"{self.cluster.name}: source {what}: {error}; the previous snapshot stays, "
                f"next read in {delay:.1f} s"
            )
            return delay
        self.failures = 0
        self.reading = True
        return self.interval_seconds

    def read(self, *, follow: bool = False, last: bool = False) -> Snapshot | None:
        """One ingest; ``follow``: keep the source's watches and caches for the next;
        ``last``: a one-shot read, whose source is let go at once."""
        before = dict(self.cluster.ingest_kinds or {})
        was_ok = self.cluster.ingest_state in ("", Cluster.IngestState.OK)
        try:
            snapshot = services.ingest_from_source(
                cluster=self.cluster, now=timezone.now(), follow=follow
            )
        finally:
            if last:
                services.close_source(cluster=self.cluster)
        reset_queries()  # DEBUG keeps each query's SQL: the snapshot's whole JSON
        if not was_ok:
            self.say(f"{self.cluster.name}: source answers again")
        self.say_kind_changes(before)
        if snapshot is None:
            self.say(f"{self.cluster.name}: unchanged")
            self.on_unchanged()
        else:
            self.on_snapshot(snapshot)
        return snapshot

    def say_kind_changes(self, before: dict[str, dict[str, str]]) -> None:
        for key, status in sorted((self.cluster.ingest_kinds or {}).items()):
            if before.get(key) == status:
                continue
            if status["state"] != "served":
                self.say(f"{self.cluster.name}: {key}: {status['state']}: {status['reason']}")
            elif key in before:
                self.say(f"{self.cluster.name}: {key}: served now, at {status['version']}")

    def retry_delay(self, failures: int) -> float:
        """base·2ⁿ capped, with half of it jittered, so many followers do not retry at once."""
        bound = min(
            settings.INGEST_RETRY_CAP_SECONDS, settings.INGEST_RETRY_BASE_SECONDS * 2**failures
        )
        return self.random.uniform(bound / 2, bound)

    # the lock

    def hold(self, *, stand_by: bool = True) -> bool:
        """Renew the lock, or take it (then save ``source`` on the cluster); False while
        another ingester has it (``stand_by``: said once, as a follower waits for it)."""
        cluster_id = self.cluster.pk
        if self.token is not None:
            if services.renew_ingest_lock(
                cluster_id=cluster_id, token=self.token, lock_seconds=self.lock_seconds
            ):
                return True
            self.say(f"{self.cluster.name}: the ingest lock lapsed and was taken")
            self.token = None
        self.token = services.acquire_ingest_lock(
            cluster_id=cluster_id, lock_seconds=self.lock_seconds, holder=self.holder
        )
        if self.token is None:
            if stand_by and not self.standing_by:
                self.say(f"{held_message(self.cluster)}: standing by to take over")
            self.standing_by = True
            return False
        if self.source is not None:
            kind, source_settings = self.source
            self.cluster = services.save_cluster(
                name=self.cluster.name, source_kind=kind, source_settings=source_settings
            )
            self.source = None
        if self.standing_by:
            self.say(f"{self.cluster.name}: took over the ingest")
        self.standing_by = False
        return True

    def release(self) -> None:
        if self.token is not None:
            services.release_ingest_lock(cluster_id=self.cluster.pk, token=self.token)
            self.token = None
