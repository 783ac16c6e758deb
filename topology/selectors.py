"""Reads of the topology app: clusters and their snapshots, with bounded queries.

The pages of the apps above (the cluster picker, the snapshot picker, the
overview) read clusters and snapshots through these, one query each, without
the snapshot's (large) ``model_json``.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import OuterRef, Subquery

from topology import signals
from topology.models import Cluster, Snapshot

SNAPSHOT_PICKER_FIELDS = ("id", "taken_at", "errors", "evaluation_state", "evaluation_note")
INGEST_STATUS_FIELDS = ("ingest_state", "ingest_message", "ingest_since", "ingest_kinds")


def cluster_choices() -> list[Cluster]:
    """Every cluster by name, with only its id, name and ingest status (the cluster
    picker, and the header of the shown cluster's pages)."""
    return list(Cluster.objects.order_by("name").only("id", "name", *INGEST_STATUS_FIELDS))


def recent_snapshots(*, cluster_id: int, limit: int) -> list[Snapshot]:
    """The cluster's ``limit`` newest snapshots, newest first (the snapshot picker)."""
    return list(
        Snapshot.objects.filter(cluster_id=cluster_id)
        .order_by("-taken_at")
        .only(*SNAPSHOT_PICKER_FIELDS)[:limit]
    )


def snapshot_of_cluster(*, cluster_id: int, snapshot_id: int) -> Snapshot | None:
    """One snapshot, if it belongs to the cluster (picker fields only)."""
    return (
        Snapshot.objects.filter(cluster_id=cluster_id, id=snapshot_id)
        .only(*SNAPSHOT_PICKER_FIELDS)
        .first()
    )


def stored_reservation_owners(cluster: Cluster | int) -> dict[str, list[str]]:
    """Name → owner namespaces of the reservations stored for the cluster (the
    ``stored_configuration`` answers: one query), whom a snapshot error about one of
    them may name it to (capacityweb.visibility.snapshot_errors)."""
    owners: dict[str, list[str]] = {}
    for obj in signals.collect_stored_configuration(cluster):
        if obj.get("kind") == "Reservation":
            spec_owner = (obj.get("spec") or {}).get("owner") or {}
            owners[str((obj.get("metadata") or {}).get("name"))] = list(
                spec_owner.get("namespaces") or ()
            )
    return owners


def clusters_with_latest_snapshot() -> list[Cluster]:
    """Every cluster by name, annotated with ``latest_snapshot_id`` (one query)."""
    latest = Snapshot.objects.filter(cluster=OuterRef("pk")).order_by("-taken_at")
    return list(
        Cluster.objects.order_by("name").annotate(
            latest_snapshot_id=Subquery(latest.values("id")[:1])
        )
    )


def snapshots_by_id(snapshot_ids: Iterable[int]) -> dict[int, Snapshot]:
    """Snapshot id → snapshot, with the overview's fields only (one query)."""
    return {
        snapshot.id: snapshot
        for snapshot in Snapshot.objects.filter(id__in=list(snapshot_ids)).only(
            "id", "cluster_id", "taken_at", "errors", "evaluation_state", "evaluation_note"
        )
    }
