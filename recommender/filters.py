"""FilterSets for evaluations, recommendations and workload verdicts, shared by the
dashboard pages and the API (STYLE.md §4).

Recommendations and verdicts default to each cluster's latest evaluation: what
is pending *now*. Naming an ``evaluation`` (or ``latest=false``) opens history.
"""

import json
from typing import Any

import django_filters
from django.db.models import OuterRef, QuerySet, Subquery

from capacityweb import visibility
from recommender.models import EvaluatedNode, Evaluation, Recommendation, WorkloadVerdict
from topology.charts import HeatmapFilters
from topology.filters import (
    ExistingObjectFilter,
    StrictBooleanFilter,
    TakenAtRangeFilterSet,
    cluster_filter,
)


def latest_evaluation_ids() -> Subquery:
    """Subquery: the id of each cluster's most recent evaluation."""
    latest = Evaluation.objects.filter(cluster=OuterRef("cluster")).order_by("-taken_at")
    return Evaluation.objects.filter(id=Subquery(latest.values("id")[:1])).values("id")


class EvaluationFilterSet(TakenAtRangeFilterSet):
    cluster = cluster_filter()

    class Meta:
        model = Evaluation
        fields = ["cluster", "taken_after", "taken_before"]


class LatestEvaluationFilterSet(django_filters.FilterSet):
    """Rows of one evaluation, or by default of each cluster's latest evaluation."""

    cluster = cluster_filter(field_name="evaluation__cluster")
    evaluation = ExistingObjectFilter(queryset=Evaluation.objects.only("id"))
    latest = StrictBooleanFilter(
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


DISAGREEMENT_CLASSES = (
    "never-scales",
    "topology",
    "reservation",
    "partial-gang",
    "sharing",
    "device-model",
    "quota",
)


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


class NodeFilterSet(LatestEvaluationFilterSet):
    """GPU nodes of each cluster's latest evaluation (or of ``evaluation``), narrowed by where
    they are, what they are and who uses them.

    The same parameters filter the topology page: there ``node_group``, ``gpu_model``,
    ``reservation`` and ``team`` narrow the heatmap's GPUs (``charts.HeatmapFilters``
    from ``heatmap_filters``), here the node rows, in the database. A node matches
    ``reservation`` when any of its GPUs is that reservation's, ``team`` when any of
    its pods runs in that namespace or any of its GPUs' reservations is the team's.
    """

    cluster = cluster_filter()
    evaluation = ExistingObjectFilter(queryset=Evaluation.objects.only("id"))
    node_group = django_filters.CharFilter()
    gpu_model = django_filters.CharFilter()
    zone = django_filters.CharFilter()
    reservation = django_filters.CharFilter(method="filter_reservation", field_name="reservations")
    team = django_filters.CharFilter(method="filter_team", field_name="teams")

    class Meta:
        model = EvaluatedNode
        fields = [
            "cluster",
            "evaluation",
            "latest",
            "node_group",
            "gpu_model",
            "zone",
            "reservation",
            "team",
        ]

    def filter_listed(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        """Nodes whose JSON list ``name`` holds ``value`` (matched on the JSON text, as
        ``filter_disagreement``, so it runs on SQLite too)."""
        return queryset.filter(**{f"{name}__icontains": json.dumps(value)})

    def viewer(self) -> visibility.Viewer:
        """Whose reservations the filters may match by name (no request: all)."""
        if self.request is None:
            return visibility.STAFF
        return visibility.request_viewer(self.request)

    def filter_reservation(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        """Nodes with a GPU of reservation ``value``, in evaluations where the viewer may see
        it (capacityweb.visibility): another team's name matches nothing, so it is not a
        way to learn that reservation's nodes."""
        queryset = self.filter_listed(queryset, name, value)
        viewer = self.viewer()
        if viewer.sees_all:
            return queryset
        owners = Evaluation.objects.filter(id__in=queryset.values("evaluation_id")).values_list(
            "id", "reservation_owners"
        )
        seen = [pk for pk, known in owners if viewer.sees((known or {}).get(value))]
        return queryset.filter(evaluation_id__in=seen)

    def filter_team(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        """Nodes running a pod of namespace ``value``, or holding a reservation it owns; the
        latter only for the viewer's own teams (another team's reservation is not shown)."""
        listed = self.filter_listed(queryset, name, value)
        viewer = self.viewer()
        if viewer.sees_all or value in viewer.teams:
            return listed
        return listed.filter(devices__icontains=json.dumps(f"{value}/")[:-1])

    def heatmap_filters(self, team_reservations: frozenset[str]) -> HeatmapFilters:
        """The page's view of the same parameters: which GPUs of the heatmap to keep."""
        data = self.form.cleaned_data if self.is_valid() else {}
        return HeatmapFilters(
            node_group=(data.get("node_group") or "").strip(),
            gpu_model=(data.get("gpu_model") or "").strip(),
            reservation=(data.get("reservation") or "").strip(),
            team=(data.get("team") or "").strip(),
            team_reservations=team_reservations,
        )
