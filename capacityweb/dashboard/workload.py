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

import math
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode

from capacityweb import visibility
from capacityweb.api.throttling import allow_scoped
from recommender import selectors
from recommender.engine.scheduler.breakdown_summary import BreakdownSummary, Tally
from recommender.models import Evaluation
from recommender.views import (
    ClusterPage,
    cluster_page,
    page_labels,
    redacted_verdict,
    with_actions,
    with_prices_known,
)
from recommender.whatif import service as whatif
from recommender.whatif.api import state_json
from reservations.utilisation.selectors import workload_utilisation
from topology import charts

HISTORY_SHOWN = 50


@login_required
def workload_page(request: HttpRequest, cluster_id: int, namespace: str, name: str) -> HttpResponse:
    """GET: the story (with ``?what-if=<id>``: that what-if's state or answer beside it);
    POST: the what-if form's request queued, then the page of it (303), or the refusal."""
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
    with_actions(recommendations, result, labels)
    context = page.context("pending")
    context.update(
        {
            "workload": key,
            "v": redacted_verdict(verdict, labels),
            "item": shown_item(result, key, labels),
            "diagnosis": (result.get("diagnoses") or {}).get(key) or {},
            "breakdown": breakdown,
            "utilisation": workload_utilisation(
                cluster_id, key, operator=visibility.sees_sources(request.user)
            ),
            **breakdown_tables(breakdown, page),
            "recommendations": with_prices_known(recommendations, result),
            "reservations": visibility.idle_reservations(
                [r for r in result.get("idleReservations") or [] if r.get("name") in used], labels
            ),
            "history": history(cluster_id, key),
            **what_if_context(request, page.evaluation, key, labels),
        }
    )
    if "what_if_queued" in context:  # POST, redirect, GET: a reload asks nothing again
        query = urlencode({**request.GET.dict(), "what-if": context["what_if_queued"]})
        return HttpResponseRedirect(f"{request.path}?{query}#what-if", status=303)
    status = context.get("what_if_status", 200)
    response = render(request, "dashboard/workload.html", context, status=status)
    if "what_if_retry_after" in context:
        response["Retry-After"] = str(context["what_if_retry_after"])
    return response


def shown_item(result: dict[str, Any], key: str, labels: Any) -> dict[str, Any]:
    """The workload's JSON entry as the viewer may read it (its relaxations included)."""
    item = next((w for w in result.get("workloads") or [] if w["name"] == key), {})
    return visibility.workload(item, labels) if item else {}


def what_if_context(
    request: HttpRequest, evaluation: Evaluation, key: str, labels: Any
) -> dict[str, Any]:
    """The what-if form's choices; on POST the request queued (the page then shows it by
    ``?what-if=<id>``), or why not; on GET with ``what-if`` that request's state.

    The form is held to the API's rate (scope ``reports``, the same counter per user) and
    to the same limits (``recommender.whatif.service``: one running and one waiting per user, the
    queue's bound). A worker answers; the page says queued / working and its script
    (static/js/whatif.js) polls the request's state URL, then shows the answer.
    """
    result = evaluation.result or {}
    context: dict[str, Any] = {
        "what_if_groups": [g.get("name") for g in result.get("nodeGroups") or [] if g.get("name")],
        "what_if_levels": charts.LEVELS[:3],  # level names the edit reads as well as keys
        "what_if_form": {},
        "what_if_seconds": settings.WHAT_IF_SECONDS,
    }
    if request.method == "POST":
        return {**context, **what_if_submitted(request, evaluation, key, labels)}
    asked = whatif.request_of(user=request.user, request_id=request.GET.get("what-if"))
    if asked is None or asked.workload != key:
        return context
    shown = state_json(asked, visibility.request_viewer(request))
    context["what_if_form"] = asked.edit
    context["what_if_request"] = shown
    if shown["answer"] is not None:
        context["what_if"] = shown["answer"]
    if shown["error"]:
        field, reasons = next(iter(shown["error"].items()))
        context["what_if_error"] = f"{field}: {reasons[0]}"
    return context


def what_if_submitted(
    request: HttpRequest, evaluation: Evaluation, key: str, labels: Any
) -> dict[str, Any]:
    """The form's what-if queued (``what_if_queued``: its id), or the refusal to show."""
    data = {k: request.POST.get(k, "") for k in ("kind", "target", "amount")}
    refused: dict[str, Any] = {"what_if_form": data}
    allowed, wait_seconds = allow_scoped(request, "reports")
    if not allowed:
        retry_after = max(1, math.ceil(wait_seconds))
        return {
            **refused,
            "what_if_error": f"too many requests; try again in {retry_after} s",
            "what_if_status": 429,
            "what_if_retry_after": retry_after,
        }
    try:
        queued = whatif.submit(
            user=request.user, evaluation=evaluation, workload=key, data=data, labels=labels
        )
    except whatif.WhatIfError as error:
        return {**refused, "what_if_error": str(error), "what_if_status": 400}
    except whatif.WhatIfRefused as error:
        return {
            **refused,
            "what_if_error": f"{error}; try again in {error.retry_after_seconds} s",
            "what_if_status": error.status,
            "what_if_retry_after": error.retry_after_seconds,
        }
    return {"what_if_queued": queued.pk}


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
