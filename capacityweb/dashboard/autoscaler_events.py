"""The autoscalers' own reports, as the ingest kept them: one page and its API.

Two kinds of rows:

- *reported*: what the snapshot's model keeps as ``Cluster.autoscaler_events``
  (``topology.kube.autoscaler.events``, ``topology.kube.autoscaler.provreq``): Events
  cluster-autoscaler and Karpenter reported (``TriggeredScaleUp``, ``NotTriggerScaleUp``,
  ``FailedScaleUp``,
  ``ScaleDown`` ..., ``InsufficientCapacityError``), the activity of cluster-autoscaler's
  status ConfigMap, ProvisioningRequest and NodeClaim conditions; each with the time it
  was first reported, newest first, the newest ``topology.kube.parse.MAX_EVENTS`` only;
- *derived* from the node groups, without a time: a scale-up under way (a group's
  ``cloudProviderTarget`` above its registered nodes) where the status reported no
  ``ScaleUp`` condition for it (snapshots stored before the conditions were kept), and
  Karpenter's in-flight NodeClaims.

A reported row names the node group of the model when cluster-autoscaler's name for it
is one model group's; else the autoscaler's own name (a Karpenter NodePool, which the
model splits into one group per instance type).
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

from capacityweb.dashboard.nodegroups import GROUPS_KEY, NodeGroupFilterSet, filtered_snapshots
from recommender.views import cluster_page
from topology.models import Snapshot

EVENTS_KEY = "model_json__cluster__autoscaler_events"
CA_STATUS = "cluster-autoscaler status ConfigMap"
STATUS_EVENTS = "cluster-autoscaler status"  # topology.kube.autoscaler.events.CA_STATUS_SOURCE
KARPENTER_CLAIMS = "Karpenter NodeClaims"
# which autoscaler each reported source belongs to (the ``autoscaler`` filter)
REPORTED_BY = {
    "Event (cluster-autoscaler)": "cluster-autoscaler",
    STATUS_EVENTS: "cluster-autoscaler",
    "ProvisioningRequest": "cluster-autoscaler",
    "Event (karpenter)": "karpenter",
    "NodeClaim": "karpenter",
}


def row(
    node_group: str, event: str, source: str, detail: str, time: str = "", about: str = ""
) -> dict[str, str]:
    return {
        "time": time,
        "node_group": node_group,
        "object": about,
        "event": event,
        "source": source,
        "detail": detail,
    }


def group_events(
    group: Mapping[str, Any], autoscaler: str = "", reported: frozenset[str] = frozenset()
) -> list[dict[str, str]]:
    """Derived rows of one group: a scale-up under way its status carried no ScaleUp
    condition for (``reported``: the CA groups that had one), the NodeClaims in flight."""
    ref = group.get("autoscaler") or {}
    kind = ref.get("kind") or ""
    if not ref or (autoscaler and kind != autoscaler):
        return []
    rows = []
    target, current = ref.get("target_size"), group.get("current_size")
    growing = kind == "cluster-autoscaler" and target is not None and (current or 0) < target
    if growing and ref.get("name") not in reported:
        detail = f"target {target}, {current} registered"
        rows.append(row(group["name"], "ScaleUp InProgress", CA_STATUS, detail))
    for note in group.get("notes") or ():
        if "Backoff" in note and ref.get("name") not in reported:
            rows.append(row(group["name"], "ScaleUp Backoff", CA_STATUS, note))
        elif "in-flight NodeClaim" in note:
            rows.append(row(group["name"], "NodeClaims in flight", KARPENTER_CLAIMS, note))
    return rows


def reported_events(
    events: Iterable[Mapping[str, Any]], groups: Iterable[Mapping[str, Any]], autoscaler: str = ""
) -> list[dict[str, str]]:
    """The model's events as rows, newest first, their node group named as the model does."""
    named = {}  # a cluster-autoscaler group is one model group; a NodePool is several
    for group in groups:
        ref = group.get("autoscaler") or {}
        if ref.get("name") and ref.get("kind") == "cluster-autoscaler":
            named.setdefault(str(ref["name"]), group["name"])
    rows = []
    for event in events:
        if autoscaler and REPORTED_BY.get(event["source"]) != autoscaler:
            continue
        own = str(event.get("node_group") or "")
        rows.append(
            row(
                named.get(own, own),
                event["reason"],
                event["source"],
                event.get("message") or "",
                event.get("time") or "",
                event["object"],
            )
        )
    return rows


def events_of(
    groups: list[Mapping[str, Any]], events: list[Mapping[str, Any]], autoscaler: str = ""
) -> list[dict[str, str]]:
    reported = frozenset(str(e.get("node_group")) for e in events if e["source"] == STATUS_EVENTS)
    derived = [
        item
        for group in sorted(groups, key=lambda g: g["name"])
        for item in group_events(group, autoscaler, reported)
    ]
    return derived + reported_events(events, groups, autoscaler)


def snapshot_reports(snapshot: Snapshot | None) -> tuple[list[Any], list[Any]]:
    """The snapshot's node groups and events, in one query (none before the first ingest)."""
    if snapshot is None:
        return [], []
    found = Snapshot.objects.filter(id=snapshot.id).values_list(GROUPS_KEY, EVENTS_KEY).first()
    groups, events = found or (None, None)
    return groups or [], events or []


@login_required
def autoscaler_events_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id, with_result=False)
    filterset = NodeGroupFilterSet(request.GET, queryset=Snapshot.objects.none())
    groups, events = snapshot_reports(page.snapshot)
    context = page.context("autoscaler-events")
    context.update(
        {
            "events": events_of(groups, events, filterset.autoscaler_kind()),
            "grown_groups": sum(1 for g in groups if g.get("autoscaler")),
        }
    )
    return render(request, "dashboard/autoscaler_events.html", context)


class AutoscalerEventSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    snapshot = serializers.IntegerField()
    time = serializers.CharField(help_text="first reported, RFC 3339; empty for derived rows")
    node_group = serializers.CharField()
    object = serializers.CharField(help_text="Kind/namespace/name it is about, when reported")
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
        autoscaler = filterset.autoscaler_kind()
        rows = [
            {"cluster": cluster_id, "snapshot": snapshot_id, **event}
            for cluster_id, snapshot_id, groups, events in filterset.qs.order_by(
                "cluster__name"
            ).values_list("cluster_id", "id", GROUPS_KEY, EVENTS_KEY)
            for event in events_of(groups or [], events or [], autoscaler)
        ]
        return Response(AutoscalerEventSerializer(rows, many=True).data)
