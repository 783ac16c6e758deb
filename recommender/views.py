"""Dashboard pages of the recommender: why each workload is pending, and what to add.

Every cluster page (these, the topology heatmap and the reservations page)
shares one context (``cluster_page``): the cluster picker, the snapshot picker
(``?snapshot=<id>`` shows the same page as of that snapshot) and the evaluation
of the chosen snapshot — a fixed number of queries, whatever the cluster's size.
The page filters are the API's FilterSets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from recommender import selectors
from recommender.engine.evaluate.report import group_yaml
from recommender.filters import DISAGREEMENT_CLASSES, WorkloadVerdictFilterSet
from recommender.models import Evaluation, WorkloadVerdict
from topology import selectors as topology_selectors
from topology.models import Cluster, Snapshot

SNAPSHOT_PICKER_LIMIT = 50
VERDICT_CHOICES = WorkloadVerdict.Verdict.choices


@dataclass
class ClusterPage:
    """What every cluster page shows above its own content."""

    cluster: Cluster
    clusters: list[Cluster]
    snapshots: list[Snapshot]
    snapshot: Snapshot | None
    evaluation: Evaluation | None
    is_latest: bool
    newer_snapshot: Snapshot | None = None  # ingested after the one shown, not evaluated yet

    def context(self, section: str) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "clusters": self.clusters,
            "snapshots": self.snapshots,
            "snapshot": self.snapshot,
            "evaluation": self.evaluation,
            "result": self.evaluation.result if self.evaluation else None,
            "is_latest": self.is_latest,
            "newer_snapshot": self.newer_snapshot,
            "section": section,
        }


def requested_snapshot_id(request: HttpRequest) -> int | None:
    raw = request.GET.get("snapshot", "")
    if not raw:
        return None
    if not raw.isdigit():
        raise Http404("snapshot must be a snapshot id")
    return int(raw)


def cluster_page(request: HttpRequest, cluster_id: int, *, with_result: bool = True) -> ClusterPage:
    """Load the cluster, the picker lists and the shown snapshot's evaluation (4 queries).

    Live (no ``?snapshot=``), the page shows the latest *evaluated* snapshot: a snapshot
    ingested since is being evaluated, and showing it would empty every table until its
    evaluation is stored. That newer snapshot is named (``newer_snapshot``) so the page
    can say so; the live update that brings its evaluation re-renders the page without it.
    ``with_result=False`` leaves the evaluation's result JSON unread, for views that
    need only its id and columns.
    """
    clusters = topology_selectors.cluster_choices()
    cluster = next((c for c in clusters if c.id == cluster_id), None)
    if cluster is None:
        raise Http404("no such cluster")
    snapshots = topology_selectors.recent_snapshots(
        cluster_id=cluster_id, limit=SNAPSHOT_PICKER_LIMIT
    )
    wanted = requested_snapshot_id(request)
    if wanted is None:
        return live_cluster_page(cluster, clusters, snapshots, with_result=with_result)
    snapshot = next((s for s in snapshots if s.id == wanted), None)
    if snapshot is None:
        snapshot = topology_selectors.snapshot_of_cluster(cluster_id=cluster_id, snapshot_id=wanted)
        if snapshot is None:
            raise Http404("no such snapshot in this cluster")
        snapshots.append(snapshot)
    evaluation = selectors.evaluation_of_snapshot(snapshot_id=snapshot.id, with_result=with_result)
    is_latest = snapshot.id == snapshots[0].id
    return ClusterPage(cluster, clusters, snapshots, snapshot, evaluation, is_latest)


def live_cluster_page(
    cluster: Cluster, clusters: list[Cluster], snapshots: list[Snapshot], *, with_result: bool
) -> ClusterPage:
    """The page as of the cluster's latest evaluation, naming a newer snapshot if any."""
    evaluation = selectors.latest_evaluation_of_cluster(
        cluster_id=cluster.id, with_result=with_result
    )
    if evaluation is None:  # nothing evaluated yet: the newest snapshot, with its notice
        return ClusterPage(cluster, clusters, snapshots, next(iter(snapshots), None), None, True)
    snapshot = next((s for s in snapshots if s.id == evaluation.snapshot_id), None)
    if snapshot is None:  # older than the picker's list: 50 snapshots since, none evaluated
        snapshot = evaluation.snapshot
        snapshots.append(snapshot)
    newer = snapshots[0] if snapshots[0].taken_at > snapshot.taken_at else None
    return ClusterPage(cluster, clusters, snapshots, snapshot, evaluation, True, newer)


def pending_rows(verdicts: list[WorkloadVerdict], result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each verdict with the scheduler's diagnosis from the evaluation JSON."""
    diagnoses = result.get("diagnoses") or {}
    return [
        {"verdict": verdict, "diagnosis": diagnoses.get(verdict.workload) or {}}
        for verdict in verdicts
    ]


@login_required
def pending_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """Scheduler diagnosis, naive action and what it strands, joint recommendation."""
    page = cluster_page(request, cluster_id)
    chosen = {key: request.GET.get(key, "") for key in ("verdict", "disagreement", "namespace")}
    rows: list[dict[str, Any]] = []
    filterset = None
    result = (page.evaluation.result or {}) if page.evaluation is not None else {}
    if page.evaluation is not None:
        data = {key: value for key, value in chosen.items() if value}
        data["evaluation"] = str(page.evaluation.id)
        filterset = WorkloadVerdictFilterSet(data, queryset=selectors.all_verdicts())
        verdicts = list(filterset.qs.order_by("workload")) if filterset.is_valid() else []
        rows = pending_rows(verdicts, page.evaluation.result or {})
    context = page.context("pending")
    context.update(
        {
            "rows": rows,
            "chosen": chosen,
            "filter_errors": filterset.errors if filterset is not None else {},
            "verdict_choices": VERDICT_CHOICES,
            "disagreement_classes": DISAGREEMENT_CLASSES,
            "not_modelled": not_modelled(result),
        }
    )
    return render(request, "dashboard/pending.html", context)


NOT_MODELLED_SHOWN = 200


def not_modelled(result: dict[str, Any]) -> dict[str, Any]:
    """What the evaluation read but does not model (kinds ignored, fields unsupported),
    the first ``NOT_MODELLED_SHOWN`` fields listed and the rest counted."""
    unsupported = result.get("unsupported") or []
    return {
        "ignored": result.get("ignored") or [],
        "unsupported": unsupported[:NOT_MODELLED_SHOWN],
        "more": max(0, len(unsupported) - NOT_MODELLED_SHOWN),
    }


@login_required
def recommendations_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """Each scale-up with the YAML to apply and the workloads it unblocks."""
    page = cluster_page(request, cluster_id)
    recommendations = (
        list(selectors.recommendations(evaluation=page.evaluation)) if page.evaluation else []
    )
    context = page.context("recommendations")
    context["recommendations"] = recommendations
    result = (page.evaluation.result or {}) if page.evaluation else {}
    groups = {g["name"]: g for g in result.get("nodeGroups", [])}  # where each was found
    for rec in recommendations:
        rec.group_source = groups.get(rec.node_group, {}).get("source")
        rec.group_price_source = groups.get(rec.node_group, {}).get("priceSource")
    context["idle_reservations"] = result.get("idleReservations", [])
    context["group_totals"] = [
        {**total, "yaml": group_yaml(total)}
        for total in result.get("nodeGroupTotals", [])
        if total["cards"] > 1 and not (groups.get(total["nodeGroup"]) or {}).get("autoscaler")
    ]
    return render(request, "dashboard/recommendations.html", context)
