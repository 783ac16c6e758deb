"""The utilisation page: allocated-but-idle GPUs per team and per pod, from the latest
measurement (``/clusters/<id>/utilisation/``).

The page and the API's ``reports/utilisation/`` read the same FilterSet (``team``)
and selectors. No measurement, or a failed one: the page says "utilisation unknown"
and why; a pod without data is listed as unknown, never as 0 %.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from capacityweb import visibility
from recommender.views import cluster_page
from reservations.models import UtilisationReport
from reservations.utilisation import selectors
from reservations.utilisation.charts import MAX_NODES, utilisation_figure
from reservations.utilisation.digest import rule_text

TOP_PODS = 25


def _by_waste(row: dict[str, Any]) -> tuple[float, float, str, str]:
    return (-(row["idle_cost"] or 0.0), -row["idle_gpu_hours"], row["namespace"], row["pod"])


def csv_url(parameters: dict[str, Any]) -> str:
    return f"{reverse('report-utilisation')}?{urlencode(parameters)}"


@login_required
def utilisation_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id, with_result=False)
    context = page.context("utilisation")
    data = {"cluster": str(cluster_id), "team": request.GET.get("team", "")}
    filterset = selectors.UtilisationFilterSet(data, queryset=UtilisationReport.objects.none())
    if not filterset.is_valid():
        context["filter_errors"] = filterset.errors
        return render(request, "dashboard/utilisation.html", context, status=400)
    team = filterset.arguments()["team"]
    reports = selectors.latest_reports([cluster_id])
    viewer = visibility.request_viewer(request)
    pods = selectors.report_rows(reports, viewer=viewer, group_by="pod", team=team)
    csv = {"format": "csv", "cluster": cluster_id, **({"team": team} if team else {})}
    context.update(
        {
            "summary": (
                selectors.report_summary(reports[0], operator=visibility.sees_sources(request.user))
                if reports
                else None
            ),
            "team": team,
            "rule": rule_text(),
            "layer_max_nodes": MAX_NODES,
            "teams": selectors.report_rows(reports, viewer=viewer, group_by="team", team=team),
            "pods": sorted(pods, key=_by_waste)[:TOP_PODS],
            "pods_total": len(pods),
            "layer": utilisation_figure(reports[0].result) if reports else None,
            "pods_unknown": sum(1 for p in pods if p["utilisation"] == selectors.UNKNOWN),
            "csv_pods": csv_url({**csv, "group_by": "pod"}),
            "csv_teams": csv_url({**csv, "group_by": "team"}),
        }
    )
    return render(request, "dashboard/utilisation.html", context)
