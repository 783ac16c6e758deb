"""FilterSets for evaluations, recommendations and workload verdicts, shared by the
dashboard pages and the API (STYLE.md §4).

Recommendations and verdicts default to each cluster's latest evaluation: what
is pending *now*. Naming an ``evaluation`` (or ``latest=false``) opens history.
"""

from typing import Any

import django_filters
from django.db.models import OuterRef, QuerySet, Subquery

from recommender.models import Evaluation, Recommendation, WorkloadVerdict
from topology.filters import TakenAtRangeFilterSet
from topology.models import Cluster


def latest_evaluation_ids() -> Subquery:
    """Subquery: the id of each cluster's most recent evaluation."""
    latest = Evaluation.objects.filter(cluster=OuterRef("cluster")).order_by("-taken_at")
    return Evaluation.objects.filter(id=Subquery(latest.values("id")[:1])).values("id")


class EvaluationFilterSet(TakenAtRangeFilterSet):
    class Meta:
        model = Evaluation
        fields = ["cluster", "taken_after", "taken_before"]


class LatestEvaluationFilterSet(django_filters.FilterSet):
    """Rows of one evaluation, or by default of each cluster's latest evaluation."""

    cluster = django_filters.ModelChoiceFilter(
        field_name="evaluation__cluster", queryset=Cluster.objects.all()
    )
    evaluation = django_filters.ModelChoiceFilter(queryset=Evaluation.objects.all())
    latest = django_filters.BooleanFilter(
        method="filter_latest", label="Only each cluster's latest evaluation (default true)"
    )

    def filter_latest(self, queryset: QuerySet[Any], name: str, value: bool) -> QuerySet[Any]:
        return queryset  # applied in filter_queryset, where the default is known

    def filter_queryset(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        queryset = super().filter_queryset(queryset)
        data = self.form.cleaned_data
        if data.get("evaluation") is None and data.get("latest") is not False:
            queryset = queryset.filter(evaluation_id__in=latest_evaluation_ids())
        return queryset


class RecommendationFilterSet(LatestEvaluationFilterSet):
    class Meta:
        model = Recommendation
        fields = ["cluster", "evaluation", "latest", "node_group"]


DISAGREEMENT_CLASSES = ("topology", "reservation", "partial-gang", "sharing", "device-model")


class WorkloadVerdictFilterSet(LatestEvaluationFilterSet):
    workload = django_filters.CharFilter(lookup_expr="icontains")
    disagreement = django_filters.ChoiceFilter(
        choices=[(c, c) for c in DISAGREEMENT_CLASSES], method="filter_disagreement"
    )

    class Meta:
        model = WorkloadVerdict
        fields = ["cluster", "evaluation", "latest", "verdict", "namespace", "kind", "workload"]

    def filter_disagreement(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        """Verdicts whose naive and joint decisions disagree in class ``value``.

        Matched on the JSON text so it runs on SQLite too (no JSON containment there).
        """
        return queryset.filter(disagreements__icontains=f'"{value}"')


def _keep(queryset: QuerySet[Any], name: str, value: Any) -> QuerySet[Any]:
    """Node-level filters narrow the heatmap cells in Python, not the snapshot rows."""
    return queryset


class NodeFilterSet(django_filters.FilterSet):
    """Which cluster's nodes (its latest evaluation) and which of them.

    ``cluster`` picks the evaluation rows; ``node_group``, ``gpu_model`` and
    ``zone`` are read from ``form.cleaned_data`` by the caller and applied to
    the nodes of the latest evaluation (``node_matches``).
    """

    cluster = django_filters.ModelChoiceFilter(queryset=Cluster.objects.all())
    node_group = django_filters.CharFilter(method=_keep)
    gpu_model = django_filters.CharFilter(method=_keep)
    zone = django_filters.CharFilter(method=_keep)

    class Meta:
        model = Evaluation
        fields = ["cluster", "node_group", "gpu_model", "zone"]

    def node_matches(self, node: dict[str, Any]) -> bool:
        data = self.form.cleaned_data
        return all(
            not data.get(key) or node.get(key) == data[key]
            for key in ("node_group", "gpu_model", "zone")
        )
