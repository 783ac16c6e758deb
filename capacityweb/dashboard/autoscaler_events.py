"""The autoscaler's own reports, as the ingest kept them, per node group.

What is read (and so shown): cluster-autoscaler's status ConfigMap (each group's
``cloudProviderTarget`` against its registered nodes, and a scale-up ``Backoff``) and
Karpenter's in-flight NodeClaims (kept as the group's note). What is not ingested, and
the page says so rather than inventing rows: Kubernetes Events (``TriggeredScaleUp``,
``NotTriggerScaleUp``, ``FailedScaleUp``), ProvisioningRequest conditions
(``Provisioned``, ``Failed``, ``CapacityRevoked``) and NodeClaim conditions; none
carries a time here, because the ingest keeps none.

Page and API (``/api/v1/autoscaler-events/``) share ``NodeGroupFilterSet``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from capacityweb.dashboard.nodegroups import (
    NodeGroupFilterSet,
    filtered_snapshots,
    page_groups,
    snapshot_groups,
)
from recommender.views import cluster_page
from topology.models import Snapshot

CA_STATUS = "cluster-autoscaler status ConfigMap"
KARPENTER_CLAIMS = "Karpenter NodeClaims"
NOT_INGESTED = (
    "Kubernetes Events (TriggeredScaleUp, NotTriggerScaleUp, FailedScaleUp)",
    "ProvisioningRequest conditions (Provisioned, Failed, CapacityRevoked)",
    "NodeClaim conditions (Launched, Registered, Initialized)",
)


def group_events(group: Mapping[str, Any], autoscaler: str = "") -> list[dict[str, str]]:
    """What the group's autoscaler reported of it: a scale-up under way, a Backoff, the
    NodeClaims it has asked for."""
    ref = group.get("autoscaler") or {}
    kind = ref.get("kind") or ""
    if not ref or (autoscaler and kind != autoscaler):
        return []
    events = []
    target, current = ref.get("target_size"), group.get("current_size")
    if kind == "cluster-autoscaler" and target is not None and (current or 0) < target:
        events.append(("ScaleUp InProgress", CA_STATUS, f"target {target}, {current} registered"))
    for note in group.get("notes") or ():
        if "Backoff" in note:
            events.append(("ScaleUp Backoff", CA_STATUS, note))
        elif "in-flight NodeClaim" in note:
            events.append(("NodeClaims in flight", KARPENTER_CLAIMS, note))
    return [
        {"node_group": group["name"], "event": event, "source": source, "detail": detail}
        for event, source, detail in events
    ]


def events_of(groups: Iterable[Mapping[str, Any]], autoscaler: str = "") -> list[dict[str, str]]:
    return [
        event
        for group in sorted(groups, key=lambda g: g["name"])
        for event in group_events(group, autoscaler)
    ]


@login_required
def autoscaler_events_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id, with_result=False)
    filterset = NodeGroupFilterSet(request.GET, queryset=Snapshot.objects.none())
    groups = page_groups(page.snapshot)
    context = page.context("autoscaler-events")
    context.update(
        {
            "events": events_of(groups, filterset.autoscaler_kind()),
            "grown_groups": sum(1 for g in groups if g.get("autoscaler")),
            "not_ingested": NOT_INGESTED,
        }
    )
    return render(request, "dashboard/autoscaler_events.html", context)


class AutoscalerEventSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    snapshot = serializers.IntegerField()
    node_group = serializers.CharField()
    event = serializers.CharField()
    source = serializers.CharField()
    detail = serializers.CharField()


class AutoscalerEventList(APIView):
    """``GET /api/v1/autoscaler-events/``: the autoscaler events page's rows."""

    serializer_class = AutoscalerEventSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("cluster", int, description="one cluster's events"),
            OpenApiParameter("snapshot", int, description="this snapshot's, not the latest"),
            OpenApiParameter("autoscaler", str, description="cluster-autoscaler, karpenter"),
        ],
        responses={
            200: AutoscalerEventSerializer(many=True),
            400: OpenApiResponse(description="a parameter names no cluster or is not a number"),
        },
    )
    def get(self, request: Request) -> Response:
        filterset = filtered_snapshots(request)
        rows = [
            {"cluster": cluster_id, "snapshot": snapshot_id, **event}
            for cluster_id, snapshot_id, groups in snapshot_groups(filterset)
            for event in events_of(groups, filterset.autoscaler_kind())
        ]
        return Response(AutoscalerEventSerializer(rows, many=True).data)
