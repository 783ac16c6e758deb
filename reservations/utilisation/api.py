"""REST API of utilisation: the Prometheus source per cluster and the allocated-but-idle report.

/api/v1/prometheus-sources/        CRUD for operators only (reads too: staff or holders
                                   of ``reservations.*_prometheussource``); the bearer
                                   token and basic auth are write-only
                                   (``has_bearer_token``, ``has_basic_auth`` say if set)
/api/v1/reports/utilisation/       each cluster's latest measurement: ``clusters``
                                   (window, coverage, totals, data source) and ``rows``
                                   per pod, GPU or team (``group_by``); JSON or CSV
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from rest_framework import generics, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from capacityweb import visibility
from capacityweb.api.permissions import OperatorOnly
from capacityweb.api.renderers import CSVRenderer
from capacityweb.api.urls import (
    FILTER_BACKENDS,
    StandardPagination,
    WriteThrottleMixin,
    api_paths,
    router,
)
from reservations.models import PrometheusSource, UtilisationReport
from reservations.utilisation import selectors

MAX_QUERY_TIMEOUT_SECONDS = 300.0


class PrometheusSourceSerializer(serializers.ModelSerializer):
    bearer_token = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=1000
    )
    has_bearer_token = serializers.SerializerMethodField()
    basic_auth_username = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=200
    )
    basic_auth_password = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=1000
    )
    has_basic_auth = serializers.SerializerMethodField()

    class Meta:
        model = PrometheusSource
        fields = [
            "id",
            "cluster",
            "url",
            "bearer_token",
            "has_bearer_token",
            "basic_auth_username",
            "basic_auth_password",
            "has_basic_auth",
            "verify_tls",
            "query_timeout_seconds",
            "enabled",
        ]

    def get_has_bearer_token(self, source: PrometheusSource) -> bool:
        return bool(source.bearer_token)

    def get_has_basic_auth(self, source: PrometheusSource) -> bool:
        return bool(source.basic_auth_username)

    def validate_query_timeout_seconds(self, value: float) -> float:
        if not 0 < value <= MAX_QUERY_TIMEOUT_SECONDS:
            raise serializers.ValidationError(
                f"PrometheusSource: query_timeout_seconds: must be in (0, "
                f"{MAX_QUERY_TIMEOUT_SECONDS:g}], got {value:g}"
            )
        return value


class PrometheusSourceViewSet(WriteThrottleMixin, viewsets.ModelViewSet):
    queryset = PrometheusSource.objects.select_related("cluster").order_by("cluster__name")
    serializer_class = PrometheusSourceSerializer
    permission_classes = [OperatorOnly]
    filter_backends = FILTER_BACKENDS
    filterset_class = selectors.PrometheusSourceFilterSet
    pagination_class = StandardPagination


class UtilisationClusterSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    cluster_id = serializers.IntegerField()
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    data_source = serializers.CharField()
    demo = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True)
    coverage = serializers.CharField(allow_null=True)
    gpus_total = serializers.IntegerField()
    gpus_measured = serializers.IntegerField()
    idle_gpu_hours = serializers.FloatField(allow_null=True)
    idle_cost = serializers.FloatField(allow_null=True)
    unpriced_idle_gpu_hours = serializers.FloatField(allow_null=True)
    idle_gpus_now = serializers.FloatField(allow_null=True)
    idle_cost_per_hour_now = serializers.FloatField(allow_null=True)
    currency = serializers.CharField()
    idle_below_percent = serializers.FloatField(allow_null=True)
    idle_for_seconds = serializers.FloatField(allow_null=True)


class UtilisationReportSerializer(serializers.Serializer):
    group_by = serializers.ChoiceField(choices=selectors.GROUP_BY_CHOICES)
    clusters = UtilisationClusterSerializer(many=True)
    rows = serializers.ListField(child=serializers.DictField())


class UtilisationReportView(generics.GenericAPIView):
    """Allocated-but-idle GPUs of each cluster's latest measurement.

    ``null`` figures are unknown (no data for that GPU or pod, or the measurement
    failed: ``error`` says why to operators, "utilisation source unavailable" to
    everyone else), never zero. CSV: the rows under stable columns per
    ``group_by`` (units in the names: ``_percent``, ``_mib``, ``_gpu_hours``; money in
    ``currency``; ``data_source`` ``demo`` marks demo data).
    """

    queryset = UtilisationReport.objects.none()
    serializer_class = UtilisationReportSerializer
    filterset_class = selectors.UtilisationFilterSet
    filter_backends = FILTER_BACKENDS[:1]
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]
    throttle_scope = "reports"
    pagination_class = None
    csv_filename = "utilisation"

    @property
    def csv_columns(self) -> tuple[str, ...]:
        group_by = self.request.query_params.get("group_by") or "pod"
        return selectors.COLUMNS.get(group_by, selectors.COLUMNS["pod"])

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        filterset = self.filterset_class(request.query_params, queryset=self.queryset)
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        arguments = filterset.arguments()
        reports = selectors.latest_reports(arguments["cluster_ids"])
        data = {
            "group_by": arguments["group_by"],
            "clusters": [
                selectors.report_summary(report, operator=visibility.sees_sources(request.user))
                for report in reports
            ],
            "rows": selectors.report_rows(
                reports,
                viewer=visibility.request_viewer(request),
                group_by=arguments["group_by"],
                team=arguments["team"],
            ),
        }
        return Response(self.get_serializer(data).data)


router.register("prometheus-sources", PrometheusSourceViewSet, basename="prometheus-source")
api_paths.append(
    path("reports/utilisation/", UtilisationReportView.as_view(), name="report-utilisation")
)
