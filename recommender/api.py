"""REST API of the recommender: evaluations, recommendations, pending workloads (diagnosis).

/api/v1/evaluations/            figures per evaluation; the full result on detail
/api/v1/recommendations/        what to add (latest evaluation per cluster by default)
/api/v1/pending-workloads/      per-workload verdict, reasons, naive vs joint
/api/v1/nodes/?cluster=         nodes of each cluster's latest evaluation: devices,
                                topology path, allocation
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rest_framework import mixins, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from capacityweb.api_urls import FILTER_BACKENDS, StandardPagination, router
from recommender.filters import (
    EvaluationFilterSet,
    NodeFilterSet,
    RecommendationFilterSet,
    WorkloadVerdictFilterSet,
    latest_evaluation_ids,
)
from recommender.models import Evaluation, Recommendation, WorkloadVerdict

TOPOLOGY_PATH_LEVELS = ("zone", "block", "rack", "node")

EVALUATION_FIELDS = [
    "id",
    "cluster",
    "snapshot",
    "taken_at",
    "created_at",
    "gpus",
    "gpus_allocated",
    "gpus_idle_reserved",
    "pending_count",
    "naive_cost_per_hour",
    "joint_cost_per_hour",
    "stranded_cost_per_hour",
]


class EvaluationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Evaluation
        fields = EVALUATION_FIELDS


class EvaluationDetailSerializer(serializers.ModelSerializer):
    """With ``result``: the whole DESIGN.md evaluate() JSON (schemaVersion 1)."""

    class Meta:
        model = Evaluation
        fields = [*EVALUATION_FIELDS, "result"]


class EvaluationViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Evaluation.objects.defer("result").order_by("-taken_at", "-id")
    serializer_class = EvaluationSerializer
    filterset_class = EvaluationFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["taken_at", "stranded_cost_per_hour", "pending_count"]

    def get_queryset(self) -> Any:
        if self.action == "retrieve":
            return Evaluation.objects.all()
        return super().get_queryset()

    def get_serializer_class(self) -> type[serializers.Serializer]:
        if self.action == "retrieve":
            return EvaluationDetailSerializer
        return EvaluationSerializer


class RecommendationSerializer(serializers.ModelSerializer):
    cluster = serializers.IntegerField(source="evaluation.cluster_id", read_only=True)
    taken_at = serializers.DateTimeField(source="evaluation.taken_at", read_only=True)

    class Meta:
        model = Recommendation
        fields = [
            "id",
            "cluster",
            "evaluation",
            "taken_at",
            "node_group",
            "count",
            "current_size",
            "placement",
            "cost_per_hour",
            "workloads",
            "yaml",
        ]


class RecommendationViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = (
        Recommendation.objects.select_related("evaluation")
        .defer("evaluation__result")
        .order_by("-evaluation__taken_at", "id")
    )
    serializer_class = RecommendationSerializer
    filterset_class = RecommendationFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["cost_per_hour", "count", "node_group"]


class WorkloadVerdictSerializer(serializers.ModelSerializer):
    cluster = serializers.IntegerField(source="evaluation.cluster_id", read_only=True)
    taken_at = serializers.DateTimeField(source="evaluation.taken_at", read_only=True)

    class Meta:
        model = WorkloadVerdict
        fields = [
            "id",
            "cluster",
            "evaluation",
            "taken_at",
            "workload",
            "namespace",
            "kind",
            "verdict",
            "gpus",
            "reasons",
            "disagreements",
            "naive",
            "joint",
        ]


class WorkloadVerdictViewSet(viewsets.ReadOnlyModelViewSet):
    """Pending workloads with their diagnosis: why they wait and what would make them run."""

    queryset = (
        WorkloadVerdict.objects.select_related("evaluation")
        .defer("evaluation__result")
        .order_by("-evaluation__taken_at", "namespace", "workload")
    )
    serializer_class = WorkloadVerdictSerializer
    filterset_class = WorkloadVerdictFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["workload", "namespace", "gpus", "verdict"]


# --- nodes (from the latest evaluation) ---------------------------------------------------


class DeviceSerializer(serializers.Serializer):
    gpu = serializers.CharField()
    model = serializers.CharField(allow_null=True)
    allocated_milli = serializers.IntegerField(allow_null=True)
    reservation = serializers.CharField(allow_null=True)
    pods = serializers.ListField(child=serializers.CharField())


class NodeSerializer(serializers.Serializer):
    name = serializers.CharField()
    cluster = serializers.IntegerField()
    evaluation = serializers.IntegerField()
    zone = serializers.CharField(allow_null=True)
    block = serializers.CharField(allow_null=True)
    rack = serializers.CharField(allow_null=True)
    topology_path = serializers.ListField(child=serializers.CharField(allow_null=True))
    node_group = serializers.CharField(allow_null=True)
    gpu_model = serializers.CharField(allow_null=True)
    gpus = serializers.IntegerField()
    allocated_milli = serializers.IntegerField(allow_null=True)
    devices = DeviceSerializer(many=True)


def nodes_of(
    evaluation_id: int, cluster_id: int, cells: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Group an evaluation's heatmap cells (one per GPU) into nodes, sorted by name."""
    nodes: dict[str, dict[str, Any]] = {}
    for cell in cells:
        name = str(cell.get("node"))
        node = nodes.setdefault(
            name,
            {
                "name": name,
                "cluster": cluster_id,
                "evaluation": evaluation_id,
                "zone": _text(cell.get("zone")),
                "block": _text(cell.get("block")),
                "rack": _text(cell.get("rack")),
                "topology_path": [_text(cell.get(level)) for level in TOPOLOGY_PATH_LEVELS],
                "node_group": _text(cell.get("nodeGroup")),
                "gpu_model": _text(cell.get("model")),
                "devices": [],
            },
        )
        allocated = cell.get("allocatedMilli")
        node["devices"].append(
            {
                "gpu": str(cell.get("gpu")),
                "model": _text(cell.get("model")),
                "allocated_milli": None if allocated is None else int(allocated),
                "reservation": _text(cell.get("reservation")),
                "pods": [str(pod) for pod in cell.get("pods") or ()],
            }
        )
    for node in nodes.values():
        node["gpus"] = len(node["devices"])
        known = [d["allocated_milli"] for d in node["devices"] if d["allocated_milli"] is not None]
        node["allocated_milli"] = sum(known) if len(known) == node["gpus"] else None
    return [nodes[name] for name in sorted(nodes)]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


class NodeViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """GPU nodes as each cluster's latest evaluation saw them (one query for the evaluations)."""

    queryset = Evaluation.objects.all()
    serializer_class = NodeSerializer
    filterset_class = NodeFilterSet
    filter_backends = FILTER_BACKENDS[:1]
    pagination_class = StandardPagination

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        latest = Evaluation.objects.filter(id__in=latest_evaluation_ids())
        filterset = NodeFilterSet(request.query_params, queryset=latest)
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        rows = filterset.qs.order_by("cluster__name").values_list("id", "cluster_id", "result")
        nodes = [
            node
            for evaluation_id, cluster_id, result in rows
            for node in nodes_of(evaluation_id, cluster_id, (result or {}).get("heatmap") or ())
            if filterset.node_matches(node)
        ]
        page = self.paginate_queryset(nodes)
        return self.get_paginated_response(NodeSerializer(page, many=True).data)


router.register("evaluations", EvaluationViewSet, basename="evaluation")
router.register("recommendations", RecommendationViewSet, basename="recommendation")
router.register("pending-workloads", WorkloadVerdictViewSet, basename="pending-workload")
router.register("nodes", NodeViewSet, basename="node")
