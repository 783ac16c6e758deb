"""Measuring a cluster's allocated-but-idle GPUs: query Prometheus, run the engine, store it.

::

    PrometheusSource (url, token, TLS, timeout)
        │ query_range x 3 metrics over [start - idle_for, end) at UTILISATION_STEP_SECONDS
        ▼
    reservations.utilisation.dcgm.measure(model of the latest snapshot, series)
        ▼
    UtilisationReport (one per window; windows follow each other: the next one starts
                       where the last ended, so the digest's sums count nothing twice)

A failed query stores a report with ``error`` and null figures: the pages then say
"utilisation unknown" and why, never 0 %.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from reservations.models import (
    PrometheusSource,
    UtilisationPod,
    UtilisationReport,
    validate_base_url,
)
from reservations.utilisation.dcgm import (
    METRICS,
    DcgmSeries,
    UtilisationSettings,
    measure,
    report_json,
    series_from_matrix,
)
from reservations.utilisation.demo import demo_series
from reservations.utilisation.prometheus import PrometheusEndpoint, PrometheusError, query_range
from topology.adapters import cluster_from_snapshot
from topology.model.hardware import ModelError
from topology.models import Cluster, Snapshot


def utilisation_settings() -> UtilisationSettings:
    return UtilisationSettings(
        idle_below_percent=settings.UTILISATION_IDLE_BELOW_PERCENT,
        idle_for_seconds=float(settings.UTILISATION_IDLE_FOR_SECONDS),
    )


def endpoint_of(source: PrometheusSource) -> PrometheusEndpoint:
    """The source as the HTTP client reads it; a URL the model would refuse now (user-info,
    query, fragment: a row stored before the rule, or written around it) is refused at
    send time too, with the model's reason."""
    try:
        validate_base_url(source.url)
    except ValidationError as error:
        raise PrometheusError(
            f"PrometheusSource {source.pk}: {' '.join(error.messages)}"
        ) from error
    basic_auth = (
        (source.basic_auth_username, source.basic_auth_password)
        if source.basic_auth_username
        else None
    )
    return PrometheusEndpoint(
        url=source.url,
        bearer_token=source.bearer_token,
        basic_auth=basic_auth,
        verify_tls=source.verify_tls,
        timeout_seconds=source.query_timeout_seconds,
    )


def next_window(cluster: Cluster, now: datetime) -> tuple[datetime, datetime]:
    """[end of the last measured window, now), at most UTILISATION_WINDOW_SECONDS long."""
    step = settings.UTILISATION_STEP_SECONDS
    end = datetime.fromtimestamp(now.timestamp() // step * step, tz=now.tzinfo)
    earliest = end - timedelta(seconds=settings.UTILISATION_WINDOW_SECONDS)
    last = cluster.utilisation_reports.order_by("-window_end").values_list("window_end", flat=True)
    start = max(last.first() or earliest, earliest)
    return start, end


def fetch_series(
    endpoint: PrometheusEndpoint, *, start: datetime, end: datetime, step: float
) -> list[DcgmSeries]:
    """The three DCGM metrics over [start, end]; a metric with no series is simply absent."""
    series: list[DcgmSeries] = []
    for metric in METRICS:
        payload = query_range(endpoint, metric, start=start, end=end, step=step)
        series.extend(series_from_matrix(payload, source=metric))
    return series


def measure_cluster(*, cluster: Cluster, now: datetime) -> UtilisationReport | None:
    """Measure the next window of a cluster with an enabled Prometheus source; None without."""
    source = PrometheusSource.objects.filter(cluster=cluster, enabled=True).first()
    if source is None:
        return None
    start, end = next_window(cluster, now)
    if end <= start:
        return None
    config = utilisation_settings()
    step = float(settings.UTILISATION_STEP_SECONDS)
    try:
        series = fetch_series(
            endpoint_of(source),
            start=start - timedelta(seconds=config.idle_for_seconds),
            end=end - timedelta(seconds=step),  # the last point stands for [end - step, end)
            step=step,
        )
    except (PrometheusError, ModelError) as error:
        return store_failure(cluster=cluster, start=start, end=end, now=now, error=str(error))
    return store_report(
        cluster=cluster,
        series=series,
        start=start,
        end=end,
        now=now,
        source=UtilisationReport.Source.PROMETHEUS,
    )


def store_report(
    *,
    cluster: Cluster,
    series: Iterable[DcgmSeries],
    start: datetime,
    end: datetime,
    now: datetime,
    source: str,
    step: float | None = None,
) -> UtilisationReport:
    """Run the engine on the latest snapshot's model and store the window's report."""
    snapshot = Snapshot.objects.filter(cluster=cluster).order_by("-taken_at").first()
    if snapshot is None:
        return store_failure(
            cluster=cluster, start=start, end=end, now=now, error="no snapshot to join to"
        )
    report = measure(
        cluster_from_snapshot(snapshot),
        series,
        start=start,
        end=end,
        step_seconds=step or float(settings.UTILISATION_STEP_SECONDS),
        settings=utilisation_settings(),
    )
    fields = {
        "window_start": start,
        "measured_at": now,
        "source": source,
        "error": "",
        "gpus_total": report.gpus_total,
        "gpus_measured": report.gpus_measured,
        "idle_gpu_hours": report.idle_gpu_hours,
        "idle_cost": report.idle_cost,
        "idle_gpus_now": report.idle_gpus_now,
        "idle_cost_per_hour_now": report.idle_cost_per_hour_now,
        "summary": summary_json(report),
        "result": {**report_json(report), "currency": settings.CURRENCY, "source": source},
    }
    with transaction.atomic():
        row = _replace_report(cluster=cluster, end=end, fields=fields)
        # the detail lives on the latest report only (see UtilisationReport)
        older = UtilisationReport.objects.filter(cluster=cluster, window_end__lt=end)
        older.exclude(result={}).update(result={})
        UtilisationPod.objects.filter(cluster=cluster).delete()
        UtilisationPod.objects.bulk_create(
            (pod_row(cluster, row, pod) for pod in report.pods), batch_size=1000
        )
    return row


def summary_json(report: Any) -> dict[str, Any]:
    """What every report keeps: coverage, currency, rule, and the idle pods' hours and cost."""
    return {
        "coverage": report.coverage,
        "currency": settings.CURRENCY,
        "unpriced_idle_gpu_hours": report.unpriced_idle_gpu_hours,
        "idle_below_percent": report.settings.idle_below_percent,
        "idle_for_seconds": report.settings.idle_for_seconds,
        "idle_pods": {
            f"{pod.namespace}/{pod.name}": [pod.idle_gpu_hours, pod.idle_cost]
            for pod in report.pods
            if pod.idle_gpu_hours > 0
        },
    }


def pod_row(cluster: Cluster, report: UtilisationReport, pod: Any) -> UtilisationPod:
    return UtilisationPod(
        cluster=cluster,
        report=report,
        namespace=pod.namespace,
        pod=pod.name,
        workload=pod.workload,
        gpus=pod.gpus,
        activity_mean_percent=pod.activity_mean_percent,
        activity_p95_percent=pod.activity_p95_percent,
        memory_mean_mib=pod.memory_mean_mib,
        memory_p95_mib=pod.memory_p95_mib,
        idle_gpu_hours=pod.idle_gpu_hours,
        idle_cost=pod.idle_cost,
        in_snapshot=pod.in_snapshot,
    )


def _replace_report(
    *, cluster: Cluster, end: datetime, fields: dict[str, Any]
) -> UtilisationReport:
    """The window's report, replacing an earlier one of the same window (delete + insert in
    one transaction: an update would read the old, megabytes-large result back first)."""
    with transaction.atomic():
        UtilisationReport.objects.filter(cluster=cluster, window_end=end).delete()
        return UtilisationReport.objects.create(cluster=cluster, window_end=end, **fields)


def store_failure(
    *, cluster: Cluster, start: datetime, end: datetime, now: datetime, error: str
) -> UtilisationReport:
    return _replace_report(
        cluster=cluster,
        end=end,
        fields={
            "window_start": start,
            "measured_at": now,
            "source": UtilisationReport.Source.PROMETHEUS,
            "error": error,
            "gpus_total": 0,
            "gpus_measured": 0,
            "idle_gpu_hours": None,
            "idle_cost": None,
            "idle_gpus_now": None,
            "idle_cost_per_hour_now": None,
            "summary": {},
            "result": {},
        },
    )


DEMO_WINDOW = timedelta(hours=6)
DEMO_STEP_SECONDS = 900.0


def store_demo_report(*, cluster: Cluster, now: datetime) -> UtilisationReport:
    """The demo's measurement without a Prometheus: demo series (``utilisation_demo``) for the
    last 6 hours of the latest snapshot, through the same engine, stored as ``demo``."""
    snapshot = Snapshot.objects.filter(cluster=cluster).order_by("-taken_at").first()
    end = datetime.fromtimestamp(
        now.timestamp() // DEMO_STEP_SECONDS * DEMO_STEP_SECONDS, now.tzinfo
    )
    start = end - DEMO_WINDOW
    look_back = timedelta(seconds=utilisation_settings().idle_for_seconds)
    series = (
        demo_series(
            cluster_from_snapshot(snapshot),
            start=start - look_back,
            end=end,
            step_seconds=DEMO_STEP_SECONDS,
        )
        if snapshot is not None
        else []
    )
    return store_report(
        cluster=cluster,
        series=series,
        start=start,
        end=end,
        now=now,
        source=UtilisationReport.Source.DEMO,
        step=DEMO_STEP_SECONDS,
    )


def delete_old_reports(*, now: datetime, retention_days: int) -> int:
    """Reports whose window ended more than ``retention_days`` ago (SNAPSHOT_RETENTION_DAYS,
    as snapshots; a weekly digest needs the last 7 days); how many were deleted."""
    cutoff = now - timedelta(days=retention_days)
    deleted, _ = UtilisationReport.objects.filter(window_end__lt=cutoff).delete()
    return deleted
