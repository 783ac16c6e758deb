"""Dashboard pages of the recommender: why each workload is pending, and what to add.

Both pages read one evaluation (the latest, or ``?snapshot=<id>``'s) through the
shared cluster page context, and the page filters are the API's FilterSets.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from recommender import selectors
from recommender.engine.evaluate.report import group_yaml
from recommender.filters import DISAGREEMENT_CLASSES, WorkloadVerdictFilterSet
from recommender.models import WorkloadVerdict
from topology.views import cluster_page

VERDICT_CHOICES = WorkloadVerdict.Verdict.choices


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
        filterset = WorkloadVerdictFilterSet(data, queryset=WorkloadVerdict.objects.all())
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
