"""The workload page: one pending workload's story, in the order a platform engineer asks.

    what it asks for ─► why the scheduler says no (per node group, per domain, per node)
    ─► what the modelled autoscaler would do, and what that costs or strands
    ─► what to do instead, priced, with the YAML ─► the reservation it could use
    ─► where it is on the heatmap ─► its history across snapshots

The verdict, plans and recommendations are the stored evaluation's; the per-node
breakdown is the scheduler engine's on the shown snapshot, summed up per node group and
domain when the evaluation was stored (``selectors.workload_breakdown``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode

from capacityweb import visibility
from recommender import selectors, whatif
from recommender.engine.scheduler.breakdown_summary import BreakdownSummary, Tally
from recommender.models import Evaluation
from recommender.views import (
    ClusterPage,
    cluster_page,
    page_labels,
    redacted_verdict,
    with_prices_known,
)
from reservations.utilisation.selectors import workload_utilisation
from topology import charts

HISTORY_SHOWN = 50


@login_required
def workload_page(request: HttpRequest, cluster_id: int, namespace: str, name: str) -> HttpResponse:
    """GET: the story; POST: the same page with the what-if form's answer beside it."""
    page = cluster_page(request, cluster_id)
    key = f"{namespace}/{name}"
    verdict = (
        selectors.verdict_of(evaluation=page.evaluation, workload=key)
        if page.evaluation is not None
        else None
    )
    if verdict is None or page.evaluation is None:
        context = page.context("pending")
        context["workload"] = key
        return render(request, "dashboard/workload_missing.html", context, status=404)
    result = page.evaluation.result or {}
    breakdown = selectors.workload_breakdown(evaluation=page.evaluation, workload=key)
    labels = page_labels(request, page.evaluation)
    used = set((verdict.joint or {}).get("reservations") or ())
    recommendations = [
        r for r in selectors.recommendations(evaluation=page.evaluation) if key in r.workloads
    ]
    for rec in recommendations:
        rec.yaml = labels.text(rec.yaml or "")
    context = page.context("pending")
    context.update(
        {
            "workload": key,
            "v": redacted_verdict(verdict, labels),
            "item": shown_item(result, key, labels),
            "diagnosis": (result.get("diagnoses") or {}).get(key) or {},
            "breakdown": breakdown,
            "utilisation": workload_utilisation(cluster_id, key),
            **breakdown_tables(breakdown, page),
            "recommendations": with_prices_known(recommendations, result),
            "reservations": visibility.idle_reservations(
                [r for r in result.get("idleReservations") or [] if r.get("name") in used], labels
            ),
            "history": history(cluster_id, key),
            **what_if_context(request, page.evaluation, key, labels),
        }
    )
    status = context.get("what_if_status", 200)
    return render(request, "dashboard/workload.html", context, status=status)


def shown_item(result: dict[str, Any], key: str, labels: Any) -> dict[str, Any]:
    """The workload's JSON entry as the viewer may read it (its relaxations included)."""
    item = next((w for w in result.get("workloads") or [] if w["name"] == key), {})
    return visibility.workload(item, labels) if item else {}


def what_if_context(
    request: HttpRequest, evaluation: Evaluation, key: str, labels: Any
) -> dict[str, Any]:
    """The what-if form's choices, and on POST its answer (or the field it refuses)."""
    result = evaluation.result or {}
    context: dict[str, Any] = {
        "what_if_groups": [g.get("name") for g in result.get("nodeGroups") or [] if g.get("name")],
        "what_if_levels": charts.LEVELS[:3],  # level names the edit reads as well as keys
        "what_if_form": {},
    }
    if request.method != "POST":
        return context
    data = {k: request.POST.get(k, "") for k in ("kind", "target", "amount")}
    context["what_if_form"] = data
    try:
        context["what_if"] = whatif.run_what_if(
            evaluation=evaluation, workload=key, data=data, labels=labels
        )
    except whatif.WhatIfError as error:
        context["what_if_error"] = str(error)
        context["what_if_status"] = 503 if isinstance(error, whatif.WhatIfTimeout) else 400
    return context


@login_required
def workload_page_by_name(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """The same page for ``?workload=<ns>/<name>``: for a name the path cannot carry."""
    namespace, _, name = request.GET.get("workload", "").partition("/")
    return workload_page(request, cluster_id, namespace, name)


def breakdown_tables(breakdown: BreakdownSummary | None, page: ClusterPage) -> dict[str, Any]:
    """Per node group, per domain (at the level the workload needs, else a fallback)
    and per node: nodes, free GPUs and each filter reason's count ("fits" where none)."""
    if breakdown is None or not breakdown.node_count:
        return {"groups": [], "domains": [], "nodes": [], "nodes_more": 0, "level": None}
    level = breakdown.level
    links = heatmap_links(page.evaluation, [row.first_node for row in breakdown.domains], level)
    return {
        "groups": [{**tally_row(row), "group": row.name} for row in breakdown.groups],
        "domains": [
            {**tally_row(row), "domain": row.name, "heatmap": links.get(row.first_node)}
            for row in breakdown.domains
        ],
        "level": level,
        "nodes": breakdown.nodes,
        "nodes_more": breakdown.nodes_more,
    }


def tally_row(tally: Tally) -> dict[str, Any]:
    return {
        "nodes": tally.nodes,
        "gpus": tally.gpus,
        "free_gpus": tally.free_gpus,
        "reasons": tally.reasons,
    }


def heatmap_links(
    evaluation: Evaluation | None, node_names: list[str], level: str | None
) -> dict[str, str]:
    """Node → the heatmap URL of its domain at ``level`` (nodes with no GPU have none)."""
    if evaluation is None or not node_names:
        return {}
    depth = charts.LEVELS.index(level) + 1 if level in charts.LEVELS else charts.NODE_DEPTH
    url = reverse("topology", args=[evaluation.cluster_id])
    links = {}
    for row in selectors.node_places(evaluation=evaluation, names=node_names):
        path = [row.zone, row.block, row.rack, row.name][:depth]
        domain = "/".join(charts.UNKNOWN if segment is None else segment for segment in path)
        links[row.name] = f"{url}?{urlencode({'domain': domain})}"
    return links


def history(cluster_id: int, key: str) -> list[dict[str, Any]]:
    """The workload in each evaluation listing it, newest first, with the GPU-hours it
    had waited by then since first seen pending (``pending_since``)."""
    rows = []
    for verdict in selectors.workload_history(
        cluster_id=cluster_id, workload=key, limit=HISTORY_SHOWN
    ):
        taken_at = verdict.evaluation.taken_at
        hours = (
            (taken_at - verdict.pending_since).total_seconds() / 3600
            if verdict.pending_since
            else None
        )
        rows.append(
            {
                "verdict": verdict,
                "taken_at": taken_at,
                "snapshot": verdict.evaluation.snapshot_id,
                "gpu_hours": round(verdict.requested_gpus * hours, 1)
                if hours is not None
                else None,
            }
        )
    return rows
