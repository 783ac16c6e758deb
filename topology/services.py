"""Writes of the topology app: snapshots, clusters' configuration, ingest locks, beat entries.

::

    source.read(now) ──► ingest_snapshot: parse ─► + stored node groups, + stored_configuration
                                                    (signal: the reservations app's rows)
                                          ─► canonical JSON ─► sha256
                                          ─► skip if (cluster, hash) exists
                                          ─► one Snapshot row (errors kept, rest stored)
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from topology import hardware, kube, serialize, signals
from topology.adapters import node_group_object, node_group_row_fields, with_stored_configuration
from topology.models import Cluster, IngestLock, NodeGroup, Snapshot
from topology.prices import table_in
from topology.sourceread import Source, SourcedObject, SourceRead
from topology.sources import source_from_settings

INGEST_TASK = "topology.tasks.ingest_cluster"
RETENTION_TASK = "topology.tasks.delete_old_snapshots"
RETENTION_ENTRY = "snapshot retention"  # its beat entry's name
DEFAULT_INGEST_EVERY_SECONDS = 60
DEFAULT_LOCK_SECONDS = 600
TRACE_DATA_DIR = Path(settings.BASE_DIR) / "data" / "alibaba-gpu-v2023"

# One live source per cluster and worker process: a kube source keeps its store and
# resourceVersions between ingests, a files source its last mtimes.
_open_sources: dict[tuple[int, str, str], Source] = {}


def content_hash(model_json: Any, errors: Sequence[dict[str, str]]) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of the model and its errors."""
    canonical = json.dumps(
        {"model": model_json, "errors": list(errors)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _stored_objects(cluster: Cluster) -> list[dict[str, Any]]:
    """The cluster's stored node groups, then what the apps above store (reservations)."""
    groups = [node_group_object(row) for row in NodeGroup.objects.filter(cluster=cluster)]
    return groups + signals.collect_stored_configuration(cluster)


def _object_counts(
    objects: Iterable[SourcedObject] | None, model: hardware.Cluster, unavailable: Sequence[str]
) -> dict:
    counts: dict[str, Any] = {}
    if objects is not None:
        counts.update(Counter(str(obj.get("kind") or "?") for _source, obj in objects))
    counts.update(
        {
            "nodes": len(model.nodes),
            "pods": len(model.pods),
            "pendingPods": len(model.pending_pods()),
            "gangs": len(model.gangs),
            "gpus": model.gpu_count,
        }
    )
    if unavailable:  # kinds the cluster does not serve (CRDs not installed): read as none
        counts["unavailable"] = list(unavailable)
    return counts


def ingest_snapshot(
    *,
    cluster: Cluster,
    taken_at: datetime,
    objects: Sequence[SourcedObject] | None = None,
    model: hardware.Cluster | None = None,
    unavailable: Sequence[str] = (),
) -> Snapshot | None:
    """Parse, merge stored configuration, hash, and store one Snapshot; None when unchanged.

    Objects that fail validation are stored as the snapshot's errors; the rest
    is kept. Two ingests racing on the same content end with one row (the
    unique constraint decides; the loser returns None).
    """
    errors: list[hardware.ModelError] = []
    if objects is not None:
        parsed = kube.parse_objects(
            objects, cluster_name=cluster.name, prices=table_in(settings.CURRENCY)
        )
        model = parsed.cluster
        errors.extend(parsed.errors)
    if model is None:
        raise ValueError("ingest_snapshot needs objects or a model")
    model, stored_errors = with_stored_configuration(
        model, cluster=cluster, stored_objects=_stored_objects(cluster)
    )
    errors.extend(stored_errors)
    model_json = serialize.cluster_to_json(model)
    error_dicts = [e.as_dict() for e in errors]
    digest = content_hash(model_json, error_dicts)
    if Snapshot.objects.filter(cluster=cluster, content_hash=digest).exists():
        return None
    try:
        with transaction.atomic():
            return Snapshot.objects.create(
                cluster=cluster,
                taken_at=taken_at,
                content_hash=digest,
                object_counts=_object_counts(objects, model, unavailable),
                model_json=model_json,
                errors=error_dicts,
            )
    except IntegrityError:
        return None


def _source_key(cluster: Cluster) -> tuple[int, str, str]:
    return (cluster.pk, cluster.source_kind, json.dumps(cluster.source_settings, sort_keys=True))


def read_source(*, cluster: Cluster, now: datetime) -> SourceRead:
    """Read the cluster's configured source (kept open per process between ingests)."""
    key = _source_key(cluster)
    source = _open_sources.get(key)
    if source is None:
        source = source_from_settings(
            cluster.source_kind,
            cluster.source_settings,
            cluster_name=cluster.name,
            data_dir=TRACE_DATA_DIR,
            max_bytes=settings.MAX_SNAPSHOT_BYTES,
            max_objects=settings.MAX_SNAPSHOT_OBJECTS,
        )
        _open_sources[key] = source
    return source.read(now)


def ingest_from_source(*, cluster: Cluster, now: datetime) -> Snapshot | None:
    """Read the source, then store what it read. None when nothing changed."""
    try:
        read = read_source(cluster=cluster, now=now)
    except hardware.ModelError as error:
        return _store_source_error(cluster=cluster, now=now, error=error)
    if read.unchanged:
        return None
    try:
        return ingest_snapshot(
            cluster=cluster,
            taken_at=now,
            objects=read.objects,
            model=read.model,
            unavailable=read.unavailable,
        )
    except Exception:
        # The source now believes this content was seen; forget it so the next ingest
        # reads (and stores) it again instead of answering "unchanged".
        _open_sources.pop(_source_key(cluster), None)
        raise


def _store_source_error(
    *, cluster: Cluster, now: datetime, error: hardware.ModelError
) -> Snapshot | None:
    """A source refused as a whole (too big, unreadable): an empty snapshot naming why."""
    empty = hardware.Cluster(name=cluster.name)
    model_json = serialize.cluster_to_json(empty)
    errors = [error.as_dict()]
    digest = content_hash(model_json, errors)
    with transaction.atomic():
        snapshot, created = Snapshot.objects.get_or_create(
            cluster=cluster,
            content_hash=digest,
            defaults={
                "taken_at": now,
                "object_counts": {},
                "model_json": model_json,
                "errors": errors,
            },
        )
    return snapshot if created else None


# --- locks ----------------------------------------------------------------------------------


def acquire_ingest_lock(*, cluster_id: int, lock_seconds: int = DEFAULT_LOCK_SECONDS) -> str | None:
    """Take the cluster's ingest lock (an expiring row); its token, or None if held."""
    now = timezone.now()
    token = uuid.uuid4().hex
    IngestLock.objects.filter(cluster_id=cluster_id, expires_at__lte=now).delete()
    try:
        with transaction.atomic():
            IngestLock.objects.create(
                cluster_id=cluster_id,
                token=token,
                expires_at=now + timedelta(seconds=lock_seconds),
            )
    except IntegrityError:
        return None
    return token


def release_ingest_lock(*, cluster_id: int, token: str) -> None:
    IngestLock.objects.filter(cluster_id=cluster_id, token=token).delete()


# --- configuration ------------------------------------------------------------------------------


@transaction.atomic
def save_cluster(
    *,
    name: str,
    source_kind: str,
    source_settings: dict[str, Any],
    enabled: bool = True,
    every_seconds: int = DEFAULT_INGEST_EVERY_SECONDS,
) -> Cluster:
    """Create or update a cluster and its periodic ingest (beat entry) together."""
    cluster, _created = Cluster.objects.update_or_create(
        name=name,
        defaults={
            "source_kind": source_kind,
            "source_settings": source_settings,
            "enabled": enabled,
        },
    )
    schedule_ingest(cluster=cluster, every_seconds=every_seconds)
    if not PeriodicTask.objects.filter(name=RETENTION_ENTRY).exists():
        schedule_retention()  # a production set-up's first cluster: old snapshots go too
    return cluster


@transaction.atomic
def save_node_groups(*, cluster: Cluster, objects: Sequence[dict[str, Any]]) -> list[NodeGroup]:
    """Create or update NodeGroup rows from NodeGroup objects, after the parser accepted them."""
    parsed = kube.parse_objects((("yaml", obj) for obj in objects), cluster_name=cluster.name)
    if parsed.errors:
        raise parsed.errors[0]
    rows = []
    for obj in objects:
        row, _created = NodeGroup.objects.update_or_create(
            cluster=cluster, name=obj["metadata"]["name"], defaults=node_group_row_fields(obj)
        )
        rows.append(row)
    return rows


@transaction.atomic
def schedule_ingest(*, cluster: Cluster, every_seconds: int = DEFAULT_INGEST_EVERY_SECONDS) -> None:
    """The cluster's beat entry: a periodic ingest, enabled exactly when the cluster is."""
    interval, _created = IntervalSchedule.objects.get_or_create(
        every=every_seconds, period=IntervalSchedule.SECONDS
    )
    PeriodicTask.objects.update_or_create(
        name=f"ingest cluster {cluster.pk}",
        defaults={
            "task": INGEST_TASK,
            "interval": interval,
            "args": json.dumps([cluster.pk]),
            "enabled": cluster.enabled,
        },
    )


@transaction.atomic
def schedule_retention(*, every_seconds: int = 3600) -> None:
    interval, _created = IntervalSchedule.objects.get_or_create(
        every=every_seconds, period=IntervalSchedule.SECONDS
    )
    PeriodicTask.objects.update_or_create(
        name=RETENTION_ENTRY,
        defaults={"task": RETENTION_TASK, "interval": interval, "enabled": True},
    )


@transaction.atomic
def delete_old_snapshots(*, now: datetime, retention_days: float) -> int:
    """Delete snapshots (and their evaluations) older than the retention; the count of
    snapshots deleted. Each cluster's newest snapshot stays; a cluster's own
    ``retention_days`` replaces the default."""
    newest = _newest_per_cluster()
    deleted = 0
    for cluster_id, days in Cluster.objects.values_list("id", "retention_days"):
        cutoff = now - timedelta(days=retention_days if days is None else days)
        _total, by_model = (
            Snapshot.objects.filter(cluster_id=cluster_id, taken_at__lt=cutoff)
            .exclude(id=newest.get(cluster_id))
            .delete()
        )
        deleted += by_model.get(Snapshot._meta.label, 0)
    return deleted


def _newest_per_cluster() -> dict[int, int]:
    newest: dict[int, int] = {}
    for cluster_id in Cluster.objects.values_list("id", flat=True):
        snapshot_id = (
            Snapshot.objects.filter(cluster_id=cluster_id)
            .order_by("-taken_at")
            .values_list("id", flat=True)
            .first()
        )
        if snapshot_id is not None:
            newest[cluster_id] = snapshot_id
    return newest
