"""What the topology app tells the apps above it, without importing them.

::

    ingest task ─► snapshot row committed ─► snapshot_ingested(snapshot_id)
                                                └─► recommender: enqueue evaluate_snapshot
    ingest task ─► nothing new ─► ingest_unchanged(cluster_id)
                                                └─► recommender: evaluate the latest snapshot
                                                    if it still has no evaluation
    ingest_snapshot ─► stored_configuration(cluster) ─► [capacityweb.io objects]
                                                └─► reservations: its Reservation rows

All are plain Django signals sent synchronously: ``snapshot_ingested`` from the
ingest task's ``transaction.on_commit`` (so a worker never evaluates a row it
cannot see yet), ``stored_configuration`` inside the ingest, each receiver
answering the capacityweb.io/v1alpha1 objects it stores for the cluster.
"""

from __future__ import annotations

from typing import Any

from django.dispatch import Signal

from topology.models import Cluster

snapshot_ingested = Signal()  # kwargs: snapshot_id
ingest_unchanged = Signal()  # kwargs: cluster_id
stored_configuration = Signal()  # kwargs: cluster; receivers return a list of objects


def send_snapshot_ingested(snapshot_id: int) -> None:
    snapshot_ingested.send(sender=Cluster, snapshot_id=snapshot_id)


def send_ingest_unchanged(cluster_id: int) -> None:
    ingest_unchanged.send(sender=Cluster, cluster_id=cluster_id)


def collect_stored_configuration(cluster: Cluster | int) -> list[dict[str, Any]]:
    """The objects every receiver stores for the cluster, in the receivers' connect order."""
    return [
        obj
        for _receiver, objects in stored_configuration.send(sender=Cluster, cluster=cluster)
        for obj in objects
    ]
