"""Writes of the topology app: snapshots, clusters' configuration, ingest locks, beat entries.

::

    source.read(now) ──► ingest_snapshot: parse ─► + stored node groups, + stored_configuration
                                                    (signal: the reservations app's rows)
                                          ─► canonical JSON ─► sha256
                                          ─► skip if the cluster's latest snapshot has it
                                          ─► one Snapshot row (errors kept, rest stored)
                                             + the source's node groups as rows
    source unreachable / refused ─► no row: the cluster's ingest_state says why, the
                                    previous snapshot stays (record_ingest_problem)
    kube source, nothing changed since the last stored ingest ─► no parse (_change_marker)
    a follower's kube source (follow=True): watches kept open (topology.ingest.kubewatch), and
                                    the parse and JSON of unchanged Nodes and Pods kept
                                    (IngestCaches), so a change costs what changed
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from topology import signals
from topology.adapters import (
    node_group_object,
    node_group_row_fields,
    source_group_row_fields,
    with_stored_configuration,
)
from topology.ingest.kubeapi import Backoff
from topology.ingest.kubesource import KubeSource
from topology.ingest.kubewatch import Watchers
from topology.ingest.sourceread import (
    Source,
    SourcedObject,
    SourceError,
    SourceRead,
    SourceUnreachable,
)
from topology.ingest.sources import source_from_settings
from topology.kube import parse as kube
from topology.kube.parsecache import ParseCache
from topology.kube.providers.prices import table_in
from topology.model import hardware, serialize
from topology.models import Cluster, IngestLock, NodeGroup, Snapshot

logger = logging.getLogger(__name__)

INGEST_TASK = "topology.tasks.ingest_cluster"
RETENTION_TASK = "topology.tasks.delete_old_snapshots"
RETENTION_ENTRY = "snapshot retention"  # its beat entry's name
DEFAULT_INGEST_EVERY_SECONDS = 60
DEFAULT_LOCK_SECONDS = 600
TRACE_DATA_DIR = Path(settings.BASE_DIR) / "data" / "alibaba-gpu-v2023"

# One live source per cluster and worker process: a kube source keeps its store and
# resourceVersions between ingests, a files source its last mtimes.
_open_sources: dict[tuple[int, str, str], Source] = {}
# What the last stored ingest of a counting source (kube) was made of: its generation
# and the stored configuration merged into it (``_change_marker``).
_ingested_markers: dict[tuple[int, str, str], tuple[int, str]] = {}


@dataclasses.dataclass
class IngestCaches:
    """What successive ingests of one followed cluster keep: each Node's and Pod's parse
    (by uid and resourceVersion) and each node's and pod's JSON, both ways."""

    parse: ParseCache = dataclasses.field(default_factory=ParseCache)
    json: serialize.JsonCache = dataclasses.field(default_factory=serialize.JsonCache)


# Kept next to a follower's open source (``ingest_from_source(follow=True)``) only: a
# one-shot or periodic ingest frees its model as soon as it is stored.
_open_caches: dict[tuple[int, str, str], IngestCaches] = {}


def content_hash(
    model_json: Any, errors: Sequence[dict[str, str]], read: dict[str, Any] | None = None
) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of the model and its errors,
    and, for a source that reads kinds (kube), each kind's state and object count
    (``_kinds_read``): a kind turning forbidden is a change even when the model is not."""
    content: dict[str, Any] = {"model": model_json, "errors": list(errors)}
    if read:
        content["read"] = read
    digest = hashlib.sha256()
    for chunk in serialize.canonical_chunks(content):  # never the whole text at once
        digest.update(chunk.encode())
    return digest.hexdigest()


def _stored_objects(cluster: Cluster) -> list[dict[str, Any]]:
    """The node groups users stored, then what the apps above store (reservations); the
    rows a source gave are its output, not input."""
    rows = NodeGroup.objects.filter(cluster=cluster, origin=NodeGroup.Origin.PROJECT)
    groups = [node_group_object(row) for row in rows]
    return groups + signals.collect_stored_configuration(cluster)


def _kinds_read(kinds: dict[str, dict[str, str]], counts: dict[str, int]) -> dict[str, Any]:
    """What a kube read found of each kind: its state and how many objects (issue 45).
    A failing kind is what was read before (its store is kept), so it counts as served:
    a brief failure of an optional kind is said on the cluster's ingest state, not
    stored as two snapshots of the same content (failing, then served again)."""
    if not kinds:
        return {}
    states = {
        key: "served" if status["state"] == "failing" else status["state"]
        for key, status in kinds.items()
    }
    return {"states": states, "counts": counts}


def _object_counts(
    objects: Iterable[SourcedObject] | None,
    model: hardware.Cluster,
    unavailable: Sequence[str],
    kinds: dict[str, dict[str, str]] | None = None,
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
    for state in ("forbidden", "failing"):  # read as none / kept from an earlier read
        keys = sorted(key for key, status in (kinds or {}).items() if status["state"] == state)
        if keys:
            counts[state] = keys
    return counts


def ingest_snapshot(
    *,
    cluster: Cluster,
    taken_at: datetime,
    objects: Sequence[SourcedObject] | None = None,
    model: hardware.Cluster | None = None,
    unavailable: Sequence[str] = (),
    caches: IngestCaches | None = None,
    kinds: dict[str, dict[str, str]] | None = None,
    counts: dict[str, int] | None = None,
) -> Snapshot | None:
    """Parse, merge stored configuration, hash, and store one Snapshot; None when the
    content equals the cluster's newest snapshot.

    Objects that fail validation are stored as the snapshot's errors; the rest
    is kept, unless every Node of ``objects`` was refused (``every_node_refused``,
    raised: nothing is stored). Unchanged means equal to the cluster's latest
    snapshot: a cluster back to an earlier state (a pod added, then deleted) gets a
    new snapshot, or its pages would go on showing the pod. Two ingests racing on the
    same content end with one row (the cluster row is locked while the latest is
    compared and the new one written).
    ``caches``: what earlier ingests of the cluster parsed and dumped (the same
    snapshot, made faster). ``kinds`` and ``counts`` (a kube read): each kind's state
    and object count, stored and hashed with the model.
    """
    errors: list[hardware.ModelError] = []
    if objects is not None:
        prices = table_in(settings.CURRENCY).with_overrides(cluster.price_overrides, cluster.name)
        parsed = kube.parse_objects(
            objects,
            cluster_name=cluster.name,
            prices=prices,
            cache=caches.parse if caches is not None else None,
        )
        refusal = every_node_refused(objects, parsed)
        if refusal is not None:
            raise refusal
        model = parsed.cluster
        errors.extend(parsed.errors)
    if model is None:
        raise ValueError("ingest_snapshot needs objects or a model")
    model, stored_errors = with_stored_configuration(
        model,
        cluster=cluster,
        stored_objects=_stored_objects(cluster),
        source_objects=objects or (),
    )
    errors.extend(stored_errors)
    model_json = serialize.cluster_to_json(model, caches.json if caches is not None else None)
    error_dicts = [e.as_dict() for e in errors]
    digest = content_hash(model_json, error_dicts, _kinds_read(kinds or {}, counts or {}))
    with transaction.atomic():
        Cluster.objects.select_for_update().filter(pk=cluster.pk).values_list("pk").first()
        if _latest_content_hash(cluster) == digest:
            return None
        object_counts = _object_counts(objects, model, unavailable, kinds)
        with _sql_unlogged():
            snapshot = Snapshot.objects.create(
                cluster=cluster,
                taken_at=taken_at,
                content_hash=digest,
                object_counts=object_counts,
                model_json=model_json,
                errors=error_dicts,
            )
        store_source_groups(cluster=cluster, model=model)
        return snapshot


def every_node_refused(
    objects: Sequence[SourcedObject], parsed: hardware.Snapshot
) -> hardware.ModelError | None:
    """The input's Node objects were all refused: the input as a whole is, as a file that
    does not parse is (the previous snapshot stays, rather than one with no nodes). Named
    by the first refused Node's source, with its refusal as the reason; None when the
    input has no Node or one was read."""
    in_input = sum(1 for _, obj in objects if isinstance(obj, dict) and obj.get("kind") == "Node")
    read = sum(count for kind, count in parsed.read.items() if kind.startswith("Node ("))
    if not in_input or read:
        return None
    refused = [e for e in parsed.errors if e.object.startswith("Node/")] or list(parsed.errors)
    first = refused[0] if refused else None
    source = first.source if first is not None else objects[0][0]
    said = ": ".join(p for p in (first.object, first.field, first.reason) if p) if first else ""
    reason = f"every Node refused ({in_input} of {in_input})" + (f": {said}" if said else "")
    return hardware.ModelError(source, "", "", reason)


@contextmanager
def _sql_unlogged() -> Iterator[None]:
    """Queries in the block are not logged, even with DEBUG on (``make run``, a CLI
    ingest): the log (``connection.queries``) keeps each query's SQL with its parameters
    written in, and writing them in (on SQLite a ``SELECT QUOTE(?)`` per parameter, then
    ``%``) holds two more copies of a snapshot's model JSON (125 MB at 2,000 nodes).
    The connection's cursors are made as when DEBUG is off (Django's
    ``BaseDatabaseWrapper._prepare_cursor``); the connection is the thread's own."""
    connection.make_debug_cursor = connection.make_cursor  # type: ignore[method-assign]
    try:
        yield
    finally:
        del connection.make_debug_cursor


def _latest_content_hash(cluster: Cluster) -> str | None:
    return (
        Snapshot.objects.filter(cluster=cluster)
        .order_by("-taken_at", "-id")
        .values_list("content_hash", flat=True)
        .first()
    )


def store_source_groups(*, cluster: Cluster, model: hardware.Cluster) -> None:
    """The snapshot's node groups that no user-written row names, as ``source`` rows
    (listed by the API for every source); rows of groups the source no longer has go.
    At most four queries, whatever the number of groups."""
    rows = {row.name: row for row in NodeGroup.objects.filter(cluster=cluster)}
    groups = {
        g.name: g
        for g in model.node_groups
        if g.name not in rows or rows[g.name].origin == NodeGroup.Origin.SOURCE
    }
    stale = [
        row.pk
        for name, row in rows.items()
        if row.origin == NodeGroup.Origin.SOURCE and name not in groups
    ]
    if stale:
        NodeGroup.objects.filter(pk__in=stale).delete()
    new: list[NodeGroup] = []
    changed: list[NodeGroup] = []
    fields: dict[str, Any] = {}
    for name, group in groups.items():
        fields = source_group_row_fields(group)
        row = rows.get(name) or NodeGroup(cluster=cluster, name=name)
        for field, value in fields.items():
            setattr(row, field, value)
        (changed if row.pk else new).append(row)
    NodeGroup.objects.bulk_create(new)
    if changed:
        NodeGroup.objects.bulk_update(changed, fields=list(fields))


def _source_key(cluster: Cluster) -> tuple[int, str, str]:
    return (cluster.pk, cluster.source_kind, json.dumps(cluster.source_settings, sort_keys=True))


def read_source(*, cluster: Cluster, now: datetime, follow: bool = False) -> SourceRead:
    """Read the cluster's configured source (kept open per process between ingests);
    ``follow``: a kube source keeps its watches open from then on (``wait_for_change``)."""
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
            backoff=Backoff(
                base_seconds=settings.INGEST_RETRY_BASE_SECONDS,
                cap_seconds=settings.INGEST_RETRY_CAP_SECONDS,
            ),
        )
        _open_sources[key] = source
    if follow and isinstance(source, KubeSource):
        source.keep_watching(Watchers(source, min_watch_seconds=settings.INGEST_WATCH_MIN_SECONDS))
    return source.read(now)


def wait_for_change(*, cluster: Cluster, timeout_seconds: float) -> bool | None:
    """Wait until the cluster's open source holds a change no ingest has read (True) or
    the timeout passes (False); None, at once, for a source that cannot tell (files,
    replay, a kube source not followed, none open)."""
    source = _open_sources.get(_source_key(cluster))
    if not isinstance(source, KubeSource) or source.watchers is None:
        return None
    return source.wait_for_change(timeout_seconds)


def close_source(*, cluster: Cluster) -> None:
    """Forget the cluster's open source and caches; its kept-open watches end."""
    key = _source_key(cluster)
    source = _open_sources.pop(key, None)
    _open_caches.pop(key, None)
    _ingested_markers.pop(key, None)
    if isinstance(source, KubeSource):
        source.stop_watching()


def json_cache(*, cluster: Cluster) -> serialize.JsonCache | None:
    """The JSON of the followed cluster's nodes and pods as last dumped and loaded (so
    evaluating a new snapshot loads only what changed), or None."""
    caches = _open_caches.get(_source_key(cluster))
    return caches.json if caches is not None else None


def ingest_from_source(*, cluster: Cluster, now: datetime, follow: bool = False) -> Snapshot | None:
    """Read the source, then store what it read. None when nothing changed.

    A source that cannot be read as a whole (a file that does not parse, an API server
    away, an input whose every Node is refused) stores nothing: the previous snapshot
    stays, the cluster records why (``record_ingest_problem``) and the error is raised
    for the caller to report.
    ``follow`` (``ingest --follow``): watches stay open between ingests and what the
    last one parsed and dumped is kept (``IngestCaches``).
    """
    try:
        read = read_source(cluster=cluster, now=now, follow=follow)
    except (hardware.ModelError, SourceError) as error:
        record_ingest_problem(cluster=cluster, now=now, error=error)
        raise
    key = _source_key(cluster)
    marker = _change_marker(cluster, read)
    if read.unchanged or (marker is not None and _ingested_markers.get(key) == marker):
        record_ingest_ok(cluster=cluster, now=now, kinds=read.kinds)
        return None
    caches = _open_caches.setdefault(key, IngestCaches()) if follow and marker else None
    try:
        snapshot = ingest_snapshot(
            cluster=cluster,
            taken_at=now,
            objects=read.objects,
            model=read.model,
            unavailable=read.unavailable,
            caches=caches,
            kinds=read.kinds,
            counts=read.counts,
        )
    except Exception as error:
        # The source now believes this content was seen; forget it so the next ingest
        # reads (and stores) it again instead of answering "unchanged".
        close_source(cluster=cluster)
        if isinstance(error, hardware.ModelError):  # refused as a whole: every Node
            record_ingest_problem(cluster=cluster, now=now, error=error)
        raise
    if marker is not None:
        _ingested_markers[key] = marker
    record_ingest_ok(cluster=cluster, now=now, kinds=read.kinds)
    return snapshot


def _change_marker(cluster: Cluster, read: SourceRead) -> tuple[int, str] | None:
    """The source's generation and a digest of what the ingest merges into it (stored
    node groups and reservations, the cluster row's settings: topology levels and any
    other): equal to the last stored ingest's, the pass has nothing new, and parsing and
    hashing the whole cluster (seconds at 2,000 nodes) is skipped. None for sources
    that do not count their changes."""
    if read.generation is None:
        return None
    row = Cluster.objects.filter(pk=cluster.pk).values().first() or {}
    settings_now = {k: v for k, v in row.items() if not k.startswith("ingest_")}
    states = {key: status["state"] for key, status in read.kinds.items()}
    merged = {"stored": _stored_objects(cluster), "cluster": settings_now, "kinds": states}
    canonical = json.dumps(merged, sort_keys=True, separators=(",", ":"), default=str)
    return read.generation, hashlib.sha256(canonical.encode()).hexdigest()


# --- ingest status ------------------------------------------------------------------------------


def record_ingest_ok(*, cluster: Cluster, now: datetime, kinds: dict[str, Any]) -> None:
    """The source was read; written only when the state or a kind's status changed."""
    if cluster.ingest_state == Cluster.IngestState.OK and cluster.ingest_kinds == kinds:
        return
    if cluster.ingest_state and cluster.ingest_state != Cluster.IngestState.OK:
        logger.warning("%s: ingest resumed after %s", cluster.name, cluster.ingest_state)
    _set_ingest_status(cluster, Cluster.IngestState.OK, "", now, kinds)


def record_ingest_problem(*, cluster: Cluster, now: datetime, error: Exception) -> None:
    """Unreachable (retried, state kept) or refused (the input is bad): said on the cluster,
    with when it began; the snapshot stored before stays the cluster's latest."""
    unreachable = isinstance(error, SourceUnreachable)
    state = Cluster.IngestState.UNREACHABLE if unreachable else Cluster.IngestState.REFUSED
    kinds = error.kinds if isinstance(error, SourceUnreachable) else cluster.ingest_kinds
    logger.warning("%s: ingest %s: %s", cluster.name, state.value, error)
    _set_ingest_status(cluster, state, str(error), now, kinds or {})


def _set_ingest_status(
    cluster: Cluster, state: str, message: str, now: datetime, kinds: dict[str, Any]
) -> None:
    since = cluster.ingest_since if cluster.ingest_state == state and cluster.ingest_since else now
    fields = {
        "ingest_state": state,
        "ingest_message": message,
        "ingest_since": since,
        "ingest_kinds": kinds,
    }
    Cluster.objects.filter(pk=cluster.pk).update(**fields)
    for name, value in fields.items():
        setattr(cluster, name, value)


# --- locks ----------------------------------------------------------------------------------


def acquire_ingest_lock(
    *, cluster_id: int, lock_seconds: int = DEFAULT_LOCK_SECONDS, holder: str = ""
) -> str | None:
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
                holder=holder[:200],
            )
    except IntegrityError:
        return None
    return token


def renew_ingest_lock(*, cluster_id: int, token: str, lock_seconds: int) -> bool:
    """Push the lock's expiry on (a long-running follower); False if it is no longer held
    (it lapsed and another ingester took it)."""
    expires_at = timezone.now() + timedelta(seconds=lock_seconds)
    return bool(
        IngestLock.objects.filter(cluster_id=cluster_id, token=token).update(expires_at=expires_at)
    )


def ingest_lock_holder(*, cluster_id: int) -> IngestLock | None:
    return IngestLock.objects.filter(cluster_id=cluster_id, expires_at__gt=timezone.now()).first()


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
        fields = {**node_group_row_fields(obj), "origin": NodeGroup.Origin.PROJECT, "source": ""}
        row, _created = NodeGroup.objects.update_or_create(
            cluster=cluster, name=obj["metadata"]["name"], defaults=fields
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
