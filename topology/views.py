"""Dashboard pages of the topology app: the overview and the topology heatmap.

Every cluster page shares one context (``cluster_page``): the cluster picker,
the snapshot picker (``?snapshot=<id>`` shows the same page as of that
snapshot) and the evaluation of the chosen snapshot — a fixed number of
queries, whatever the cluster's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from recommender.models import Evaluation
from reservations.models import Reservation
from topology import charts
from topology.models import Cluster, Snapshot

SNAPSHOT_PICKER_LIMIT = 50
STALE_AFTER = timedelta(minutes=15)
STALE_INTERVAL_FACTOR = 3
HEATMAP_FILTER_KEYS = ("node_group", "model", "reservation", "team")


@dataclass
class ClusterPage:
    """What every cluster page shows above its own content."""

    cluster: Cluster
    clusters: list[Cluster]
    snapshots: list[Snapshot]
    snapshot: Snapshot | None
    evaluation: Evaluation | None
    is_latest: bool

    def context(self, section: str) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "clusters": self.clusters,
            "snapshots": self.snapshots,
            "snapshot": self.snapshot,
            "evaluation": self.evaluation,
            "result": self.evaluation.result if self.evaluation else None,
            "is_latest": self.is_latest,
            "section": section,
        }


def requested_snapshot_id(request: HttpRequest) -> int | None:
    raw = request.GET.get("snapshot", "")
    if not raw:
        return None
    if not raw.isdigit():
        raise Http404("snapshot must be a snapshot id")
    return int(raw)


def cluster_page(request: HttpRequest, cluster_id: int) -> ClusterPage:
    """Load the cluster, the picker lists and the chosen snapshot's evaluation (4 queries)."""
    clusters = list(Cluster.objects.order_by("name").only("id", "name"))
    cluster = next((c for c in clusters if c.id == cluster_id), None)
    if cluster is None:
        raise Http404("no such cluster")
    snapshots = list(
        Snapshot.objects.filter(cluster_id=cluster_id)
        .order_by("-taken_at")
        .only("id", "taken_at", "errors")[:SNAPSHOT_PICKER_LIMIT]
    )
    wanted = requested_snapshot_id(request)
    snapshot = snapshots[0] if snapshots and wanted is None else None
    if wanted is not None:
        snapshot = next((s for s in snapshots if s.id == wanted), None)
        if snapshot is None:
            snapshot = (
                Snapshot.objects.filter(cluster_id=cluster_id, id=wanted)
                .only("id", "taken_at", "errors")
                .first()
            )
            if snapshot is None:
                raise Http404("no such snapshot in this cluster")
            snapshots.append(snapshot)
    evaluation = Evaluation.objects.filter(snapshot_id=snapshot.id).first() if snapshot else None
    is_latest = snapshot is None or (bool(snapshots) and snapshot.id == snapshots[0].id)
    return ClusterPage(cluster, clusters, snapshots, snapshot, evaluation, is_latest)


# --- overview ------------------------------------------------------------------


def stale_after(cluster: Cluster) -> timedelta:
    """3 × the cluster's ingest interval, capped at 15 minutes (15 minutes when unknown)."""
    interval = (cluster.source_settings or {}).get("intervalSeconds")
    if isinstance(interval, int | float) and interval > 0:
        return min(STALE_AFTER, timedelta(seconds=STALE_INTERVAL_FACTOR * interval))
    return STALE_AFTER


def stranded_gpus(result: dict[str, Any] | None) -> int:
    """GPUs the naive autoscaler would add that the scheduler still could not use."""
    if not result:
        return 0
    return sum(
        int((workload.get("naive") or {}).get("strandedGpus") or 0)
        for workload in result.get("workloads", [])
    )


def idle_reserved_cost(result: dict[str, Any] | None) -> float:
    if not result:
        return 0.0
    return sum(float(r.get("costPerHour") or 0) for r in result.get("idleReservations", []))


def overview_row(
    cluster: Cluster, snapshot: Snapshot | None, evaluation: Evaluation | None
) -> dict[str, Any]:
    now = timezone.now()
    age = now - snapshot.taken_at if snapshot else None
    result = evaluation.result if evaluation else None
    return {
        "cluster": cluster,
        "snapshot": snapshot,
        "evaluation": evaluation,
        "age": age,
        "stale": age is None or age > stale_after(cluster),
        "errors": list(snapshot.errors or []) if snapshot else [],
        "stranded_gpus": stranded_gpus(result),
        "idle_reserved_cost_per_hour": idle_reserved_cost(result),
    }


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    """Per cluster: GPU counts, idle reserved and stranded $/h, pending, freshness (3 queries)."""
    latest = Snapshot.objects.filter(cluster=OuterRef("pk")).order_by("-taken_at").values("id")[:1]
    clusters = list(Cluster.objects.order_by("name").annotate(latest_snapshot_id=Subquery(latest)))
    snapshot_ids = [c.latest_snapshot_id for c in clusters if c.latest_snapshot_id]
    snapshots = {
        s.id: s
        for s in Snapshot.objects.filter(id__in=snapshot_ids).only(
            "id", "cluster_id", "taken_at", "errors"
        )
    }
    evaluations = {
        e.snapshot_id: e for e in Evaluation.objects.filter(snapshot_id__in=snapshot_ids)
    }
    rows = [
        overview_row(
            cluster,
            snapshots.get(cluster.latest_snapshot_id),
            evaluations.get(cluster.latest_snapshot_id),
        )
        for cluster in clusters
    ]
    return render(request, "dashboard/overview.html", {"rows": rows, "section": "overview"})


# --- topology heatmap ------------------------------------------------------------


def heatmap_filters(request: HttpRequest, cluster_id: int) -> charts.HeatmapFilters:
    team = request.GET.get("team", "").strip()
    team_reservations: frozenset[str] = frozenset()
    if team:
        team_reservations = frozenset(
            reservation.name
            for reservation in Reservation.objects.filter(cluster_id=cluster_id).only(
                "name", "owner_namespaces"
            )
            if team in (reservation.owner_namespaces or [])
        )
    return charts.HeatmapFilters(
        node_group=request.GET.get("node_group", "").strip(),
        model=request.GET.get("model", "").strip(),
        reservation=request.GET.get("reservation", "").strip(),
        team=team,
        team_reservations=team_reservations,
    )


def heatmap_cells(page: ClusterPage) -> list[dict[str, Any]]:
    return list((page.evaluation.result or {}).get("heatmap", [])) if page.evaluation else []


@login_required
def topology_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id)
    cells = heatmap_cells(page)
    domain = charts.parse_domain(request.GET.get("domain", ""))
    view = charts.heatmap_view(cells, domain=domain, filters=heatmap_filters(request, cluster_id))
    context = page.context("topology")
    context.update(
        {
            "heatmap": view,
            "options": charts.filter_options(cells),
            "filters": {key: request.GET.get(key, "") for key in HEATMAP_FILTER_KEYS},
            "data_url": reverse("topology-data", args=[cluster_id]),
        }
    )
    return render(request, "dashboard/topology.html", context)


@login_required
def topology_data(request: HttpRequest, cluster_id: int) -> JsonResponse:
    """The heatmap payload for ``?domain=&snapshot=&<filters>`` (page updates and benchmark)."""
    page = cluster_page(request, cluster_id)
    domain = charts.parse_domain(request.GET.get("domain", ""))
    view = charts.heatmap_view(
        heatmap_cells(page), domain=domain, filters=heatmap_filters(request, cluster_id)
    )
    view["snapshot"] = page.snapshot.id if page.snapshot else None
    view["evaluation"] = page.evaluation.id if page.evaluation else None
    return JsonResponse(view)
