"""REST API of reservations: reservations, digest subscriptions, the two cost reports.

    /api/v1/reservations/               CRUD; a user sees (and edits) only reservations
                                        owned by their teams (``team-<namespace>`` groups);
                                        staff see all. Others' are 404, never 403, so ids
                                        leak nothing.
    /api/v1/subscriptions/              CRUD of the user's own digest subscriptions;
                                        POST <id>/test-email/ sends one now
    /api/v1/reports/idle-reservations/  GPU-hours and $ of idle reserved GPUs, grouped
    /api/v1/reports/waste/              naive vs joint $ and stranded $, per cluster

Reports are open to every authenticated user, other teams' reservations merged into
one row without cost (capacityweb.visibility), throttled (``reports``) and served as
JSON or CSV (``?format=csv`` / ``Accept: text/csv``).
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.core.cache import cache
from django.urls import path
from django.utils import timezone
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import generics, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from capacityweb import visibility
from capacityweb.api.parsers import DepthLimitedJSONParser
from capacityweb.api.renderers import CSVRenderer
from capacityweb.api.urls import (
    FILTER_BACKENDS,
    StandardPagination,
    WriteThrottleMixin,
    api_paths,
    router,
)
from capacityweb.cache import stable_digest
from recommender.models import Evaluation
from reservations import digest, selectors, services, subscription_rules, webhook
from reservations.filters import (
    IdleReportFilterSet,
    ReservationFilterSet,
    SubscriptionFilterSet,
    WasteReportFilterSet,
)
from reservations.models import IdleSample, Reservation, Subscription
from topology.api import validate_project_object
from topology.model.hardware import ModelError

REPORT_CACHE_SECONDS = 300  # the key names the data's version: this only bounds memory

# --- reservations ---------------------------------------------------------------------


class ReservationSerializer(serializers.ModelSerializer):
    """``spec`` is the DESIGN.md Reservation spec; owners, price and window come from it."""

    class Meta:
        model = Reservation
        fields = [
            "id",
            "cluster",
            "name",
            "spec",
            "owner_namespaces",
            "price_per_gpu_hour",
            "start",
            "end",
        ]
        read_only_fields = ["owner_namespaces", "price_per_gpu_hour", "start", "end"]
        # not DRF's UniqueTogetherValidator ("The fields cluster, name must make a unique
        # set."): it told another team that a name exists; services.save_reservation
        # refuses a taken name with NAME_NOT_AVAILABLE, whoever holds it
        validators: list[Any] = []

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        instance = self.instance
        if instance is not None:
            for field in ("cluster", "name"):
                if field in attrs and attrs[field] != getattr(instance, field):
                    raise serializers.ValidationError({field: ["cannot change; create a new one"]})
        cluster = attrs.get("cluster") or instance.cluster
        name = attrs.get("name") or instance.name
        spec = attrs.get("spec", instance.spec if instance else None)
        obj = validate_project_object("Reservation", name, spec, cluster_name=cluster.name)
        return {"cluster": cluster, "name": name, "spec": obj["spec"]}

    def create(self, validated_data: dict[str, Any]) -> Reservation:
        return self._saved(validated_data, None)

    def update(self, instance: Reservation, validated_data: dict[str, Any]) -> Reservation:
        return self._saved(validated_data, instance)

    def _saved(self, data: dict[str, Any], instance: Reservation | None) -> Reservation:
        """Through the one service every path uses; its refusal is this 400."""
        try:
            return services.save_reservation(
                **data, instance=instance, caller=self.context["request"].user
            )
        except services.NameNotAvailable as error:
            raise serializers.ValidationError({"name": [error.reason]}) from error
        except ModelError as error:
            raise serializers.ValidationError({"spec": [str(error)]}) from error


class ReservationViewSet(WriteThrottleMixin, viewsets.ModelViewSet):
    parser_classes = [DepthLimitedJSONParser]  # spec is a JSON object: no form bodies
    serializer_class = ReservationSerializer
    filterset_class = ReservationFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["name", "price_per_gpu_hour", "start", "end"]
    queryset = Reservation.objects.none()  # for the schema; rows come from get_queryset

    def get_queryset(self) -> Any:
        return selectors.visible_reservations(self.request.user).order_by("cluster__name", "name")

    def perform_destroy(self, instance: Reservation) -> None:
        try:
            services.delete_reservation(reservation=instance, caller=self.request.user)
        except ModelError as error:
            raise serializers.ValidationError({"spec": [str(error)]}) from error


# --- subscriptions ---------------------------------------------------------------------


class SubscriptionSerializer(serializers.ModelSerializer):
    hour = serializers.IntegerField(min_value=0, max_value=23, default=8)
    weekday = serializers.IntegerField(min_value=0, max_value=6, default=0)
    threshold_cost = serializers.FloatField(min_value=0.0, default=0.0)

    class Meta:
        model = Subscription
        fields = [
            "id",
            "recipients",
            "clusters",
            "team",
            "cadence",
            "timezone",
            "hour",
            "weekday",
            "threshold_cost",
            "active",
            "webhook_url",
            "created_at",
        ]
        read_only_fields = ["created_at"]

    def validate_recipients(self, value: str) -> str:
        return subscription_rules.clean_recipients(value)

    def validate_webhook_url(self, value: str) -> str:
        return subscription_rules.clean_webhook_url(value)

    def validate_timezone(self, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise serializers.ValidationError(f"{value!r}: unknown IANA time zone") from error
        return value

    def create(self, validated_data: dict[str, Any]) -> Subscription:
        clusters = validated_data.pop("clusters", [])
        user = self.context["request"].user
        return services.save_subscription(user=user, fields=validated_data, clusters=clusters)

    def update(self, instance: Subscription, validated_data: dict[str, Any]) -> Subscription:
        clusters = validated_data.pop("clusters", None)
        return services.save_subscription(
            user=instance.user, fields=validated_data, clusters=clusters, instance=instance
        )


class SubscriptionViewSet(WriteThrottleMixin, viewsets.ModelViewSet):
    """The user's own digest subscriptions; another user's are 404."""

    serializer_class = SubscriptionSerializer
    filterset_class = SubscriptionFilterSet
    filter_backends = FILTER_BACKENDS
    pagination_class = StandardPagination
    ordering_fields = ["id", "cadence", "hour"]
    queryset = Subscription.objects.none()  # for the schema; rows come from get_queryset

    def get_queryset(self) -> Any:
        return selectors.own_subscriptions(self.request.user).order_by("id")

    @extend_schema(
        request=None,
        responses={
            200: inline_serializer(
                "TestEmailSent",
                {"status": serializers.CharField(), "message_id": serializers.CharField()},
            ),
            503: inline_serializer("MailUnavailable", {"detail": serializers.CharField()}),
        },
    )
    @action(detail=True, methods=["post"], url_path="test-email", throttle_scope="test-sends")
    def test_email(self, request: Request, pk: str | None = None) -> Response:
        """Send this subscription's digest for its latest period now, marked [test];
        throttled per user (``test-sends``, shared with the page's button)."""
        subscription = self.get_object()
        outcome = digest.send_test_email(subscription=subscription, now=timezone.now())
        if outcome.status == "mail_server_unavailable":
            return Response({"detail": outcome.detail}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return Response({"status": outcome.status, "message_id": outcome.message_id})

    @extend_schema(
        request=None,
        responses={
            200: inline_serializer(
                "TestWebhookPosted",
                {"status": serializers.CharField(), "detail": serializers.CharField()},
            ),
            400: inline_serializer("TestWebhookRefused", {"webhook_url": serializers.CharField()}),
            502: inline_serializer("WebhookUnreachable", {"detail": serializers.CharField()}),
        },
    )
    @action(detail=True, methods=["post"], url_path="test-webhook", throttle_scope="test-sends")
    def test_webhook(self, request: Request, pk: str | None = None) -> Response:
        """Post this subscription's message for its latest period to its webhook now,
        marked as a test, under the address rules of a real post; throttled with the
        test emails (``test-sends``, one counter per user, shared with the page's buttons).
        ``status`` ``sent`` or ``receiver_error`` (the receiver's answer in ``detail``)."""
        subscription = self.get_object()
        outcome = webhook.send_test_webhook(subscription=subscription, now=timezone.now())
        if outcome.status in ("no_webhook", "refused_address"):
            return Response({"webhook_url": outcome.detail}, status=status.HTTP_400_BAD_REQUEST)
        if outcome.status in ("unreachable", "post_failed"):
            return Response({"detail": outcome.detail}, status=status.HTTP_502_BAD_GATEWAY)
        return Response({"status": outcome.status, "detail": outcome.detail})


# --- reports ----------------------------------------------------------------------------


AMOUNT = "an amount in the row's currency over the period (not per hour)"


class PeriodFields(serializers.Serializer):
    """The money's currency and the period a report row covers (its CSV columns too)."""

    currency = serializers.CharField(help_text="ISO 4217 code of every amount in the row")
    period_start = serializers.DateTimeField(help_text="the report's start (inclusive)")
    period_end = serializers.DateTimeField(help_text="the report's end (exclusive)")
    period_hours = serializers.FloatField(help_text="hours from period_start to period_end")


class IdleReportRowSerializer(PeriodFields):
    group = serializers.CharField()
    reservations = serializers.IntegerField()
    reserved_gpu_hours = serializers.FloatField()
    idle_gpu_hours = serializers.FloatField()
    idle_cost = serializers.FloatField(
        allow_null=True, help_text="null on the row of other teams' reservations"
    )


class IdleReportSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    group_by = serializers.ChoiceField(choices=selectors.GROUP_BY_CHOICES)
    rows = IdleReportRowSerializer(many=True)
    totals = IdleReportRowSerializer()


class WasteReportRowSerializer(PeriodFields):
    cluster = serializers.CharField()
    evaluations = serializers.IntegerField()
    naive_cost = serializers.FloatField(help_text=AMOUNT)
    joint_cost = serializers.FloatField(help_text=AMOUNT)
    stranded_cost = serializers.FloatField(help_text=AMOUNT)
    savings = serializers.FloatField(help_text=AMOUNT)


class WasteReportSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    rows = WasteReportRowSerializer(many=True)
    totals = WasteReportRowSerializer()


class ReportView(generics.GenericAPIView):
    """One report: its FilterSet validates the parameters, a selector computes the rows.

    A report over an explicit range (``start`` and ``end`` given) whose view has a
    ``data_version`` is kept in the default cache (shared by the web workers) under
    its arguments and that version, so a dashboard polling it is not recomputing
    it; any change to the data it reads changes the version, hence the key.
    """

    throttle_scope = "reports"
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]
    filter_backends = FILTER_BACKENDS[:1]
    pagination_class = None
    csv_columns: tuple[str, ...] = ()

    def report(self, **arguments: Any) -> dict[str, Any]:
        raise NotImplementedError

    def data_version(self, **arguments: Any) -> str | None:
        """What the report reads, as a digest; None: not cached."""
        return None

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        filterset = self.filterset_class(request.query_params, queryset=self.queryset)
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        arguments = filterset.report_arguments()
        explicit_range = "start" in request.query_params and "end" in request.query_params
        version = self.data_version(**arguments) if explicit_range else None
        if version is None:
            return Response(self.get_serializer(self.report(**arguments)).data)
        viewer = visibility.request_viewer(request).key()
        arguments_digest = stable_digest(sorted(arguments.items()))
        key = f"report:{self.csv_filename}:{version}:{viewer}:{arguments_digest}"
        data = cache.get(key)
        if data is None:
            data = dict(self.get_serializer(self.report(**arguments)).data)
            cache.set(key, data, timeout=REPORT_CACHE_SECONDS)
        return Response(data)


class IdleReservationsReportView(ReportView):
    """Idle reserved GPU-hours and $ over [start, end), grouped by ``group_by``.

    Each reservation's samples form a step function (a sample holds until the
    next), clipped to the reservation's own window; CSV columns:
    group, reservations, reserved_gpu_hours, idle_gpu_hours, idle_cost, currency,
    period_start, period_end, period_hours.
    """

    queryset = IdleSample.objects.none()
    serializer_class = IdleReportSerializer
    filterset_class = IdleReportFilterSet
    csv_columns = selectors.IDLE_REPORT_COLUMNS
    csv_filename = "idle-reservations"

    def report(self, **arguments: Any) -> dict[str, Any]:
        return selectors.idle_report(**arguments, viewer=visibility.request_viewer(self.request))

    def data_version(self, **arguments: Any) -> str | None:
        return selectors.idle_report_version(arguments["group_by"])


class WasteReportView(ReportView):
    """Naive vs joint autoscaler $ and the naive one's stranded $ over [start, end).

    CSV columns: cluster, evaluations, naive_cost, joint_cost, stranded_cost, savings (each
    an amount in ``currency`` over the period, not per hour), currency, period_start,
    period_end, period_hours.
    """

    queryset = Evaluation.objects.none()
    serializer_class = WasteReportSerializer
    filterset_class = WasteReportFilterSet
    csv_columns = selectors.WASTE_REPORT_COLUMNS
    csv_filename = "waste"

    def report(self, **arguments: Any) -> dict[str, Any]:
        return selectors.waste_report(**arguments)


router.register("reservations", ReservationViewSet, basename="reservation")
router.register("subscriptions", SubscriptionViewSet, basename="subscription")
api_paths += [
    path(
        "reports/idle-reservations/",
        IdleReservationsReportView.as_view(),
        name="report-idle-reservations",
    ),
    path("reports/waste/", WasteReportView.as_view(), name="report-waste"),
]
