"""Watches kept open between reads, so a change reaches the store as it happens and a
follower can read as soon as something changed (``KubeSource.wait_for_change``).

::

    KubeSource.read ─► sync (kinds not watched) ─► Watchers.ensure: a thread per served kind
                                                       │
      thread: catch_up(kind, watch 5–10 min) ◄─────────┘  (list on 410, backoff on errors)
              └─ event applied to the store ─► generation + 1 ─► wait_for_change wakes
              └─ kind no longer served (failing, forbidden, not served): the thread ends,
                 the kind goes back to the reads' own sync, which says why

As client-go's Reflector keeps one watch per informer open, each ending after a random
``minWatchTimeout``·(1 + rand) with minWatchTimeout 5 minutes
(``k8s.io/client-go/tools/cache/reflector.go``, ``Reflector.watch``), and resumes from
the last resourceVersion. A quiet cluster costs the open connections and a BOOKMARK now
and then, no CPU to speak of. Free of Django, like ``topology.ingest.kubesource``.
"""

from __future__ import annotations

import random
import threading

from topology.ingest.kubekinds import WatchedKind
from topology.ingest.kubesource import KindState, KubeSource

MIN_WATCH_SECONDS = 300.0  # client-go's minWatchTimeout


class Watchers:
    """One daemon thread per served kind of ``source``, each re-watching until stopped."""

    def __init__(
        self,
        source: KubeSource,
        *,
        min_watch_seconds: float = MIN_WATCH_SECONDS,
        random_source: random.Random | None = None,
    ) -> None:
        self.source = source
        self.min_watch_seconds = min_watch_seconds
        self.random = random_source or random.Random()
        self.stopping = threading.Event()
        self.threads: dict[str, threading.Thread] = {}

    def ensure(self) -> None:
        """Start a thread for each kind the last read found served and none watches yet."""
        for kind in self.source.kinds:
            status = self.source.status.get(kind.key)
            if (
                self.stopping.is_set()
                or status is None
                or status.state is not KindState.SERVED
                or kind.key in self.source.watched
                or kind.key not in self.source.resource_versions
            ):
                continue
            self.source.watched.add(kind.key)
            thread = threading.Thread(
                target=self._run, args=(kind,), name=f"kube-watch-{kind.key}", daemon=True
            )
            self.threads[kind.key] = thread
            thread.start()

    def stop(self) -> None:
        """Start no more watches; each thread ends when its open watch does."""
        self.stopping.set()

    def watch_seconds(self) -> int:
        return int(self.min_watch_seconds * (self.random.random() + 1.0))

    def _run(self, kind: WatchedKind) -> None:
        try:
            while not self.stopping.is_set():
                self.source.catch_up(kind, watch_seconds=self.watch_seconds())
                if self.source.status[kind.key].state is not KindState.SERVED:
                    return  # the reads' sync takes the kind back and says why
        finally:
            self.source.watched.discard(kind.key)
