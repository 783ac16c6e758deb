"""``/metrics``: the clusters' latest evaluated figures in the Prometheus text format.

    Prometheus ──GET /metrics (Bearer token, or from METRICS_ALLOWED_NETWORKS)──►
        metrics_view ─► cluster_figures(): 5 queries (clusters, snapshots, evaluations without
        their result JSON, verdict counts, disagreement lists) ─► gauges ─► text
                     ─► latest_reports(): 1 query (allocated-but-idle utilisation)
                     ─► current_reports(): 1 query (move instead of buy)

Every gauge is labelled ``cluster``; money gauges also ``currency`` (settings
CURRENCY). Figures come from each cluster's latest *evaluated* snapshot; the
ages and durations say how fresh they are:

- ``capacityweb_snapshot_age_seconds``: now - the latest snapshot's ``taken_at``
  (evaluated or not: an ingest that stopped shows here);
- ``capacityweb_ingest_duration_seconds``: that snapshot's ``taken_at`` (read
  started) to its row being stored;
- ``capacityweb_evaluation_age_seconds``: now - the latest evaluation stored;
- ``capacityweb_evaluation_duration_seconds``: that evaluation's snapshot stored to
  the evaluation stored (queue wait included, as an operator sees it);
- ``capacityweb_ingest_up``: 1 when the last read of the cluster's source succeeded,
  0 while it is unreachable (retried) or refused (nothing stored, the previous
  snapshot kept); ``capacityweb_ingest_down_seconds`` says for how long, labelled
  ``state``; ``capacityweb_ingest_kinds`` counts the kube source's kinds by ``state``
  (served, not served, forbidden, failing).

A cluster with no evaluation yet gets only the snapshot gauges: no figure is
reported as zero when it is unknown. Access: a request carrying
``Authorization: Bearer <METRICS_TOKEN>`` (when set), or one whose REMOTE_ADDR is
in METRICS_ALLOWED_NETWORKS (default loopback only); forwarded headers are not
trusted. A fresh registry per scrape: no global state across web workers.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Count, OuterRef, Subquery
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from recommender.filters import DISAGREEMENT_CLASSES
from recommender.models import Evaluation, WorkloadVerdict
from recommender.moves.metrics import MovesCollector, current_reports
from reservations.utilisation.metrics import UtilisationCollector
from reservations.utilisation.selectors import latest_reports
from topology.models import Cluster, Snapshot

VERDICTS = tuple(WorkloadVerdict.Verdict.values)


@dataclass
class ClusterFigures:
    name: str
    snapshot: Snapshot | None
    evaluation: Evaluation | None
    verdicts: Counter[str] = field(default_factory=Counter)
    classes: Counter[str] = field(default_factory=Counter)
    ingest_state: str = ""
    ingest_since: datetime | None = None
    kind_states: Counter[str] = field(default_factory=Counter)


def cluster_figures() -> list[ClusterFigures]:
    """Each cluster with its latest snapshot and latest evaluation (5 queries)."""
    latest_snapshot = Snapshot.objects.filter(cluster=OuterRef("pk")).order_by("-taken_at")
    latest_evaluation = Evaluation.objects.filter(cluster=OuterRef("pk")).order_by("-taken_at")
    clusters = list(
        Cluster.objects.order_by("name").annotate(
            latest_snapshot_id=Subquery(latest_snapshot.values("id")[:1]),
            latest_evaluation_id=Subquery(latest_evaluation.values("id")[:1]),
        )
    )
    evaluation_ids = [c.latest_evaluation_id for c in clusters if c.latest_evaluation_id]
    snapshot_ids = [c.latest_snapshot_id for c in clusters if c.latest_snapshot_id]
    snapshots = {
        s.id: s
        for s in Snapshot.objects.filter(id__in=snapshot_ids).only(
            "id", "cluster_id", "taken_at", "created_at"
        )
    }
    evaluations = {
        e.id: e
        for e in Evaluation.objects.filter(id__in=evaluation_ids)
        .select_related("snapshot")
        .defer("result", "snapshot__model_json", "snapshot__object_counts", "snapshot__errors")
    }
    figures = [
        ClusterFigures(
            c.name,
            snapshots.get(c.latest_snapshot_id),
            evaluations.get(c.latest_evaluation_id),
            ingest_state=c.ingest_state,
            ingest_since=c.ingest_since,
            kind_states=Counter(str(k.get("state")) for k in (c.ingest_kinds or {}).values()),
        )
        for c in clusters
    ]
    of_evaluation = {f.evaluation.id: f for f in figures if f.evaluation is not None}
    verdict_rows = (
        WorkloadVerdict.objects.filter(evaluation_id__in=evaluation_ids)
        .values_list("evaluation_id", "verdict")
        .annotate(count=Count("id"))
        .order_by()
    )
    for evaluation_id, verdict, count in verdict_rows:
        of_evaluation[evaluation_id].verdicts[verdict] += count
    class_rows = (
        WorkloadVerdict.objects.filter(evaluation_id__in=evaluation_ids)
        .exclude(disagreements=[])
        .values_list("evaluation_id", "disagreements")
    )
    for evaluation_id, classes in class_rows:
        of_evaluation[evaluation_id].classes.update(set(classes))
    return figures


def seconds_between(start: datetime, end: datetime) -> float:
    return max((end - start).total_seconds(), 0.0)


class ClusterCollector(Collector):
    """The gauges of ``figures`` at ``now``; collected once, by one scrape."""

    def __init__(self, figures: list[ClusterFigures], now: datetime, currency: str) -> None:
        self.figures = figures
        self.now = now
        self.currency = currency

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from self.snapshot_gauges()
        yield from self.ingest_gauges()
        evaluated = [f for f in self.figures if f.evaluation is not None]
        yield from self.gpu_gauges(evaluated)
        yield from self.money_gauges(evaluated)
        yield from self.pending_gauges(evaluated)
        yield from self.evaluation_gauges(evaluated)

    def snapshot_gauges(self) -> Iterator[GaugeMetricFamily]:
        age = GaugeMetricFamily(
            "capacityweb_snapshot_age_seconds",
            "Seconds since the cluster's latest snapshot was taken (evaluated or not).",
            labels=["cluster"],
        )
        duration = GaugeMetricFamily(
            "capacityweb_ingest_duration_seconds",
            "Seconds from the latest snapshot's read starting to its being stored.",
            labels=["cluster"],
        )
        for f in self.figures:
            if f.snapshot is None:
                continue
            age.add_metric([f.name], seconds_between(f.snapshot.taken_at, self.now))
            duration.add_metric(
                [f.name], seconds_between(f.snapshot.taken_at, f.snapshot.created_at)
            )
        yield age
        yield duration

    def ingest_gauges(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily(
            "capacityweb_ingest_up",
            "1 when the last read of the cluster's source succeeded, 0 while it is "
            "unreachable or refused (the previous snapshot is kept).",
            labels=["cluster"],
        )
        down = GaugeMetricFamily(
            "capacityweb_ingest_down_seconds",
            "Seconds since the cluster's source became unreachable or was refused.",
            labels=["cluster", "state"],
        )
        kinds = GaugeMetricFamily(
            "capacityweb_ingest_kinds",
            "Kinds the kube source reads, by state (served, not served, forbidden, failing).",
            labels=["cluster", "state"],
        )
        for f in self.figures:
            if f.ingest_state:
                up.add_metric([f.name], 1.0 if f.ingest_state == "ok" else 0.0)
            if f.ingest_state not in ("", "ok") and f.ingest_since is not None:
                down.add_metric([f.name, f.ingest_state], seconds_between(f.ingest_since, self.now))
            for state, count in sorted(f.kind_states.items()):
                kinds.add_metric([f.name, state], float(count))
        yield up
        yield down
        yield kinds

    def gpu_gauges(self, evaluated: Iterable[ClusterFigures]) -> Iterator[GaugeMetricFamily]:
        families = {
            "gpus": GaugeMetricFamily(
                "capacityweb_gpus", "GPUs in the latest evaluated snapshot.", labels=["cluster"]
            ),
            "gpus_allocated": GaugeMetricFamily(
                "capacityweb_gpus_allocated",
                "GPUs allocated to pods (whole-GPU equivalents, as the overview counts).",
                labels=["cluster"],
            ),
            "gpus_idle_reserved": GaugeMetricFamily(
                "capacityweb_gpus_idle_reserved",
                "GPUs of reservations that no pod uses.",
                labels=["cluster"],
            ),
            "stranded_gpus": GaugeMetricFamily(
                "capacityweb_gpus_stranded",
                "GPUs the naive autoscaler would add that the scheduler cannot use.",
                labels=["cluster"],
            ),
        }
        for f in evaluated:
            for column, family in families.items():
                family.add_metric([f.name], float(getattr(f.evaluation, column)))
        yield from families.values()

    def money_gauges(self, evaluated: Iterable[ClusterFigures]) -> Iterator[GaugeMetricFamily]:
        labels = ["cluster", "currency"]
        idle = GaugeMetricFamily(
            "capacityweb_idle_reserved_cost_per_hour",
            "Cost per hour of reserved GPUs' nodes that sit idle.",
            labels=labels,
        )
        stranded = GaugeMetricFamily(
            "capacityweb_stranded_cost_per_hour",
            "Waste: cost per hour of nodes the naive autoscaler adds that no pod can use.",
            labels=labels,
        )
        for f in evaluated:
            assert f.evaluation is not None
            idle.add_metric([f.name, self.currency], f.evaluation.idle_reserved_cost_per_hour)
            stranded.add_metric([f.name, self.currency], f.evaluation.stranded_cost_per_hour)
        yield idle
        yield stranded

    def pending_gauges(self, evaluated: Iterable[ClusterFigures]) -> Iterator[GaugeMetricFamily]:
        by_verdict = GaugeMetricFamily(
            "capacityweb_pending_workloads",
            "Pending workloads by the joint plan's verdict.",
            labels=["cluster", "verdict"],
        )
        by_class = GaugeMetricFamily(
            "capacityweb_pending_workloads_disagreeing",
            "Pending workloads on which the naive autoscaler and the joint plan disagree, "
            "by disagreement class (a workload can be in several).",
            labels=["cluster", "class"],
        )
        for f in evaluated:
            for verdict in VERDICTS:
                by_verdict.add_metric([f.name, verdict], float(f.verdicts[verdict]))
            for name in DISAGREEMENT_CLASSES:
                by_class.add_metric([f.name, name], float(f.classes[name]))
        yield by_verdict
        yield by_class

    def evaluation_gauges(self, evaluated: Iterable[ClusterFigures]) -> Iterator[GaugeMetricFamily]:
        age = GaugeMetricFamily(
            "capacityweb_evaluation_age_seconds",
            "Seconds since the latest evaluation was stored.",
            labels=["cluster"],
        )
        duration = GaugeMetricFamily(
            "capacityweb_evaluation_duration_seconds",
            "Seconds from the evaluated snapshot being stored to its evaluation being stored.",
            labels=["cluster"],
        )
        for f in evaluated:
            evaluation = f.evaluation
            assert evaluation is not None
            age.add_metric([f.name], seconds_between(evaluation.stored_at, self.now))
            duration.add_metric(
                [f.name], seconds_between(evaluation.snapshot.created_at, evaluation.created_at)
            )
        yield age
        yield duration


def metrics_text(now: datetime | None = None) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    moment = now or timezone.now()
    figures = cluster_figures()
    registry.register(ClusterCollector(figures, moment, settings.CURRENCY))
    # move instead of buy (recommender/moves/metrics.py): one more query
    registry.register(MovesCollector(current_reports(figures), settings.CURRENCY))
    # allocated-but-idle GPUs (reservations/utilisation/metrics.py): one more query
    registry.register(
        UtilisationCollector(latest_reports(with_result=False), moment, settings.CURRENCY)
    )
    return generate_latest(registry)


def allowed(request: HttpRequest) -> bool:
    """A matching bearer token, or a client address in the allowed networks."""
    token = settings.METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer "):
        return secrets.compare_digest(header.removeprefix("Bearer ").encode(), token.encode())
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(
        address in ipaddress.ip_network(network, strict=False)
        for network in settings.METRICS_ALLOWED_NETWORKS
    )


def metrics_view(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        response = HttpResponse("metrics: not allowed from here\n", status=403)
        if settings.METRICS_TOKEN:
            response.status_code = 401
            response.headers["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE_LATEST)
