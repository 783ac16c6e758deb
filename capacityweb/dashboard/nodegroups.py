"""Node groups: the inventory the autoscaler simulation reads, on a page and in the API.

One row per group of a snapshot's model (``topology.model.hardware.NodeGroup`` as stored in
``Snapshot.model_json``): where it was found, min / max / current size, the room held for
reservations' paid, not yet provisioned nodes (another team's as "reserved (another
team)", capacityweb.visibility.held_nodes: the joint plan never buys that room for
anyone else), the price and its source ("price unknown" when none is known, never
0/h), a Karpenter NodePool's limits, and what the autoscaler last reported of it. Of
cluster-autoscaler's status ConfigMap the groups keep the target size
(``cloudProviderTarget``) and a Backoff (as a note); the reports with the time each was
first made are on the autoscaler events page.

Page and API share ``NodeGroupFilterSet`` (``cluster``, ``snapshot``, ``autoscaler``).
Reads: the page's cluster_page (4 queries) + one for the groups' JSON; the API: one
query per page of clusters' latest snapshots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import django_filters
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from capacityweb import visibility
from recommender.views import cluster_page
from topology.filters import ExistingObjectFilter, cluster_filter
from topology.models import Snapshot

GROUPS_KEY = "model_json__cluster__node_groups"
RESERVATIONS_KEY = "model_json__cluster__reservations"
PROJECT_GROUP_SOURCE = "capacityweb.io NodeGroup"  # topology.kube.discovery's name for it
NO_AUTOSCALER = "none"  # the ``autoscaler`` filter's value for project-only groups
ACTIVITY_NOT_INGESTED = "its reports, with their times, are on the autoscaler events page"


class NodeGroupFilterSet(django_filters.FilterSet):
    """Snapshots whose node groups are listed (each cluster's latest unless ``snapshot``),
    and which of their groups: ``autoscaler`` = cluster-autoscaler | karpenter | gke |
    eks | aks | none."""

    cluster = cluster_filter()
    snapshot = ExistingObjectFilter(queryset=Snapshot.objects.only("id"), method="pin_snapshot")
    autoscaler = django_filters.CharFilter(method="keep_snapshots")

    class Meta:
        model = Snapshot
        fields = ["cluster", "snapshot", "autoscaler"]

    def pin_snapshot(self, queryset: QuerySet[Any], name: str, value: Snapshot) -> QuerySet[Any]:
        """The one snapshot named (the field cleans to the row: filter on its id)."""
        return queryset.filter(id=value.pk)

    def keep_snapshots(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        """``autoscaler`` narrows the rows, not the snapshots (``rows_of``)."""
        return queryset

    def autoscaler_kind(self) -> str:
        return (self.form.cleaned_data.get("autoscaler") or "") if self.is_valid() else ""


def latest_snapshots() -> QuerySet[Snapshot]:
    """Each cluster's newest snapshot (by taken_at)."""
    newest = Snapshot.objects.filter(cluster=OuterRef("cluster")).order_by("-taken_at")
    return Snapshot.objects.filter(id=Subquery(newest.values("id")[:1]))


def group_rows(
    groups: Iterable[Mapping[str, Any]],
    autoscaler: str = "",
    held: Mapping[str, list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """The page's and the API's rows, by group name, narrowed to one autoscaler kind;
    ``held``: per group, its room held for reservations as the viewer may read it."""
    rows = [
        {**group_row(group), "held_for_reservations": (held or {}).get(group["name"], [])}
        for group in groups
    ]
    if autoscaler:
        rows = [row for row in rows if row["autoscaler_kind"] == autoscaler]
    return sorted(rows, key=lambda row: row["name"])


def group_row(group: Mapping[str, Any]) -> dict[str, Any]:
    ref = group.get("autoscaler") or {}
    price_known = bool(group.get("price_known", True))
    return {
        "name": group["name"],
        "found_in": group.get("source") or "not recorded",
        "min_size": group.get("min_size"),
        "max_size": group.get("max_size"),
        "current_size": group.get("current_size"),
        "room": max(int(group.get("max_size") or 0) - int(group.get("current_size") or 0), 0),
        # a real cluster may run more members than the max (lowered since): room 0, said
        "above_max": int(group.get("current_size") or 0) > int(group.get("max_size") or 0),
        "price_per_node_hour": group.get("price_per_node_hour") if price_known else None,
        "price_source": price_source(group) if price_known else "price unknown",
        "autoscaler_kind": ref.get("kind") or NO_AUTOSCALER,
        "autoscaler_name": ref.get("name") or "",
        "limits": [
            f"{limit['resource']}: {limit['limit']} (left {limit['left']})"
            for limit in ref.get("limits") or ()
        ],
        "last_activity": last_activity(group, ref),
        "notes": list(group.get("notes") or ()),
    }


def price_source(group: Mapping[str, Any]) -> str:
    if group.get("price_source"):
        return str(group["price_source"])
    if group.get("source") == PROJECT_GROUP_SOURCE:
        return "the NodeGroup's spec"
    return "not recorded"


def last_activity(group: Mapping[str, Any], ref: Mapping[str, Any]) -> str:
    """What the autoscaler last said of the group, from what the ingest kept."""
    if not ref:
        return "no autoscaler grows this group (a capacityweb.io NodeGroup only)"
    backoff = [note for note in group.get("notes") or () if "Backoff" in note]
    if backoff:
        return backoff[0]
    target, current = ref.get("target_size"), group.get("current_size")
    if target is None:
        return f"not reported by {ref.get('kind')} ({ACTIVITY_NOT_INGESTED})"
    if current is not None and target > current:
        return f"scale-up in progress: target {target}, {current} nodes now"
    return f"target size {target} ({ACTIVITY_NOT_INGESTED})"


def held_for_reservations(
    reservations: Iterable[Mapping[str, Any]], at: datetime, viewer: visibility.Viewer
) -> dict[str, list[dict[str, Any]]]:
    """Per group, the paid, not yet provisioned nodes of the reservations active at
    ``at`` (``spec.nodeGroup``), as ``viewer`` may read them."""
    reservations = list(reservations)
    owners = {r["name"]: r.get("owner_namespaces") or [] for r in reservations}
    per_group: dict[str, list[dict[str, Any]]] = {}
    for item in sorted(reservations, key=lambda r: r["name"]):
        capacity = item.get("node_group") or {}
        if capacity.get("count") and _active(item, at):
            entry = {"reservation": item["name"], "nodes": int(capacity["count"])}
            per_group.setdefault(capacity["node_group"], []).append(entry)
    labels = viewer.labels(owners)
    return {group: visibility.held_nodes(items, labels) for group, items in per_group.items()}


def _active(reservation: Mapping[str, Any], at: datetime) -> bool:
    start, end = reservation.get("start"), reservation.get("end")
    return (start is None or datetime.fromisoformat(start) <= at) and (
        end is None or at < datetime.fromisoformat(end)
    )


def page_inventory(snapshot: Snapshot | None) -> tuple[list[Any], list[Any]]:
    """The node groups and reservations of the page's snapshot (one query; none before
    the first ingest)."""
    if snapshot is None:
        return [], []
    found = Snapshot.objects.filter(id=snapshot.id).values_list(GROUPS_KEY, RESERVATIONS_KEY)
    groups, reservations = found.first() or (None, None)
    return groups or [], reservations or []


def page_groups(snapshot: Snapshot | None) -> list[Any]:
    """The node groups of the page's snapshot (none before the first ingest)."""
    if snapshot is None:
        return []
    found = Snapshot.objects.filter(id=snapshot.id).values_list(GROUPS_KEY, flat=True).first()
    return found or []


def filtered_snapshots(request: Request) -> NodeGroupFilterSet:
    """The API's snapshots: each cluster's latest, or the one ``snapshot`` names, filtered
    as the page filters (400 naming the parameter)."""
    pinned = bool(request.query_params.get("snapshot"))
    queryset = Snapshot.objects.all() if pinned else latest_snapshots()
    filterset = NodeGroupFilterSet(request.query_params, queryset=queryset)
    if not filterset.is_valid():
        raise ValidationError(filterset.errors)
    return filterset


def snapshot_groups(filterset: NodeGroupFilterSet) -> Iterable[tuple[int, int, list[Any]]]:
    """(cluster id, snapshot id, its node groups) per filtered snapshot, by cluster name."""
    for cluster_id, snapshot_id, groups in filterset.qs.order_by("cluster__name").values_list(
        "cluster_id", "id", GROUPS_KEY
    ):
        yield cluster_id, snapshot_id, groups or []


def inventory_rows(
    snapshots: Iterable[tuple[int, int, datetime, list[Any] | None, list[Any] | None]],
    autoscaler: str,
    viewer: visibility.Viewer,
) -> list[dict[str, Any]]:
    """The API's rows: per (cluster, snapshot, taken_at, groups, reservations)."""
    return [
        {"cluster": cluster_id, "snapshot": snapshot_id, "currency": settings.CURRENCY, **row}
        for cluster_id, snapshot_id, taken_at, groups, reservations in snapshots
        for row in group_rows(
            groups or [],
            autoscaler,
            held_for_reservations(reservations or [], taken_at, viewer),
        )
    ]


@login_required
def node_groups_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id, with_result=False)
    filterset = NodeGroupFilterSet(request.GET, queryset=Snapshot.objects.none())
    groups, reservations = page_inventory(page.snapshot)
    held = {}
    if page.snapshot is not None:
        viewer = visibility.request_viewer(request)
        held = held_for_reservations(reservations, page.snapshot.taken_at, viewer)
    context = page.context("node-groups")
    context.update(
        {
            "rows": group_rows(groups, filterset.autoscaler_kind(), held),
            "autoscaler": filterset.autoscaler_kind(),
            "autoscaler_choices": sorted({group_row(g)["autoscaler_kind"] for g in groups}),
            "currency": settings.CURRENCY,
            "other_team": visibility.OTHER_TEAM,
        }
    )
    return render(request, "dashboard/node_groups.html", context)


class HeldNodesSerializer(serializers.Serializer):
    reservation = serializers.CharField(help_text='its name, or "reserved (another team)"')
    nodes = serializers.IntegerField()


class NodeGroupInventorySerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    snapshot = serializers.IntegerField()
    name = serializers.CharField()
    found_in = serializers.CharField()
    min_size = serializers.IntegerField(allow_null=True)
    max_size = serializers.IntegerField(allow_null=True)
    current_size = serializers.IntegerField(allow_null=True)
    room = serializers.IntegerField()
    above_max = serializers.BooleanField(help_text="current size above max size: no room")
    price_per_node_hour = serializers.FloatField(allow_null=True)
    price_source = serializers.CharField()
    currency = serializers.CharField()
    autoscaler_kind = serializers.CharField()
    autoscaler_name = serializers.CharField()
    limits = serializers.ListField(child=serializers.CharField())
    last_activity = serializers.CharField()
    notes = serializers.ListField(child=serializers.CharField())
    held_for_reservations = HeldNodesSerializer(many=True)


class NodeGroupList(APIView):
    """``GET /api/v1/node-group-inventory/``: the node groups of each cluster's latest snapshot (or
    of ``snapshot``), the node groups page's rows and filters (NodeGroupFilterSet)."""

    serializer_class = NodeGroupInventorySerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("cluster", int, description="one cluster's groups"),
            OpenApiParameter("snapshot", int, description="this snapshot's, not the latest"),
            OpenApiParameter(
                "autoscaler", str, description="cluster-autoscaler, karpenter, gke, eks, aks, none"
            ),
        ],
        responses={
            200: NodeGroupInventorySerializer(many=True),
            400: OpenApiResponse(description="a parameter names no cluster or is not a number"),
        },
    )
    def get(self, request: Request) -> Response:
        filterset = filtered_snapshots(request)
        snapshots = filterset.qs.order_by("cluster__name").values_list(
            "cluster_id", "id", "taken_at", GROUPS_KEY, RESERVATIONS_KEY
        )
        viewer = visibility.request_viewer(request)
        rows = inventory_rows(snapshots, filterset.autoscaler_kind(), viewer)
        return Response(NodeGroupInventorySerializer(rows, many=True).data)
