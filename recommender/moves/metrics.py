"""The "move instead of buy" gauges of ``/metrics`` (``capacityweb.metrics`` registers
the collector; one query).

Per cluster, from the report of its latest evaluation as stored (``recommender.moves.reports``);
a cluster whose report is still being worked out (or whose search failed) has none of
these gauges: no figure of another evaluation, no zero for an unknown.

- ``capacityweb_move_savings_per_hour{cluster,currency}``: what moving would save per
  hour, the buy plans avoided by moves recommended over buying plus the on-demand nodes
  emptied into their teams' reservations;
- ``capacityweb_move_workloads{cluster,state}``: workloads searched, and unblocked (a
  verified plan) without buying;
- ``capacityweb_move_search_cpu_seconds{cluster}``: the search's CPU time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from recommender.models import Evaluation, MoveReport


class Evaluated(Protocol):
    name: str
    evaluation: Evaluation | None


def current_reports(figures: Iterable[Evaluated]) -> dict[str, MoveReport]:
    """Cluster name → the report of its latest evaluation as stored (one query)."""
    latest = {f.evaluation.pk: f for f in figures if f.evaluation is not None}
    rows = MoveReport.objects.filter(evaluation_id__in=list(latest), result__isnull=False).defer(
        "result"
    )
    found = {}
    for row in rows:
        shown = latest[row.evaluation_id]
        assert shown.evaluation is not None
        if row.evaluation_stored_at == shown.evaluation.stored_at:
            found[shown.name] = row
    return found


class MovesCollector(Collector):
    def __init__(self, reports: Mapping[str, MoveReport], currency: str) -> None:
        self.reports = reports
        self.currency = currency

    def collect(self) -> Iterator[GaugeMetricFamily]:
        savings = GaugeMetricFamily(
            "capacityweb_move_savings_per_hour",
            "Cost per hour that moving running pods would save instead of buying: scale-ups "
            "avoided by verified moves plus on-demand nodes emptied into reservations.",
            labels=["cluster", "currency"],
        )
        workloads = GaugeMetricFamily(
            "capacityweb_move_workloads",
            "Blocked or scale-up workloads searched for a move, and unblocked by one.",
            labels=["cluster", "state"],
        )
        cpu = GaugeMetricFamily(
            "capacityweb_move_search_cpu_seconds",
            "CPU seconds the latest evaluation's move search took.",
            labels=["cluster"],
        )
        for name, row in sorted(self.reports.items()):
            savings.add_metric([name, self.currency], row.savings_per_hour)
            workloads.add_metric([name, "searched"], float(row.workloads_searched))
            workloads.add_metric([name, "unblocked"], float(row.workloads_unblocked))
            cpu.add_metric([name], row.cpu_seconds)
        yield savings
        yield workloads
        yield cpu
