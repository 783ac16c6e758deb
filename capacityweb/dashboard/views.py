"""The dashboard pages that join the apps: the overview and the topology heatmap.

Both show clusters (topology) with their evaluations (recommender) and the
heatmap filters by team (reservations), so they live above the three apps and
read each through its selectors. The cluster page context (pickers and the
chosen snapshot's evaluation) is the recommender's ``cluster_page``, shared by
every cluster page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import http_date
from django.utils.safestring import mark_safe

from capacityweb import visibility
from capacityweb.cache import stable_digest
from capacityweb.dashboard import sparklines
from recommender import selectors
from recommender.filters import NodeFilterSet
from recommender.models import Evaluation
from recommender.views import ClusterPage, cluster_page, page_labels, requested_snapshot_id
from reservations import selectors as reservation_selectors
from topology import charts, figures, selectors as topology_selectors
from topology.models import Cluster, Snapshot

SPARKLINE_SPAN = timedelta(hours=24)
STALE_AFTER = timedelta(minutes=15)
STALE_INTERVAL_FACTOR = 3
OVERVIEW_CARDS_SECONDS = 10
HEATMAP_FILTER_KEYS = ("node_group", "gpu_model", "reservation", "team")  # NodeFilterSet's


# --- overview ------------------------------------------------------------------


def stale_after(cluster: Cluster) -> timedelta:
    """3 × the cluster's ingest interval, capped at 15 minutes (15 minutes when unknown)."""
    interval = (cluster.source_settings or {}).get("intervalSeconds")
    if isinstance(interval, int | float) and interval > 0:
        return min(STALE_AFTER, timedelta(seconds=STALE_INTERVAL_FACTOR * interval))
    return STALE_AFTER


def overview_row(
    cluster: Cluster,
    snapshot: Snapshot | None,
    evaluation: Evaluation | None,
    viewer: visibility.Viewer = visibility.STAFF,
) -> dict[str, Any]:
    """A card: the latest snapshot's freshness and errors, the latest *evaluation*'s figures
    (an older snapshot's while the latest is being evaluated, which the card says); the
    errors as ``viewer`` may read them (capacityweb.visibility.snapshot_errors)."""
    now = timezone.now()
    age = now - snapshot.taken_at if snapshot else None
    newer = bool(snapshot and evaluation and evaluation.snapshot_id != snapshot.id)
    return {
        "cluster": cluster,
        "snapshot": snapshot,
        "evaluation": evaluation,
        "age": age,
        "stale": age is None or age > stale_after(cluster),
        "being_evaluated": newer and snapshot.evaluation_state != Snapshot.EvaluationState.FAILED,
        "evaluation_failed": newer and snapshot.evaluation_state == Snapshot.EvaluationState.FAILED,
        "errors": shown_errors(cluster, snapshot, viewer),
    }


def shown_errors(
    cluster: Cluster, snapshot: Snapshot | None, viewer: visibility.Viewer
) -> list[dict[str, Any]]:
    """The snapshot's errors, another team's reservation relabelled (one query, only when
    there are errors and the viewer is not staff)."""
    errors = list(snapshot.errors or []) if snapshot else []
    if not errors or viewer.sees_all:
        return errors
    owners = topology_selectors.stored_reservation_owners(cluster.id)
    return visibility.snapshot_errors(errors, viewer.labels(owners))


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    """Per cluster: GPU counts, idle reserved and stranded $/h, pending, freshness.

    One query reads each cluster with its latest snapshot's and evaluation's ids
    (``selectors.overview_identity``); the cluster cards rendered from them are kept in the
    default cache (shared by the web workers) for OVERVIEW_CARDS_SECONDS under those
    ids and the viewer's view (``Viewer.key``: staff, or which teams), so a new snapshot
    or evaluation shows at once and only the "… ago" figures may lag by that much. On a
    miss, three more queries read the clusters, the snapshots and the evaluations'
    figures (Evaluation columns: the result JSON, megabytes for a large cluster, is
    never loaded here); for a user who is not staff, one more reads the idle samples
    their figures count (capacityweb.visibility: no other team's money).
    """
    viewer = visibility.request_viewer(request)
    key = f"overview-cards:{stable_digest(selectors.overview_identity())}:{viewer.key()}"
    cards = cache.get(key)
    if cards is None:
        clusters = topology_selectors.clusters_with_latest_snapshot()
        cards = render_to_string(  # no request: the context processors do not run
            "dashboard/_overview_cards.html",
            {
                "rows": overview_rows(clusters, viewer),
                "currency": settings.CURRENCY,
                "own_teams_only": not viewer.sees_all,
            },
        )
        cache.set(key, cards, timeout=OVERVIEW_CARDS_SECONDS)
    context = {"cards": mark_safe(cards), "section": "overview"}  # noqa: S308 - rendered above
    return render(request, "dashboard/overview.html", context)


def overview_rows(
    clusters: list[Cluster], viewer: visibility.Viewer = visibility.STAFF
) -> list[dict[str, Any]]:
    """Clusters annotated with ``latest_snapshot_id`` → the cards' rows (3 queries; 4 when
    the viewer is not staff: the idle samples their money figures count)."""
    snapshot_ids = [c.latest_snapshot_id for c in clusters if c.latest_snapshot_id]
    snapshots = topology_selectors.snapshots_by_id(snapshot_ids)
    evaluations = selectors.latest_evaluation_columns(c.id for c in clusters)  # see overview_row
    end = timezone.now()
    history = day_history([c.id for c in clusters], start=end - SPARKLINE_SPAN)
    idle = idle_costs(viewer, evaluations.values(), history)
    rows = []
    for cluster in clusters:
        evaluation = evaluations.get(cluster.id)
        row = overview_row(cluster, snapshots.get(cluster.latest_snapshot_id), evaluation, viewer)
        row["idle_cost_per_hour"] = (
            idle(evaluation.id, evaluation.idle_reserved_cost_per_hour) if evaluation else None
        )
        points = [
            (at, pending, round(idle(pk, idle_cost) + stranded, 2))
            for pk, at, pending, idle_cost, stranded in history.get(cluster.id, [])
        ]
        row["pending_sparkline"] = sparklines.sparkline(
            [(at, pending) for at, pending, _waste in points], start=end - SPARKLINE_SPAN, end=end
        )
        row["waste_sparkline"] = sparklines.sparkline(
            [(at, waste) for at, _pending, waste in points], start=end - SPARKLINE_SPAN, end=end
        )
        rows.append(row)
    return rows


HistoryPoint = tuple[int, datetime, float, float, float]


def day_history(cluster_ids: list[int], *, start: datetime) -> dict[int, list[HistoryPoint]]:
    """Per cluster, each stored evaluation since ``start``: (id, taken_at, pending GPUs,
    idle reserved $/h, stranded $/h of the naive autoscaler). One query."""
    rows = (
        Evaluation.objects.filter(cluster_id__in=cluster_ids, taken_at__gte=start)
        .annotate(pending_gpus=Sum("verdicts__gpus"))
        .values_list(
            "cluster_id",
            "id",
            "taken_at",
            "pending_gpus",
            "idle_reserved_cost_per_hour",
            "stranded_cost_per_hour",
        )
        .order_by("cluster_id", "taken_at")
    )
    history: dict[int, list[HistoryPoint]] = {}
    for cluster_id, pk, taken_at, pending, idle_cost, stranded_cost in rows:
        history.setdefault(cluster_id, []).append(
            (pk, taken_at, float(pending or 0), idle_cost, stranded_cost)
        )
    return history


def idle_costs(
    viewer: visibility.Viewer,
    latest: Iterable[Evaluation],
    history: dict[int, list[HistoryPoint]],
) -> Callable[[int, float], float]:
    """(evaluation id, its cluster-wide idle $/h) → the idle $/h the viewer's figures
    show: the cluster's for staff; for anyone else the reservations they see
    (capacityweb.visibility: no other team's money, not even summed; one query)."""
    if viewer.sees_all:
        return lambda _pk, cluster_wide: cluster_wide
    ids = {e.id for e in latest} | {p[0] for points in history.values() for p in points}
    seen = reservation_selectors.idle_cost_seen(evaluation_ids=ids, viewer=viewer)
    return lambda pk, _cluster_wide: seen.get(pk, 0.0)


# --- topology heatmap ------------------------------------------------------------


def accepts_gzip(request: HttpRequest) -> bool:
    """Whether Accept-Encoding gives gzip (by name, else ``*``) a q-value above 0
    (RFC 9110 §12.5.3)."""
    weights = {}
    for coding in request.headers.get("Accept-Encoding", "").split(","):
        name, *parameters = (part.strip() for part in coding.split(";"))
        weight = 1.0
        for parameter in parameters:
            if parameter.lower().startswith("q="):
                try:
                    weight = float(parameter[2:])
                except ValueError:
                    weight = 0.0
        weights[name.lower()] = weight
    return weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0))) > 0


def heatmap_filters(request: HttpRequest, cluster_id: int) -> charts.HeatmapFilters:
    """The page's filters, read by the API's NodeFilterSet (same names, same meaning)."""
    team = request.GET.get("team", "").strip()
    team_reservations: frozenset[str] = frozenset()
    if team:
        team_reservations = reservation_selectors.reservation_names_of_team(
            cluster_id=cluster_id, team=team
        )
    filterset = NodeFilterSet({key: request.GET.get(key, "") for key in HEATMAP_FILTER_KEYS})
    return filterset.heatmap_filters(team_reservations)


def heatmap_cells(page: ClusterPage) -> list[dict[str, Any]]:
    return list((page.evaluation.result or {}).get("heatmap", [])) if page.evaluation else []


@login_required
def topology_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id)
    cells = visibility.heatmap_cells(heatmap_cells(page), page_labels(request, page.evaluation))
    domain = charts.parse_domain(request.GET.get("domain", ""))
    view = charts.heatmap_view(cells, domain=domain, filters=heatmap_filters(request, cluster_id))
    context = page.context("topology")
    context.update(
        {
            "heatmap": view,
            "options": charts.filter_options(cells),
            "filters": {key: request.GET.get(key, "") for key in HEATMAP_FILTER_KEYS},
            "data_url": reverse("topology-data", args=[cluster_id]),
            "gpu_figures": figures.cluster_gpu_figures(
                page.evaluation.result or {} if page.evaluation else {}
            ),
        }
    )
    return render(request, "dashboard/topology.html", context)


@login_required
def topology_data(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """The heatmap payload for ``?domain=&snapshot=&<filters>`` (page updates and benchmark).

    Built once per evaluation, domain and filters and then served from the cache
    (recommender.selectors); the ETag names it, so a client that has it gets a 304.
    Sent gzip-compressed (kept so, not compressed per request) to a client that accepts
    it, as browsers do: 38 kB instead of 0.8 MB for a 1k-node cluster.
    One query finds the evaluation shown (the picker lists of ``cluster_page`` are
    not needed here).
    ``no-cache``: the same URL shows the next evaluation, so clients revalidate.
    """
    domain = charts.parse_domain(request.GET.get("domain", ""))
    filters = heatmap_filters(request, cluster_id)
    evaluation = selectors.shown_evaluation(cluster_id, requested_snapshot_id(request))
    if evaluation is None:  # no cluster or snapshot (404), or a snapshot not evaluated yet
        page = cluster_page(request, cluster_id, with_result=False)
        view = charts.heatmap_view([], domain=domain, filters=filters)
        view.update(snapshot=page.snapshot.id if page.snapshot else None, evaluation=None)
        return JsonResponse(view)
    labels = visibility.request_viewer(request).labels(evaluation.reservation_owners)
    payload = {"evaluation": evaluation, "domain": domain, "filters": filters, "labels": labels}
    encoding = "gzip" if accepts_gzip(request) else "identity"
    etag = selectors.heatmap_etag(**payload, encoding=encoding)
    last_modified = int(evaluation.stored_at.timestamp())
    response = get_conditional_response(request, etag=etag, last_modified=last_modified)
    if response is None:
        body = selectors.heatmap_json(**payload, encoding=encoding)
        response = HttpResponse(body, content_type="application/json")
        if encoding == "gzip":
            response.headers["Content-Encoding"] = "gzip"
    patch_vary_headers(response, ["Accept-Encoding"])
    response.headers["ETag"] = etag
    response.headers["Last-Modified"] = http_date(last_modified)
    response.headers["Cache-Control"] = "private, no-cache"
    return response
