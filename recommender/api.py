"""REST API of the recommender: evaluations, recommendations, pending workloads (diagnosis).

/api/v1/evaluations/            figures per evaluation; the full result on detail
/api/v1/recommendations/        what to add (latest evaluation per cluster by default)
/api/v1/pending-workloads/      per-workload verdict, reasons, naive vs joint
/api/v1/nodes/?cluster=         nodes of each cluster's latest evaluation (rows stored with
                                it): devices, topology path, allocation
/api/v1/cluster-autoscalers/    per cluster, the autoscaler the naive side models and the
                                cluster-autoscaler command line and priority ConfigMap it
                                runs with (PATCH, operators; checked by caflags: 400 naming
                                the flag)
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import mixins, serializers, viewsets

from capacityweb import visibility
from capacityweb.api.permissions import OperatorOrReadOnly
from capacityweb.api.urls import (
    FILTER_BACKENDS,
    StandardPagination,
    WriteThrottleMixin,
    router,
)
from recommender.engine.autoscaler.caflags import parse_priorities, read_flags
from recommender.engine.autoscaler.profiles import profile_names
from recommender.engine.evaluate.evaluation import RELAXATIONS
from recommender.filters import (
    EvaluationFilterSet,
    NodeFilterSet,
    RecommendationFilterSet,
    WorkloadVerdictFilterSet,
)
from recommender.models import EvaluatedNode, Evaluation, Recommendation, WorkloadVerdict
from topology.models import Cluster

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


def labels_for(serializer: serializers.Serializer, evaluation: Evaluation) -> Any:
    """The evaluation's reservation names as the requesting user may read them."""
    viewer = visibility.request_viewer(serializer.context["request"])
    return viewer.labels(evaluation.reservation_owners)


class EvaluationDetailSerializer(serializers.ModelSerializer):
    """With ``result``: the whole DESIGN.md evaluate() JSON (schemaVersion 1), other teams'
    reservations relabelled (capacityweb.visibility)."""

    class Meta:
        model = Evaluation
        fields = [*EVALUATION_FIELDS, "result"]

    def to_representation(self, instance: Evaluation) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["result"] = visibility.result(data["result"] or {}, labels_for(self, instance))
        return data


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
            "actions",
        ]

    def to_representation(self, instance: Recommendation) -> dict[str, Any]:
        data = super().to_representation(instance)
        labels = labels_for(self, instance.evaluation)
        data["yaml"] = labels.text(data["yaml"] or "")
        data["actions"] = [
            {"kind": a["kind"], "role": a["role"], "text": labels.text(a["text"])}
            for a in data["actions"] or []
        ]
        return data


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
    preempts = serializers.SerializerMethodField()
    missing = serializers.SerializerMethodField()

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
            "relaxations",
            "requested_gpus",
            "naive_cost_per_hour",
            "joint_cost_per_hour",
            "pending_since",
            "preempts",
            "missing",
        ]

    def to_representation(self, instance: WorkloadVerdict) -> dict[str, Any]:
        data = visibility.workload(
            super().to_representation(instance), labels_for(self, instance.evaluation)
        )
        if RELAXATIONS in (instance.evaluation.missing or ()):
            data["relaxations"] = None  # being worked out: not "nothing unblocks it"
        return data

    def get_missing(self, verdict: WorkloadVerdict) -> list[str]:
        """The evaluation's deferred parts not stored yet (``recommender.parts``): being
        worked out, or not worked out (the workload page says why); its ``result``'s
        ``missing``. While ``relaxations`` is in it, the row's ``relaxations`` is null, and
        while ``score-ties`` is, its ``reasons`` lack a score tie's line."""
        return list(verdict.evaluation.missing or ())

    @extend_schema_field({"type": "array", "items": {"type": "string"}})
    def get_preempts(self, verdict: WorkloadVerdict) -> list[str]:
        """The running pods ("ns/pod") DefaultPreemption evicts to place it (rows stored
        before the list was kept: none)."""
        return list((verdict.joint or {}).get("preempts") or [])


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
    ordering_fields = [
        "workload",
        "namespace",
        "gpus",
        "verdict",
        "requested_gpus",
        "naive_cost_per_hour",
        "joint_cost_per_hour",
        "pending_since",
    ]


# --- nodes (from the latest evaluation) ---------------------------------------------------


class DeviceSerializer(serializers.Serializer):
    gpu = serializers.CharField()
    model = serializers.CharField(allow_null=True)
    allocated_milli = serializers.IntegerField(allow_null=True)
    reservation = serializers.CharField(allow_null=True)
    pods = serializers.ListField(child=serializers.CharField())


class NodeSerializer(serializers.ModelSerializer):
    cluster = serializers.IntegerField(source="cluster_id")
    evaluation = serializers.IntegerField(source="evaluation_id")
    topology_path = serializers.SerializerMethodField()
    devices = DeviceSerializer(many=True)
    reservations = serializers.ListField(child=serializers.CharField())
    teams = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = EvaluatedNode
        fields = [
            "name",
            "cluster",
            "evaluation",
            "zone",
            "block",
            "rack",
            "topology_path",
            "node_group",
            "gpu_model",
            "gpus",
            "allocated_milli",
            "devices",
            "reservations",
            "teams",
        ]

    def to_representation(self, instance: EvaluatedNode) -> dict[str, Any]:
        return visibility.node_row(
            super().to_representation(instance), labels_for(self, instance.evaluation)
        )

    def get_topology_path(self, node: EvaluatedNode) -> list[str | None]:
        """zone, block, rack, node: the heatmap's drill-down path (None where unknown)."""
        return [node.zone, node.block, node.rack, node.name]


class NodeViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """GPU nodes as each cluster's latest evaluation saw them, filtered and paged in the
    database (NodeFilterSet: the topology page's filters too)."""

    queryset = (
        EvaluatedNode.objects.select_related("evaluation")
        .defer("evaluation__result")
        .order_by("cluster__name", "name", "id")
    )
    serializer_class = NodeSerializer
    filterset_class = NodeFilterSet
    filter_backends = FILTER_BACKENDS[:1]
    pagination_class = StandardPagination


class ClusterAutoscalerSerializer(serializers.ModelSerializer):
    """How a cluster's naive side is modelled: the profile, the cluster-autoscaler's
    command line (blank: the CLUSTER_AUTOSCALER_ARGS setting) and its priority
    expander ConfigMap's ``priorities`` YAML, each checked as the evaluation reads it."""

    cluster = serializers.IntegerField(source="id", read_only=True)

    class Meta:
        model = Cluster
        fields = [
            "cluster",
            "name",
            "autoscaler_profile",
            "autoscaler_args",
            "autoscaler_priorities",
        ]
        read_only_fields = ["name"]

    def validate_autoscaler_profile(self, value: str) -> str:
        if value and value not in profile_names():
            valid = ", ".join(profile_names())
            raise serializers.ValidationError(f"unknown profile {value!r}; valid: {valid}")
        return value

    def validate_autoscaler_args(self, value: str) -> str:
        try:
            read_flags(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None
        return value

    def validate_autoscaler_priorities(self, value: str) -> str:
        if value.strip():
            try:
                parse_priorities(value)
            except ValueError as error:
                raise serializers.ValidationError(str(error)) from None
        return value


class ClusterAutoscalerViewSet(
    WriteThrottleMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Read by any signed-in user; changed (PUT/PATCH) by operators
    (``topology.change_cluster``). The next evaluation of the cluster uses it."""

    permission_classes = [OperatorOrReadOnly]
    queryset = Cluster.objects.order_by("name")
    serializer_class = ClusterAutoscalerSerializer
    pagination_class = StandardPagination


router.register("evaluations", EvaluationViewSet, basename="evaluation")
router.register("cluster-autoscalers", ClusterAutoscalerViewSet, basename="cluster-autoscaler")
router.register("recommendations", RecommendationViewSet, basename="recommendation")
router.register("pending-workloads", WorkloadVerdictViewSet, basename="pending-workload")
router.register("nodes", NodeViewSet, basename="node")
