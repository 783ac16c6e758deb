"""Ingest tasks (thin): take the cluster's lock, call the service, announce the snapshot.

The evaluation follows from ``topology.signals.snapshot_ingested``, sent once the
snapshot row commits; the recommender answers it by enqueueing its evaluate task.
An ingest that finds nothing new sends ``ingest_unchanged``: the recommender then
evaluates the latest snapshot if it still has no evaluation (its task was lost, or
failed on a database that was down), so no snapshot stays unevaluated for good.

The lock is an expiring row (``IngestLock``), so only one ingest per cluster
runs and a killed worker's lock lapses by itself; ``ingest --follow`` holds the same
lock for as long as it runs (``topology.follow``), and these ingests skip meanwhile.
A source that cannot be read stores nothing: the cluster records why (``ingest_state``)
and the previous snapshot stays. ``acks_late``: a task whose
worker dies mid-ingest is redelivered; the snapshot's content hash makes the
rerun a no-op if the first run had committed.
"""

from __future__ import annotations

from functools import partial

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from topology import services, signals
from topology.follow import holder_name
from topology.ingest.sourceread import SourceError
from topology.model.hardware import ModelError
from topology.models import Cluster


@shared_task(name="topology.tasks.ingest_cluster", acks_late=True)
def ingest_cluster(
    cluster_id: int, lock_seconds: int = services.DEFAULT_LOCK_SECONDS
) -> int | None:
    """Ingest one cluster now; the new snapshot's id, or None (unchanged, disabled or locked)."""
    cluster = Cluster.objects.filter(pk=cluster_id, enabled=True).first()
    if cluster is None:
        return None
    token = services.acquire_ingest_lock(
        cluster_id=cluster_id, lock_seconds=lock_seconds, holder=holder_name("worker")
    )
    if token is None:  # another ingest, or an `ingest --follow` holding it for good
        return None
    try:
        # The source is read outside any transaction (it may watch for seconds); the
        # snapshot row commits in the service, and on_commit announces it then.
        try:
            snapshot = services.ingest_from_source(cluster=cluster, now=timezone.now())
        except (ModelError, SourceError):
            # recorded on the cluster (its pages, /metrics); the previous snapshot stays,
            # the next periodic ingest reads again
            return None
        if snapshot is not None:
            transaction.on_commit(partial(signals.send_snapshot_ingested, snapshot.pk))
        else:  # nothing new; its latest snapshot may still lack an evaluation
            signals.send_ingest_unchanged(cluster_id)
    finally:
        services.release_ingest_lock(cluster_id=cluster_id, token=token)
    return snapshot.pk if snapshot is not None else None


@shared_task(name="topology.tasks.delete_old_snapshots")
def delete_old_snapshots() -> int:
    return services.delete_old_snapshots(
        now=timezone.now(), retention_days=settings.SNAPSHOT_RETENTION_DAYS
    )
