"""``/api/v1/moves/``: the "move instead of buy" reports (``recommender.moves.reports``).

/api/v1/moves/                  one report per evaluation, each cluster's latest by
                                default (``cluster``, ``evaluation``, ``latest=false``);
                                figures only
/api/v1/moves/<id>/             with ``result``: the plans beside the buy plans, the
                                reservation reconciliations, the kubectl actions
/api/v1/moves/rows/             one row per workload searched and per reconciliation,
                                JSON or CSV (``?format=csv``), same filters

A report exists once the worker has stored it for the evaluation as it is stored:
until then an evaluation has none (an empty list for ``?evaluation=<id>``: "being
worked out"), never another evaluation's. Other teams' reservations are relabelled
(capacityweb.visibility).
"""

from __future__ import annotations

from typing import Any

from django.db.models import F, QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from capacityweb import visibility
from capacityweb.api.renderers import CSVRenderer
from capacityweb.api.urls import FILTER_BACKENDS, StandardPagination, router
from recommender.filters import LatestEvaluationFilterSet
from recommender.models import MoveReport
from recommender.moves import reports as moves

MOVE_REPORT_FIELDS = [
    "id",
    "cluster",
    "evaluation",
    "taken_at",
    "stored_at",
    "workloads_searched",
    "workloads_unblocked",
    "avoided_per_hour",
    "saved_per_hour",
    "savings_per_hour",
    "team_savings",
    "cpu_seconds",
    "error",
]


class MoveReportFilterSet(LatestEvaluationFilterSet):
    class Meta:
        model = MoveReport
        fields = ["cluster", "evaluation", "latest"]


class MoveReportSerializer(serializers.ModelSerializer):
    taken_at = serializers.DateTimeField(source="evaluation.taken_at", read_only=True)
    savings_per_hour = serializers.FloatField(read_only=True)

    class Meta:
        model = MoveReport
        fields = MOVE_REPORT_FIELDS


class MoveReportDetailSerializer(MoveReportSerializer):
    """With ``result``: ``MoveReport.to_json()`` (docs/MOVES.md); null when the search
    failed (``error`` says why)."""

    result = serializers.SerializerMethodField()

    class Meta:
        model = MoveReport
        fields = [*MOVE_REPORT_FIELDS, "result"]

    def get_result(self, row: MoveReport) -> dict[str, Any] | None:
        if row.result is None:
            return None
        return moves.shown_result(row, _labels(self.context["request"], row))


class MoveRowsSerializer(serializers.Serializer):
    rows = serializers.ListField(child=serializers.DictField())


def _labels(request: Request, row: MoveReport) -> visibility.ReservationLabels:
    viewer = visibility.request_viewer(request)
    return viewer.labels(row.evaluation.reservation_owners)


class MoveReportViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = MoveReportSerializer
    filterset_class = MoveReportFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["stored_at", "savings_per_hour"]
    csv_columns = moves.CSV_COLUMNS
    csv_filename = "moves"

    def get_queryset(self) -> QuerySet[MoveReport]:
        # a report answers one write of its evaluation: a re-stored one's is never listed
        rows = MoveReport.objects.filter(evaluation_stored_at=F("evaluation__stored_at"))
        rows = rows.select_related("evaluation").order_by("-evaluation__taken_at", "-id")
        if self.action == "list":
            return rows.defer("result", "evaluation__result")
        return rows.defer("evaluation__result")

    def get_serializer_class(self) -> type[serializers.Serializer]:
        if self.action == "retrieve":
            return MoveReportDetailSerializer
        if self.action == "rows":
            return MoveRowsSerializer
        return MoveReportSerializer

    @extend_schema(
        responses=MoveRowsSerializer,
        filters=True,  # the list's filters (cluster, evaluation, latest), so their 400/404
        description=(
            "One row per workload searched and per reservation reconciliation of the "
            "filtered reports (CSV: ?format=csv, columns fixed: "
            + ", ".join(moves.CSV_COLUMNS)
            + "). "
            + " ".join(f"{name}: {text}." for name, text in moves.CSV_COLUMN_NOTES.items())
        ),
    )
    @action(
        detail=False,
        renderer_classes=[*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer],
        pagination_class=None,
    )
    def rows(self, request: Request) -> Response:
        reports = self.filter_queryset(self.get_queryset()).exclude(result=None)
        rows = [line for row in reports for line in moves.csv_rows(row, _labels(request, row))]
        return Response({"rows": rows})


router.register("moves", MoveReportViewSet, basename="move-report")
