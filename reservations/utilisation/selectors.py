"""Reads of allocated-but-idle utilisation, shared by the API, the pages, /metrics and the digest.

The latest report of each cluster answers "now" (API, pages, /metrics); the reports
whose windows end inside a digest period are summed for that period (their windows
follow each other, so nothing is counted twice). A cluster without a report, or
whose latest report failed, is "utilisation unknown", never zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import django_filters
from django import forms
from django.conf import settings
from django.db.models import OuterRef, QuerySet, Subquery

from capacityweb import visibility
from reservations.models import PrometheusSource, UtilisationPod, UtilisationReport
from topology.filters import StrictBooleanFilter, cluster_filter

GROUP_BY_CHOICES = ("pod", "gpu", "team")
UNKNOWN = "utilisation unknown"
COMMON_COLUMNS = ("cluster", "window_start", "window_end", "data_source")
FIGURE_COLUMNS = (
    "activity_mean_percent",
    "activity_p95_percent",
    "idle_gpu_hours",
    "idle_cost",
    "currency",
    "utilisation",
)
MEMORY_COLUMNS = ("memory_mean_mib", "memory_p95_mib")
COLUMNS = {
    "pod": (
        *COMMON_COLUMNS,
        "namespace",
        "pod",
        "team",
        "gpus",
        *MEMORY_COLUMNS,
        *FIGURE_COLUMNS,
    ),
    "gpu": (
        *COMMON_COLUMNS,
        "node",
        "gpu",
        "instance",
        "profile",
        "share",
        "pods",
        "activity_source",
        *MEMORY_COLUMNS,
        "price_per_gpu_hour",
        *FIGURE_COLUMNS,
    ),
    "team": (
        *COMMON_COLUMNS,
        "team",
        "pods",
        "pods_unknown",
        *FIGURE_COLUMNS,
        "unpriced_idle_gpu_hours",
    ),
}
ROW_KEY = {"pod": "pods", "gpu": "gpus", "team": "teams"}


class PrometheusSourceFilterSet(django_filters.FilterSet):
    """``cluster`` (an unknown id is a 404, as in every FilterSet) and ``enabled``."""

    cluster = cluster_filter()
    enabled = StrictBooleanFilter()

    class Meta:
        model = PrometheusSource
        fields = ["cluster", "enabled"]


class UtilisationFilterSet(django_filters.FilterSet):
    """``cluster``, ``team`` (namespace) and ``group_by``: the API's and the page's filters."""

    cluster = cluster_filter()
    team = django_filters.CharFilter(method="filter_nothing", label="Team (namespace)")
    group_by = django_filters.ChoiceFilter(
        choices=[(choice, choice) for choice in GROUP_BY_CHOICES],
        method="filter_nothing",
        empty_label=None,
    )

    class Meta:
        model = UtilisationReport
        fields = ["cluster", "team", "group_by"]

    def filter_nothing(self, queryset: QuerySet[Any], name: str, value: Any) -> QuerySet[Any]:
        return queryset

    def arguments(self) -> dict[str, Any]:
        data: dict[str, Any] = self.form.cleaned_data if isinstance(self.form, forms.Form) else {}
        cluster = data.get("cluster")
        return {
            "cluster_ids": [cluster.pk] if cluster else None,
            "group_by": data.get("group_by") or "pod",
            "team": data.get("team") or "",
        }


def latest_reports(
    cluster_ids: Iterable[int] | None = None, *, with_result: bool = True
) -> list[UtilisationReport]:
    """Each cluster's latest report, by cluster name (one query); ``with_result=False``
    leaves the per-GPU and per-pod detail unread (summaries, /metrics)."""
    newest = UtilisationReport.objects.filter(cluster=OuterRef("cluster")).order_by("-window_end")
    reports = UtilisationReport.objects.filter(pk=Subquery(newest.values("pk")[:1]))
    if cluster_ids is not None:
        reports = reports.filter(cluster_id__in=list(cluster_ids))
    if not with_result:
        reports = reports.defer("result")
    return list(reports.select_related("cluster").order_by("cluster__name", "cluster_id"))


def report_summary(report: UtilisationReport, *, operator: bool) -> dict[str, Any]:
    """What a page or the API says about one cluster's latest measurement; why it failed
    for operators only (``visibility.utilisation_error``)."""
    known = not report.error
    return {
        "cluster": report.cluster.name,
        "cluster_id": report.cluster_id,
        "window_start": report.window_start,
        "window_end": report.window_end,
        "data_source": report.source,
        "demo": report.source == UtilisationReport.Source.DEMO,
        "error": visibility.utilisation_error(report.error, operator=operator),
        "coverage": report.summary.get("coverage") if known else UNKNOWN,
        "gpus_total": report.gpus_total,
        "gpus_measured": report.gpus_measured,
        "idle_gpu_hours": report.idle_gpu_hours,
        "idle_cost": report.idle_cost,
        "unpriced_idle_gpu_hours": report.summary.get("unpriced_idle_gpu_hours"),
        "idle_gpus_now": report.idle_gpus_now,
        "idle_cost_per_hour_now": report.idle_cost_per_hour_now,
        "currency": report.summary.get("currency", settings.CURRENCY),
        "idle_below_percent": report.summary.get("idle_below_percent"),
        "idle_for_seconds": report.summary.get("idle_for_seconds"),
    }


def report_rows(
    reports: Sequence[UtilisationReport],
    *,
    viewer: visibility.Viewer,
    group_by: str = "pod",
    team: str = "",
) -> list[dict[str, Any]]:
    """The rows of the latest reports, per pod, GPU or team; ``team`` keeps one namespace.
    A GPU priced by another team's reservation has its price and idle cost unknown to
    ``viewer`` (``visibility.utilisation_gpu``)."""
    rows = []
    for report in reports:
        common = {
            "cluster": report.cluster.name,
            "window_start": report.window_start,
            "window_end": report.window_end,
            "data_source": report.source,
            "currency": report.result.get("currency", settings.CURRENCY),
        }
        for row in report.result.get(ROW_KEY[group_by], []):
            if team and not _of_team(row, group_by, team):
                continue
            known = row.get("activity_mean_percent") is not None
            if group_by == "gpu":
                row = visibility.utilisation_gpu(row, viewer)
            rows.append({**common, **row, "utilisation": "known" if known else UNKNOWN})
    return rows


def _of_team(row: dict[str, Any], group_by: str, team: str) -> bool:
    if group_by == "gpu":
        return any(pod.partition("/")[0] == team for pod in row.get("pods", []))
    return bool(row.get("team") == team)


POD_FIELDS = (
    "namespace",
    "pod",
    "workload",
    "gpus",
    "activity_mean_percent",
    "activity_p95_percent",
    "memory_mean_mib",
    "memory_p95_mib",
    "idle_gpu_hours",
    "idle_cost",
)


def workload_utilisation(cluster_id: int, workload: str, *, operator: bool) -> dict[str, Any]:
    """The latest report's summary and the rows of the pods of ``workload`` (``ns/name``:
    its gang, or the pod itself), for the workload page (two queries; the report's
    detail stays unread)."""
    reports = latest_reports([cluster_id], with_result=False)
    if not reports:
        return {"summary": None, "pods": []}
    pods = [
        {**row, "utilisation": "known" if row["activity_mean_percent"] is not None else UNKNOWN}
        for row in UtilisationPod.objects.filter(report=reports[0], workload=workload)
        .order_by("namespace", "pod")
        .values(*POD_FIELDS)
    ]
    return {"summary": report_summary(reports[0], operator=operator), "pods": pods}


@dataclass(frozen=True)
class PeriodUtilisation:
    """Allocated-but-idle over a digest period: sums of the reports ending in it."""

    reports: int
    failed: int
    idle_gpu_hours: float
    idle_cost: float
    demo: bool
    coverage: str
    top_pods: tuple[dict[str, Any], ...]

    @property
    def known(self) -> bool:
        return self.reports > self.failed


def period_utilisation(
    *, cluster_ids: Sequence[int], start: datetime, end: datetime, team: str = "", top: int = 5
) -> PeriodUtilisation:
    """Idle GPU-hours and cost of reports whose window ends in (start, end]; per team if set.

    Reads each report's ``summary`` (its idle pods), never the per-GPU detail.
    """
    reports = list(
        UtilisationReport.objects.filter(
            cluster_id__in=cluster_ids, window_end__gt=start, window_end__lte=end
        )
        .defer("result")
        .select_related("cluster")
        .order_by("window_end")
    )
    good = [r for r in reports if not r.error]
    pods: dict[tuple[str, str], dict[str, Any]] = {}
    for report in good:
        for name, (hours, cost) in (report.summary.get("idle_pods") or {}).items():
            if team and name.partition("/")[0] != team:
                continue
            key = (report.cluster.name, name)
            total = pods.setdefault(
                key, {"cluster": key[0], "pod": name, "idle_gpu_hours": 0.0, "idle_cost": 0.0}
            )
            total["idle_gpu_hours"] += hours
            total["idle_cost"] += cost or 0.0
    ranked = sorted(
        pods.values(),
        key=lambda p: (-p["idle_cost"], -p["idle_gpu_hours"], p["cluster"], p["pod"]),
    )
    latest = good[-1].summary.get("coverage", UNKNOWN) if good else UNKNOWN
    return PeriodUtilisation(
        reports=len(reports),
        failed=len(reports) - len(good),
        idle_gpu_hours=round(sum(p["idle_gpu_hours"] for p in pods.values()), 6),
        idle_cost=round(sum(p["idle_cost"] for p in pods.values()), 6),
        demo=any(r.source == UtilisationReport.Source.DEMO for r in good),
        coverage=latest,
        top_pods=tuple(ranked[:top]),
    )
