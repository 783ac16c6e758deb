"""Reservations, the idle GPU samples taken at every evaluation, and digest subscriptions.

Cluster ──< Reservation ──< IdleSample >── Evaluation
User ──< Subscription >──< Cluster;  Subscription ──< DigestDelivery (once per period)
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from recommender.models import Evaluation
from topology.models import Cluster


class Reservation(models.Model):
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="reservations")
    name = models.CharField(max_length=200)
    owner_namespaces = models.JSONField(default=list)
    spec = models.JSONField(help_text="capacityweb.io/v1alpha1 Reservation spec")
    price_per_gpu_hour = models.FloatField(default=0.0)
    start = models.DateTimeField(null=True, blank=True)
    end = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="reservation_unique_name")
        ]
        ordering = ["cluster", "name"]

    def __str__(self) -> str:
        return self.name


class IdleSample(models.Model):
    reservation = models.ForeignKey(
        Reservation, on_delete=models.CASCADE, related_name="idle_samples"
    )
    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.CASCADE, related_name="idle_samples"
    )
    taken_at = models.DateTimeField()
    reserved_gpus = models.PositiveIntegerField(default=0)
    idle_gpus = models.PositiveIntegerField(default=0)
    cost_per_hour = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["reservation", "evaluation"], name="idlesample_unique_per_evaluation"
            )
        ]
        indexes = [
            models.Index(fields=["reservation", "taken_at"], name="idlesample_reservation_taken")
        ]
        ordering = ["reservation", "taken_at"]

    def __str__(self) -> str:
        return f"{self.reservation_id}@{self.taken_at:%Y-%m-%d %H:%M}: {self.idle_gpus} idle"


class Subscription(models.Model):
    class Cadence(models.TextChoices):
        DAILY = "daily", "Daily"
        WEEKLY = "weekly", "Weekly"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="digest_subscriptions"
    )
    recipients = models.TextField(help_text="Email addresses, one per line or comma-separated")
    clusters = models.ManyToManyField(Cluster, related_name="subscriptions")
    team = models.CharField(max_length=200, blank=True, help_text="Namespace; blank = all")
    cadence = models.CharField(max_length=16, choices=Cadence.choices, default=Cadence.DAILY)
    timezone = models.CharField(max_length=64, default="UTC")
    hour = models.PositiveSmallIntegerField(default=8)
    weekday = models.PositiveSmallIntegerField(default=0, help_text="0 = Monday (weekly only)")
    threshold_cost = models.FloatField(
        default=0.0, help_text="Send only when idle reserved $ in the period reaches this"
    )
    active = models.BooleanField(default=True)
    webhook_url = models.URLField(
        max_length=500,
        blank=True,
        help_text='Slack-compatible incoming webhook: POSTed {"text": ...} once per period',
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.user} {self.cadence} {self.team or 'all teams'}"


class DigestDelivery(models.Model):
    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    period_start = models.DateTimeField()
    period_end = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    message_id = models.CharField(max_length=255, blank=True)
    skipped_reason = models.CharField(
        max_length=255, blank=True, help_text="why no email went out for this period"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subscription", "period_start"], name="digest_once_per_period"
            )
        ]
        ordering = ["-period_start"]

    def __str__(self) -> str:
        return f"{self.subscription_id} {self.period_start:%Y-%m-%d}"


class WebhookDelivery(models.Model):
    """A subscription's webhook post for one period, claimed before it is sent (at most once)."""

    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="webhook_deliveries"
    )
    period_start = models.DateTimeField()
    period_end = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="the receiver's HTTP status"
    )
    skipped_reason = models.CharField(
        max_length=255, blank=True, help_text="why no post went out, or what the receiver said"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subscription", "period_start"], name="webhook_once_per_period"
            )
        ]
        ordering = ["-period_start"]

    def __str__(self) -> str:
        return f"{self.subscription_id} {self.period_start:%Y-%m-%d} webhook"


def validate_http_url(value: str) -> None:
    """An http(s) URL with a host: in-cluster names (``http://prometheus:9090``) included,
    which Django's URLValidator refuses for lacking a top-level domain."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = "(not shown: it carries user-info)" if "@" in value else repr(value)
        raise ValidationError(f"must be an http:// or https:// URL with a host, got {shown}")


def validate_base_url(value: str) -> None:
    """An http(s) base URL that paths are appended to: no user-info, query or fragment.

    A fragment (``http://host/internal#``) would cut off the appended API path and
    send the request elsewhere on the host; a query would be merged with the
    request's own; user-info would keep a password in a field that is shown back.
    Credentials go in their own write-only fields instead.
    """
    validate_http_url(value)
    parts = urlsplit(value)
    if "@" in parts.netloc:
        raise ValidationError(
            "url: must not carry user-info (user:password@): put the credentials in "
            "basic_auth_username/basic_auth_password or bearer_token"
        )
    if "?" in value:
        raise ValidationError(
            "url: must not carry a query (?...): the API path and its query are appended"
        )
    if "#" in value:
        raise ValidationError(
            "url: must not carry a fragment (#...): it would cut off the appended API path"
        )


class PrometheusSource(models.Model):
    """Where a cluster's DCGM exporter series are: a Prometheus server's HTTP API."""

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, related_name="prometheus_source"
    )
    url = models.CharField(
        max_length=500,
        validators=[validate_base_url],
        help_text="Prometheus base URL, e.g. http://prometheus-operated.monitoring:9090 "
        "(no user-info, query or fragment)",
    )
    bearer_token = models.CharField(
        max_length=1000, blank=True, help_text="sent as Authorization: Bearer; blank = none"
    )
    basic_auth_username = models.CharField(
        max_length=200, blank=True, help_text="HTTP basic auth user; blank = none"
    )
    basic_auth_password = models.CharField(
        max_length=1000, blank=True, help_text="HTTP basic auth password"
    )
    verify_tls = models.BooleanField(default=True, help_text="check the server's certificate")
    query_timeout_seconds = models.FloatField(default=30.0)
    enabled = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"{self.cluster} ← {self.url}"


class UtilisationReport(models.Model):
    """One measurement of allocated-but-idle GPUs over [window_start, window_end).

    ``result`` is ``reservations.utilisation.dcgm.report_json`` (per GPU, pod and team), kept on
    each cluster's latest report only: older ones keep the columns and ``summary``
    (coverage, currency, the idle pods' GPU-hours and cost, what the digest sums), so a
    1,000-node cluster measured every 15 minutes stores kilobytes, not megabytes, a
    window. Figures are null when the measurement failed (``error`` says why):
    utilisation unknown, never zero.
    """

    class Source(models.TextChoices):
        PROMETHEUS = "prometheus", "Prometheus (DCGM exporter)"
        DEMO = "demo", "Demo data (no Prometheus)"

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="utilisation_reports"
    )
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    measured_at = models.DateTimeField()
    source = models.CharField(max_length=16, choices=Source.choices)
    error = models.TextField(blank=True)
    gpus_total = models.PositiveIntegerField(default=0)
    gpus_measured = models.PositiveIntegerField(default=0)
    idle_gpu_hours = models.FloatField(null=True, blank=True)
    idle_cost = models.FloatField(null=True, blank=True)
    idle_gpus_now = models.FloatField(null=True, blank=True)
    idle_cost_per_hour_now = models.FloatField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "window_end"], name="utilisation_once_per_window"
            )
        ]
        indexes = [models.Index(fields=["cluster", "-window_end"], name="utilisation_cluster_end")]
        ordering = ["-window_end"]

    def __str__(self) -> str:
        return f"{self.cluster_id} utilisation to {self.window_end:%Y-%m-%d %H:%M}"


class UtilisationPod(models.Model):
    """One pod of a cluster's latest utilisation report (replaced with it), for lookups by
    workload (the workload page) without reading the report's whole result."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    report = models.ForeignKey(UtilisationReport, on_delete=models.CASCADE, related_name="pod_rows")
    namespace = models.CharField(max_length=253)
    pod = models.CharField(max_length=253)
    workload = models.CharField(max_length=507, help_text="namespace/name of its gang or itself")
    gpus = models.FloatField(default=0.0)
    activity_mean_percent = models.FloatField(null=True, blank=True)
    activity_p95_percent = models.FloatField(null=True, blank=True)
    memory_mean_mib = models.FloatField(null=True, blank=True)
    memory_p95_mib = models.FloatField(null=True, blank=True)
    idle_gpu_hours = models.FloatField(default=0.0)
    idle_cost = models.FloatField(null=True, blank=True)
    in_snapshot = models.BooleanField(default=True)

    class Meta:
        indexes = [models.Index(fields=["report", "workload"], name="utilisationpod_workload")]
        ordering = ["namespace", "pod"]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.pod}"
