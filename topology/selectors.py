"""Reads of the topology app: clusters and their snapshots, with bounded queries."""

from __future__ import annotations

from django.db.models import QuerySet

from topology.models import Cluster, NodeGroup, Snapshot


def enabled_clusters() -> QuerySet[Cluster]:
    return Cluster.objects.filter(enabled=True).order_by("name")


def latest_snapshot(*, cluster_id: int) -> Snapshot | None:
    return Snapshot.objects.filter(cluster_id=cluster_id).order_by("-taken_at", "-id").first()


def snapshots(*, cluster_id: int) -> QuerySet[Snapshot]:
    """Newest first, without the (large) model_json column."""
    return (
        Snapshot.objects.filter(cluster_id=cluster_id)
        .defer("model_json")
        .order_by("-taken_at", "-id")
    )


def node_groups(*, cluster_id: int) -> QuerySet[NodeGroup]:
    return NodeGroup.objects.filter(cluster_id=cluster_id).order_by("name")
