"""``/metrics`` gauges of allocated-but-idle GPUs, from each cluster's latest measurement.

- ``capacityweb_gpus_allocated_idle{cluster,source}``: GPUs (MIG instances by their
  share) a pod holds whose activity has stayed below the threshold for the set time,
  at the end of the latest window;
- ``capacityweb_allocated_idle_cost_per_hour{cluster,source,currency}``: what they cost
  per hour (GPUs without a price count nothing here; the report lists them);
- ``capacityweb_gpus_utilisation_measured{cluster,source}`` and
  ``capacityweb_gpus_utilisation_total{cluster,source}``: the coverage, N of M GPUs;
- ``capacityweb_utilisation_age_seconds{cluster}``: now - the latest window's end.

``source`` is ``prometheus`` or ``demo`` (demo data). A cluster whose latest
measurement failed has only the age: its utilisation is unknown, not zero.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from reservations.models import UtilisationReport


class UtilisationCollector(Collector):
    def __init__(self, reports: Sequence[UtilisationReport], now: datetime, currency: str) -> None:
        self.reports = reports
        self.now = now
        self.currency = currency

    def collect(self) -> Iterator[GaugeMetricFamily]:
        labels = ["cluster", "source"]
        idle = GaugeMetricFamily(
            "capacityweb_gpus_allocated_idle",
            "GPUs held by a pod below the idle threshold for the idle time (MIG by share).",
            labels=labels,
        )
        cost = GaugeMetricFamily(
            "capacityweb_allocated_idle_cost_per_hour",
            "Waste: cost per hour of GPUs allocated to pods that leave them idle.",
            labels=[*labels, "currency"],
        )
        measured = GaugeMetricFamily(
            "capacityweb_gpus_utilisation_measured",
            "GPUs with utilisation data in the latest window.",
            labels=labels,
        )
        total = GaugeMetricFamily(
            "capacityweb_gpus_utilisation_total",
            "GPUs of the snapshot the latest window was joined to.",
            labels=labels,
        )
        age = GaugeMetricFamily(
            "capacityweb_utilisation_age_seconds",
            "Seconds since the end of the latest utilisation window (measured or failed).",
            labels=["cluster"],
        )
        for report in self.reports:
            name = report.cluster.name
            age.add_metric([name], (self.now - report.window_end).total_seconds())
            if report.error or report.idle_gpus_now is None:
                continue
            idle.add_metric([name, report.source], report.idle_gpus_now)
            cost.add_metric(
                [name, report.source, self.currency], report.idle_cost_per_hour_now or 0.0
            )
            measured.add_metric([name, report.source], float(report.gpus_measured))
            total.add_metric([name, report.source], float(report.gpus_total))
        yield from (idle, cost, measured, total, age)
