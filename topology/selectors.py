"""Reads of the topology app: clusters and their snapshots, with bounded queries.

The heatmap payload is cached::

    data.json ─► heatmap_etag(evaluation, domain, filters)   (no query: id + stored_at)
                   ├─ client sent it (If-None-Match) ─► 304, nothing read or built
                   └─ heatmap_json ─► caches["heatmap"] hit ─► the stored bytes
                                      miss ─► result["heatmap"] only ─► charts ─► bytes, kept

An evaluation's result is immutable once stored (rewritten only by a re-run of
the same snapshot, which moves ``stored_at``), so the key never needs
invalidating: a new evaluation is a new key, old keys age out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from django.core.cache import caches
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import QuerySet, Subquery

from recommender.models import Evaluation
from topology import charts
from topology.models import Cluster, NodeGroup, Snapshot

HEATMAP_CACHE = "heatmap"
HEATMAP_PAYLOAD_VERSION = 1  # bump when the payload's shape changes: old entries stop matching


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


def shown_evaluation(cluster_id: int, snapshot_id: int | None) -> Evaluation | None:
    """The evaluation a cluster page shows (``?snapshot=`` or the latest snapshot's), in one
    query, without its result JSON; None when there is none (``cluster_page`` says why)."""
    if snapshot_id is None:
        latest = Snapshot.objects.filter(cluster_id=cluster_id).order_by("-taken_at")
        evaluations = Evaluation.objects.filter(snapshot_id=Subquery(latest.values("id")[:1]))
    else:
        evaluations = Evaluation.objects.filter(snapshot_id=snapshot_id)
    return evaluations.filter(cluster_id=cluster_id).defer("result").first()


def heatmap_etag(
    *, evaluation: Evaluation, domain: Sequence[str], filters: charts.HeatmapFilters
) -> str:
    """A strong ETag naming one heatmap payload: evaluation, its write, domain and filters."""
    identity = [
        HEATMAP_PAYLOAD_VERSION,
        evaluation.pk,
        evaluation.stored_at.isoformat(),
        list(domain),
        [filters.node_group, filters.model, filters.reservation, filters.team],
        sorted(filters.team_reservations),
    ]
    digest = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:32]
    return f'"{digest}"'


def heatmap_json(
    *, evaluation: Evaluation, domain: Sequence[str], filters: charts.HeatmapFilters
) -> bytes:
    """The heatmap payload as JSON bytes, built once per process and ETag, then kept."""
    cache = caches[HEATMAP_CACHE]
    key = "heatmap:" + heatmap_etag(evaluation=evaluation, domain=domain, filters=filters)
    body: bytes | None = cache.get(key)
    if body is None:
        cells = (
            Evaluation.objects.filter(pk=evaluation.pk)
            .values_list("result__heatmap", flat=True)
            .first()
        )
        view = charts.heatmap_view(cells or [], domain=domain, filters=filters)
        view["snapshot"] = evaluation.snapshot_id
        view["evaluation"] = evaluation.pk
        body = json.dumps(view, cls=DjangoJSONEncoder).encode()
        cache.set(key, body)
    return body
