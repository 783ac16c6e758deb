"""Waiting per team (namespace) over a period, from the stored verdicts.

Each evaluation lists the pending workloads with the GPUs they ask for and what the
naive autoscaler and the joint plan would add for them, per hour. Over [start, end) each
evaluation's figures hold until the next evaluation (the step function of
``reservations.idle.idle_gpu_hours``; nothing is counted before the first evaluation in
the period). Per namespace:

- ``waiting_gpu_hours``: the GPUs its pending workloads asked for, integrated;
- ``naive_cost`` / ``joint_cost``: the hourly price of the nodes the naive autoscaler /
  the joint plan would add for them, integrated: what scaling for them would have cost
  (not money spent: capacityweb sees no bills);
- ``wait_p50_hours`` / ``wait_p95_hours``: over its distinct workloads listed in the
  period, the time from ``pending_since`` to the last evaluation listing it, by the
  nearest-rank percentile.

Page and API (``/api/v1/team-waiting/``) share ``TeamWaitingFilterSet``. Reads: two
queries (the evaluations' times, the verdict rows) after the page's cluster_page.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

import django_filters
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from recommender.models import Evaluation, WorkloadVerdict
from recommender.views import cluster_page
from reservations.idle import idle_gpu_hours
from topology.filters import cluster_filter

RANGES = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
DEFAULT_RANGE = "7d"
VerdictRow = tuple[datetime, str, str, float, float, float, datetime | None]


class TeamWaitingFilterSet(django_filters.FilterSet):
    """One cluster's evaluations taken in [start, end)."""

    cluster = cluster_filter()
    start = django_filters.IsoDateTimeFilter(field_name="taken_at", lookup_expr="gte")
    end = django_filters.IsoDateTimeFilter(field_name="taken_at", lookup_expr="lt")

    class Meta:
        model = Evaluation
        fields = ["cluster", "start", "end"]


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile (the smallest value with at least ``fraction`` at or below)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(fraction * len(ordered)) - 1, 0)]


def team_rows(
    times: Sequence[datetime], rows: Iterable[VerdictRow], end: datetime
) -> list[dict[str, Any]]:
    """Per namespace, by name: the figures above, from the evaluations at ``times``."""
    per_time: dict[str, dict[datetime, list[float]]] = defaultdict(dict)
    waits: dict[str, dict[str, float]] = defaultdict(dict)
    listed: dict[str, set[str]] = defaultdict(set)
    for taken_at, namespace, workload, gpus, naive, joint, since in rows:
        listed[namespace].add(workload)
        sums = per_time[namespace].setdefault(taken_at, [0.0, 0.0, 0.0])
        sums[0], sums[1], sums[2] = sums[0] + gpus, sums[1] + naive, sums[2] + joint
        if since is not None:
            waited = (taken_at - since).total_seconds() / 3600
            waits[namespace][workload] = max(waits[namespace].get(workload, 0.0), waited)
    start = min(times) if times else end
    result = []
    for namespace in sorted(per_time):
        sums = per_time[namespace]
        series = [[(t, sums.get(t, [0.0] * 3)[i]) for t in times] for i in range(3)]
        hours = [idle_gpu_hours(samples, start, end) for samples in series]
        result.append(
            {
                "namespace": namespace,
                "workloads": len(listed[namespace]),
                "waiting_gpu_hours": round(hours[0], 1),
                "naive_cost": round(hours[1], 2),
                "joint_cost": round(hours[2], 2),
                "wait_p50_hours": _rounded(percentile(list(waits[namespace].values()), 0.5)),
                "wait_p95_hours": _rounded(percentile(list(waits[namespace].values()), 0.95)),
            }
        )
    return result


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def period_rows(evaluations: Any, end: datetime) -> list[dict[str, Any]]:
    """The rows for these evaluations (a queryset of one cluster's, in the period)."""
    times = sorted(evaluations.values_list("taken_at", flat=True))
    rows = WorkloadVerdict.objects.filter(evaluation__in=evaluations).values_list(
        "evaluation__taken_at",
        "namespace",
        "workload",
        "requested_gpus",
        "naive_cost_per_hour",
        "joint_cost_per_hour",
        "pending_since",
    )
    return team_rows(times, rows, end)


@login_required
def teams_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id, with_result=False)
    range_name = request.GET.get("range", DEFAULT_RANGE)
    if range_name not in RANGES:
        range_name = DEFAULT_RANGE
    end = timezone.now()
    start = end - RANGES[range_name]
    evaluations = Evaluation.objects.filter(
        cluster_id=cluster_id, taken_at__gte=start, taken_at__lt=end
    )
    context = page.context("teams")
    context.update(
        {
            "rows": period_rows(evaluations, end),
            "range_name": range_name,
            "range_choices": list(RANGES),
            "start": start,
            "end": end,
            "currency": settings.CURRENCY,
        }
    )
    return render(request, "dashboard/teams.html", context)


class TeamWaitingSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    workloads = serializers.IntegerField()
    waiting_gpu_hours = serializers.FloatField()
    naive_cost = serializers.FloatField()
    joint_cost = serializers.FloatField()
    currency = serializers.CharField()
    wait_p50_hours = serializers.FloatField(allow_null=True)
    wait_p95_hours = serializers.FloatField(allow_null=True)
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()


class TeamWaitingList(APIView):
    """``GET /api/v1/team-waiting/?cluster=&start=&end=``: the teams page's rows (default
    period: the last 7 days)."""

    serializer_class = TeamWaitingSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("cluster", int, required=True, description="the cluster"),
            OpenApiParameter("start", datetime, description="ISO 8601; default end - 7 days"),
            OpenApiParameter("end", datetime, description="ISO 8601; default now"),
        ],
        responses={
            200: TeamWaitingSerializer(many=True),
            400: OpenApiResponse(description="no cluster, an unknown one, or a bad date"),
        },
    )
    def get(self, request: Request) -> Response:
        params = request.query_params.copy()
        if not params.get("end"):  # absent or empty (``?end=``): now
            params["end"] = timezone.now().isoformat()
        filterset = TeamWaitingFilterSet(params, queryset=Evaluation.objects.all())
        if not filterset.is_valid():
            raise ValidationError(filterset.errors)
        data = filterset.form.cleaned_data
        if data.get("cluster") is None:
            raise ValidationError({"cluster": ["required: the teams of which cluster"]})
        end = data["end"]
        try:
            start = data.get("start") or end - RANGES[DEFAULT_RANGE]
        except OverflowError as error:
            raise ValidationError(
                {"end": ["too early: the default period (end - 7 days) starts before year 1"]}
            ) from error
        evaluations = filterset.qs.filter(taken_at__gte=start)
        rows = [
            {**row, "currency": settings.CURRENCY, "start": start, "end": end}
            for row in period_rows(evaluations, end)
        ]
        return Response(TeamWaitingSerializer(rows, many=True).data)
