"""REST API of the topology app: clusters (and their ingest), snapshots, node groups.

/api/v1/clusters/               read; POST <id>/ingest/ enqueues an ingest (202; staff
                                or topology.change_cluster)
/api/v1/snapshots/              read; no model_json (nodes/ serves the model)
/api/v1/node-groups/            CRUD (writes: staff or the model permission); specs
                                validated by topology.kube.parse (400 names Kind/name:
                                field: reason, nothing stored)
"""

from __future__ import annotations

from typing import Any

from django.db.models import Max
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from capacityweb import visibility
from capacityweb.api.parsers import DepthLimitedJSONParser
from capacityweb.api.permissions import OperatorOrReadOnly
from capacityweb.api.urls import (
    FILTER_BACKENDS,
    StandardPagination,
    WriteThrottleMixin,
    router,
)
from topology import selectors
from topology.filters import ClusterFilterSet, NodeGroupFilterSet, SnapshotFilterSet
from topology.models import Cluster, NodeGroup, Snapshot

PROJECT_API_VERSION = "capacityweb.io/v1alpha1"


def validate_project_object(
    kind: str, name: str, spec: Any, *, cluster_name: str
) -> dict[str, Any]:
    """The ``capacityweb.io/v1alpha1`` object for ``spec``, or a 400 naming each bad field.

    The same parser as the CLI and the ingest (``topology.kube.parse.parse_objects``),
    so the messages read ``Kind/name: field: reason``.
    """
    from topology.kube import parse as kube

    if not isinstance(spec, dict):
        raise serializers.ValidationError({"spec": [f"{kind}/{name}: spec: must be an object"]})
    obj = {
        "apiVersion": PROJECT_API_VERSION,
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }
    parsed = kube.parse_objects([("", obj)], cluster_name=cluster_name)
    if parsed.errors:
        raise serializers.ValidationError({"spec": [str(error) for error in parsed.errors]})
    return obj


# --- clusters -----------------------------------------------------------------------------


class ClusterSerializer(serializers.ModelSerializer):
    latest_snapshot_at = serializers.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = Cluster
        fields = [
            "id",
            "name",
            "source_kind",
            "enabled",
            "topology_levels",
            "autoscaler_profile",
            "created_at",
            "latest_snapshot_at",
            "ingest_state",
            "ingest_message",
            "ingest_since",
            "ingest_kinds",
        ]


class ClusterViewSet(WriteThrottleMixin, viewsets.ReadOnlyModelViewSet):
    permission_classes = [OperatorOrReadOnly]
    queryset = Cluster.objects.annotate(latest_snapshot_at=Max("snapshots__taken_at")).order_by(
        "name"
    )
    serializer_class = ClusterSerializer
    filterset_class = ClusterFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["name", "created_at", "latest_snapshot_at"]

    @extend_schema(
        request=None,
        responses={
            202: inline_serializer(
                "IngestQueued",
                {"cluster": serializers.IntegerField(), "task_id": serializers.CharField()},
            )
        },
    )
    @action(detail=True, methods=["post"])
    def ingest(self, request: Request, pk: str | None = None) -> Response:
        """Enqueue an ingest of this cluster now (topology.tasks.ingest_cluster)."""
        from topology.tasks import ingest_cluster

        cluster = self.get_object()
        result = ingest_cluster.delay(cluster.pk)
        return Response(
            {"cluster": cluster.pk, "task_id": result.id}, status=status.HTTP_202_ACCEPTED
        )


# --- snapshots ----------------------------------------------------------------------------


class SnapshotSerializer(serializers.ModelSerializer):
    class Meta:
        model = Snapshot
        fields = ["id", "cluster", "taken_at", "content_hash", "object_counts", "created_at"]


class SnapshotDetailSerializer(SnapshotSerializer):
    """With ``errors``: one about another team's reservation names it "reserved (another
    team)" (capacityweb.visibility.snapshot_errors)."""

    class Meta(SnapshotSerializer.Meta):
        fields = [*SnapshotSerializer.Meta.fields, "errors"]

    def to_representation(self, instance: Snapshot) -> dict[str, Any]:
        data = super().to_representation(instance)
        viewer = visibility.request_viewer(self.context["request"])
        if data.get("errors") and not viewer.sees_all:
            owners = selectors.stored_reservation_owners(instance.cluster_id)
            data["errors"] = visibility.snapshot_errors(data["errors"], viewer.labels(owners))
        return data


class SnapshotViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Snapshot.objects.defer("model_json", "errors").order_by("-taken_at", "-id")
    serializer_class = SnapshotSerializer
    filterset_class = SnapshotFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["taken_at", "id"]

    def get_queryset(self) -> Any:
        if self.action == "retrieve":
            return Snapshot.objects.defer("model_json")
        return super().get_queryset()

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return SnapshotDetailSerializer if self.action == "retrieve" else SnapshotSerializer


# --- node groups --------------------------------------------------------------------------


class NodeGroupSerializer(serializers.ModelSerializer):
    """``spec`` is the DESIGN.md NodeGroup spec; price and sizes are read from it.
    ``origin``: ``project`` (written here or by ``load_config``) or ``source`` (what the
    cluster's source gave at the last ingest, ``source`` saying where it was found);
    writing a ``source`` group makes it a ``project`` one, overriding the source's."""

    class Meta:
        model = NodeGroup
        fields = [
            "id",
            "cluster",
            "name",
            "spec",
            "price_per_node_hour",
            "min_size",
            "max_size",
            "origin",
            "source",
            "current_size",
        ]
        read_only_fields = [
            "price_per_node_hour",
            "min_size",
            "max_size",
            "origin",
            "source",
            "current_size",
        ]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is not None:
            for field in ("cluster", "name"):
                if field in attrs and attrs[field] != getattr(self.instance, field):
                    raise serializers.ValidationError({field: ["cannot change; create a new one"]})
        cluster = attrs.get("cluster") or self.instance.cluster
        name = attrs.get("name") or self.instance.name
        spec = attrs.get("spec", self.instance.spec if self.instance else None)
        obj = validate_project_object("NodeGroup", name, spec, cluster_name=cluster.name)
        return {"cluster": cluster, "name": name, "object": obj}

    def create(self, validated_data: dict[str, Any]) -> NodeGroup:
        from topology.services import save_node_groups

        cluster, obj = validated_data["cluster"], validated_data["object"]
        return save_node_groups(cluster=cluster, objects=[obj])[0]

    def update(self, instance: NodeGroup, validated_data: dict[str, Any]) -> NodeGroup:
        return self.create(validated_data)


class NodeGroupViewSet(WriteThrottleMixin, viewsets.ModelViewSet):
    permission_classes = [OperatorOrReadOnly]
    queryset = NodeGroup.objects.select_related("cluster").order_by("cluster__name", "name")
    parser_classes = [DepthLimitedJSONParser]  # spec is a JSON object: no form bodies
    serializer_class = NodeGroupSerializer
    filterset_class = NodeGroupFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["name", "price_per_node_hour", "max_size"]


router.register("clusters", ClusterViewSet, basename="cluster")
router.register("snapshots", SnapshotViewSet, basename="snapshot")
router.register("node-groups", NodeGroupViewSet, basename="node-group")
