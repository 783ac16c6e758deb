"""What another process stored, announced to this process's sockets (``make run``).

::

    rundemo (in-process channel layer: another process's publish never reaches it)
    └── StoredChangeWatcher.run(), a task on the server's event loop, every second:
          ONE query: the highest evaluation id and the highest cluster id
            ├─ both as before (idle): nothing more
            ├─ a higher cluster id ─► events.publish_clusters()       (the overview)
            └─ a higher evaluation id ─► per cluster among the new ones, its latest
                 evaluation ─► events.publish_evaluation(...)          (the cluster's pages)
                 unless this process stored it: its storer publishes it (the embedded
                 worker), and a page would only be told twice

``manage.py ingest`` in a second shell (or ``--follow``) stores its evaluations in the
same database; with a shared channel layer (Redis) its own publish reaches every web
process and this watcher is not started. Evaluations are noticed by id: an evaluation
re-stored in place keeps its id and, as before, reaches pages through their resync.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import connection

from recommender import events, selectors, signals
from recommender.models import Evaluation
from topology.models import Cluster

logger = logging.getLogger(__name__)

WATCH_SECONDS = 1.0


def needed() -> bool:
    """The channel layer is this process's own: what another process publishes is lost."""
    return isinstance(get_channel_layer(), InMemoryChannelLayer)


def highest_ids() -> tuple[int, int]:
    """The highest evaluation id and cluster id (0 for none), in one query on two indexes."""
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT MAX(id) FROM {quote(Evaluation._meta.db_table)}),"  # noqa: S608
            f" (SELECT MAX(id) FROM {quote(Cluster._meta.db_table)})"
        )
        evaluation_id, cluster_id = cursor.fetchone()
    return evaluation_id or 0, cluster_id or 0


@dataclass
class StoredChangeWatcher:
    """Announces evaluations and clusters that appear in the database without this
    process having stored them. The first look only takes note of what there is."""

    evaluation_id: int | None = None  # the highest seen; None before the first look
    cluster_id: int = 0
    stored_here: set[int] = field(default_factory=set)  # evaluation ids above evaluation_id
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start_noting(self) -> None:
        """From now on, each evaluation this process stores is its storer's to announce."""
        signals.evaluation_stored.connect(
            self.note_stored, sender=Evaluation, weak=False, dispatch_uid=id(self)
        )

    def stop_noting(self) -> None:
        signals.evaluation_stored.disconnect(sender=Evaluation, dispatch_uid=id(self))

    def note_stored(self, sender: Any, *, evaluation: Evaluation, **kwargs: Any) -> None:
        """Sent inside the storing transaction: noted before any look can see the row."""
        with self.lock:
            self.stored_here.add(evaluation.pk)

    def look(self) -> list[str]:
        """One look: announce what is new; what was announced, for the log and tests."""
        evaluation_id, cluster_id = highest_ids()
        if self.evaluation_id is None:
            self.evaluation_id, self.cluster_id = evaluation_id, cluster_id
            return []
        announced = []
        if cluster_id > self.cluster_id:
            events.publish_clusters()
            announced.append(f"clusters up to {cluster_id}")
        if evaluation_id > self.evaluation_id:
            announced.extend(self.announce_evaluations_after(self.evaluation_id))
        self.evaluation_id, self.cluster_id = evaluation_id, max(cluster_id, self.cluster_id)
        with self.lock:
            self.stored_here = {pk for pk in self.stored_here if pk > evaluation_id}
        return announced

    def announce_evaluations_after(self, seen_id: int) -> list[str]:
        """Each cluster with an evaluation above ``seen_id``: its latest, unless stored here
        or not among the new ones (a newer snapshot's is there already)."""
        announced = []
        cluster_ids = (
            Evaluation.objects.filter(pk__gt=seen_id)
            .order_by()
            .values_list("cluster_id", flat=True)
            .distinct()
        )
        for cluster_id in sorted(cluster_ids):
            latest = selectors.latest_evaluation(cluster_id=cluster_id)
            with self.lock:
                stored_here = latest is not None and latest.pk in self.stored_here
            if latest is None or latest.pk <= seen_id or stored_here:
                continue
            events.publish_evaluation(latest)
            announced.append(f"evaluation {latest.pk} of cluster {cluster_id}")
        return announced

    async def run(self, interval_seconds: float = WATCH_SECONDS) -> None:
        """Look every ``interval_seconds`` until cancelled (the server stopping). A failed
        look (a locked SQLite file) is logged and tried again at the next."""
        self.start_noting()
        try:
            while True:
                try:
                    for line in await database_sync_to_async(self.look)():
                        logger.info("announced from another process: %s", line)
                except Exception:
                    logger.exception("looking for evaluations stored by another process")
                await asyncio.sleep(interval_seconds)
        finally:
            self.stop_noting()
