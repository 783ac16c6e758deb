"""Allocated but idle: GPUs held by a pod that barely uses them, from DCGM series.

Idle *reserved* GPUs (``reservations.idle``) are paid for and held by no pod. The
third kind of waste is a GPU a pod holds but does not use: a notebook holding an
H100 at 0 % for days. NVIDIA's dcgm-exporter measures it; this module joins its
series to the hardware model and prices it::

    DcgmSeries (metric, labels, samples)        one Prometheus range-query series
        │  timelines.device_key(labels)         (Hostname, gpu, GPU_I_ID)
        ▼
    Timeline per device                         activity % and memory MiB by time,
        │                                       with the pod holding it at that time
        ├─ mean / p95 over [start, end)
        ├─ idle runs: allocated, activity < threshold, for >= idle_for_seconds
        │     (points before ``start`` only lengthen a run; only [start, end) counts)
        ▼
    UtilisationReport                           per GPU, per pod, per team, totals,
                                                coverage "N of M GPUs have data"

What the exporter writes (NVIDIA/dcgm-exporter, ``internal/pkg/rendermetrics/
render_metrics.go`` gpuMetricsFormat; README "Quickstart on Kubernetes";
``etc/default-counters.csv``): every GPU sample is labelled ``gpu`` (the index),
``UUID``, ``pci_bus_id``, ``device``, ``modelName``, ``GPU_I_PROFILE`` and
``GPU_I_ID`` for a MIG instance only, ``Hostname``, and in Kubernetes mode ``pod``,
``namespace``, ``container`` (empty when no pod holds the GPU: the kubelet's
pod-resources API says who does). Metrics read:

- ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``: ratio 0..1 of time the graphics/compute engine
  is active (a DCP/profiling field, not in the default counters; per MIG instance);
  preferred where present, scaled to %;
- ``DCGM_FI_DEV_GPU_UTIL``: GPU utilisation in % (default counters; whole GPUs only);
- ``DCGM_FI_DEV_FB_USED``: framebuffer memory used, MiB (default counters).

Honest when missing: a GPU or pod without samples has ``None`` figures
("utilisation unknown"), never 0 %; a series naming a node or GPU the snapshot
does not have is listed in ``unmatched``, never dropped silently.

Money: an idle GPU-hour costs what the GPU costs per hour: the price per GPU-hour
of an active reservation covering its node, else its node's (or node group's)
price per node-hour divided by the node's GPUs, else unknown (the GPU-hours are
still counted, the cost says unknown). A MIG instance counts as its share of the
GPU (``topology.model.mig.instance_share``: 3g.40gb is 3/7 of an A100-80GB).

Pure: no Django, no I/O, no clock; ``start``/``end`` and the series are passed in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from reservations.idle import reserved_nodes
from reservations.utilisation.timelines import (
    ENGINE_ACTIVE as ENGINE_ACTIVE,
    FB_USED as FB_USED,
    GPU_UTIL as GPU_UTIL,
    METRICS as METRICS,
    DcgmSeries as DcgmSeries,
    Timeline,
    UtilisationSettings as UtilisationSettings,
    device_timelines,
    idle_seconds,
    mean,
    p95 as p95,
    rounded,
)
from topology.model.hardware import HOSTNAME_LABEL, Cluster, ModelError, Node, Reservation
from topology.model.mig import instance_share


@dataclass(frozen=True, slots=True)
class GpuUtilisation:
    node: str
    gpu: str  # the model's Gpu name, e.g. gpu-0
    instance: str | None  # MIG GPU_I_ID, None for a whole GPU
    profile: str | None  # MIG GPU_I_PROFILE
    share: float  # of its physical GPU: 1.0, or the MIG instance's share
    activity_source: str | None  # the metric the activity figures come from
    activity_mean_percent: float | None
    activity_p95_percent: float | None
    memory_mean_mib: float | None
    memory_p95_mib: float | None
    pods: tuple[str, ...]  # "namespace/name" holding it during the window
    idle_gpu_hours: float
    idle_cost: float | None  # None: the GPU's price is unknown
    idle_now: bool  # its last point is in an idle run
    price_per_gpu_hour: float | None
    # the owner namespaces of the reservation whose price it is; None: the node's price
    # (who may read a reservation's price: capacityweb.visibility)
    price_owners: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class PodUtilisation:
    namespace: str
    name: str
    gpus: float  # GPUs held (MIG instances by share), from the series or the model
    activity_mean_percent: float | None
    activity_p95_percent: float | None
    memory_mean_mib: float | None
    memory_p95_mib: float | None
    idle_gpu_hours: float
    idle_cost: float | None
    in_snapshot: bool  # False: DCGM names a pod the snapshot does not have
    workload: str  # "namespace/name" of its gang, else of the pod itself

    @property
    def team(self) -> str:
        return self.namespace


@dataclass(frozen=True, slots=True)
class TeamUtilisation:
    team: str
    pods: int
    pods_unknown: int  # pods holding GPUs with no utilisation data
    activity_mean_percent: float | None
    idle_gpu_hours: float
    idle_cost: float  # of the idle GPU-hours whose price is known
    unpriced_idle_gpu_hours: float  # idle GPU-hours on GPUs without a price


@dataclass(frozen=True, slots=True)
class UtilisationReport:
    start: datetime
    end: datetime
    settings: UtilisationSettings
    gpus_total: int  # physical GPUs in the model
    gpus_measured: int  # of them, with at least one activity point in [start, end)
    gpus: tuple[GpuUtilisation, ...]
    pods: tuple[PodUtilisation, ...]
    teams: tuple[TeamUtilisation, ...]
    unmatched: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    without_data: tuple[tuple[str, str], ...] = ()  # (node, GPU) of the model with no point

    @property
    def idle_gpu_hours(self) -> float:
        return round(sum(gpu.idle_gpu_hours for gpu in self.gpus), 6)

    @property
    def idle_cost(self) -> float:
        """The cost of the idle GPU-hours whose price is known."""
        return round(sum(gpu.idle_cost or 0.0 for gpu in self.gpus), 6)

    @property
    def unpriced_idle_gpu_hours(self) -> float:
        return round(sum(g.idle_gpu_hours for g in self.gpus if g.idle_cost is None), 6)

    @property
    def idle_gpus_now(self) -> float:
        return round(sum(gpu.share for gpu in self.gpus if gpu.idle_now), 6)

    @property
    def idle_cost_per_hour_now(self) -> float:
        return round(
            sum(g.share * (g.price_per_gpu_hour or 0.0) for g in self.gpus if g.idle_now), 6
        )

    @property
    def coverage(self) -> str:
        return f"{self.gpus_measured} of {self.gpus_total} GPUs have utilisation data"


# --- joining series to the model --------------------------------------------------------


def nodes_by_hostname(cluster: Cluster) -> dict[str, Node]:
    """The node each ``Hostname`` label names: by its hostname label, overridden by node name
    (a node's name wins over another node's label)."""
    nodes = {n.labels[HOSTNAME_LABEL]: n for n in cluster.nodes if HOSTNAME_LABEL in n.labels}
    nodes.update({node.name: node for node in cluster.nodes})
    return nodes


def gpu_name_for(node: Node, index: str) -> str | None:
    """The model's GPU for the exporter's ``gpu`` index: ``gpu-<index>`` (how the parsers
    name GPUs), else the index-th GPU."""
    names = [gpu.name for gpu in node.gpus]
    if f"gpu-{index}" in names:
        return f"gpu-{index}"
    if index.isdigit() and int(index) < len(names):
        return names[int(index)]
    return None


def pricing_reservations(cluster: Cluster, at: datetime) -> dict[str, Reservation]:
    """Per reserved node, the active reservation whose price its GPUs cost (the first by
    name covering the node)."""
    reserved: dict[str, Reservation] = {}
    for reservation in sorted(cluster.reservations, key=lambda r: r.name, reverse=True):
        if reservation.active_at(at):
            for node in reserved_nodes(cluster, reservation):
                reserved[node.name] = reservation
    return reserved


def gpu_prices(cluster: Cluster, at: datetime) -> dict[str, float | None]:
    """What one GPU of each node costs per hour: an active reservation's price (the first by
    name covering the node), else the node's (or its node group's) price per node-hour
    over its GPUs; None when unknown."""
    reserved = {
        node: reservation.price_per_gpu_hour
        for node, reservation in pricing_reservations(cluster, at).items()
    }
    group_prices = {group.name: group.price_per_node_hour for group in cluster.node_groups}
    prices: dict[str, float | None] = {}
    for node in cluster.nodes:
        per_node = node.price_per_node_hour
        if per_node is None and node.node_group is not None:
            per_node = group_prices.get(node.node_group)
        fallback = per_node / len(node.gpus) if per_node is not None and node.gpus else None
        prices[node.name] = reserved.get(node.name, fallback)
    return prices


# --- the report -------------------------------------------------------------------------


@dataclass
class _PodTotals:
    gpus: float = 0.0
    activity: list[float] = field(default_factory=list)
    memory: list[float] = field(default_factory=list)
    idle_gpu_hours: float = 0.0
    idle_cost: float | None = 0.0


def measure(
    cluster: Cluster,
    series: Iterable[DcgmSeries],
    *,
    start: datetime,
    end: datetime,
    step_seconds: float,
    settings: UtilisationSettings = UtilisationSettings(),  # noqa: B008 (frozen)
) -> UtilisationReport:
    """Per GPU, pod and team: utilisation and allocated-but-idle GPU-hours over [start, end).

    ``series`` may start before ``start`` (a look-back of ``idle_for_seconds``): those
    points only decide whether a run is long enough, they are not counted.
    """
    begin, finish = start.timestamp(), end.timestamp()
    gpus: list[GpuUtilisation] = []
    pods: dict[str, _PodTotals] = defaultdict(_PodTotals)
    unmatched: list[str] = []
    measured: set[tuple[str, str]] = set()
    prices = gpu_prices(cluster, end)
    price_owners = {
        node: reservation.owner_namespaces
        for node, reservation in pricing_reservations(cluster, end).items()
    }
    by_hostname = nodes_by_hostname(cluster)
    for key, timeline in sorted(device_timelines(series).items()):
        hostname, index, instance = key
        node = by_hostname.get(hostname)
        gpu_name = gpu_name_for(node, index) if node is not None else None
        if node is None or gpu_name is None:
            unmatched.append(
                f"Hostname={hostname} gpu={index}"
                + (f" GPU_I_ID={instance}" if instance else "")
                + (": no such node in the snapshot" if node is None else ": no such GPU")
            )
            continue
        gpu, idle_by_pod = _gpu_figures(
            node, gpu_name, instance, timeline, begin, finish, step_seconds, settings, prices
        )
        if node.name in price_owners:
            gpu = replace(gpu, price_owners=tuple(sorted(price_owners[node.name])))
        if gpu.activity_mean_percent is not None:
            measured.add((node.name, gpu_name))
        gpus.append(gpu)
        _add_to_pods(pods, gpu, idle_by_pod, timeline, begin, finish)
    pod_rows = _pod_rows(cluster, pods)
    return UtilisationReport(
        start=start,
        end=end,
        settings=settings,
        gpus_total=sum(len(node.gpus) for node in cluster.nodes),
        gpus_measured=len(measured),
        gpus=tuple(gpus),
        pods=pod_rows,
        teams=_team_rows(pod_rows, pods),
        unmatched=tuple(unmatched),
        without_data=tuple(
            (node.name, gpu.name)
            for node in cluster.nodes
            for gpu in node.gpus
            if (node.name, gpu.name) not in measured
        ),
    )


def _gpu_figures(
    node: Node,
    gpu_name: str,
    instance: str,
    timeline: Timeline,
    begin: float,
    finish: float,
    step: float,
    settings: UtilisationSettings,
    prices: Mapping[str, float | None],
) -> tuple[GpuUtilisation, dict[str, float]]:
    """One GPU's figures, and its idle GPU-hours per pod holding it."""
    activity = [v for t, v in timeline.activity.items() if begin <= t < finish]
    memory = [v for t, v in timeline.memory.items() if begin <= t < finish]
    model = next((g.model for g in node.gpus if g.name == gpu_name), None)
    share = instance_share(model, timeline.profile) if instance and timeline.profile else 1.0
    seconds, idle_now = idle_seconds(
        timeline, start=begin, end=finish, step=step, settings=settings
    )
    idle_by_pod = {pod: value / 3600.0 * share for pod, value in seconds.items()}
    hours = sum(idle_by_pod.values())
    price = prices.get(node.name)
    held = {p for t, p in timeline.activity_pod.items() if p and begin <= t < finish}
    held |= {p for t, p in timeline.memory_pod.items() if p and begin <= t < finish}
    gpu = GpuUtilisation(
        node=node.name,
        gpu=gpu_name,
        instance=instance or None,
        profile=timeline.profile if instance else None,
        share=round(share, 6),
        activity_source=timeline.source if activity else None,
        activity_mean_percent=rounded(mean(activity)),
        activity_p95_percent=rounded(p95(activity)),
        memory_mean_mib=rounded(mean(memory)),
        memory_p95_mib=rounded(p95(memory)),
        pods=tuple(sorted(held)),
        idle_gpu_hours=round(hours, 6),
        idle_cost=None if price is None else round(hours * price, 6),
        idle_now=idle_now,
        price_per_gpu_hour=price,
    )
    return gpu, idle_by_pod


def _add_to_pods(
    pods: dict[str, _PodTotals],
    gpu: GpuUtilisation,
    idle_by_pod: Mapping[str, float],
    timeline: Timeline,
    begin: float,
    end: float,
) -> None:
    """Each pod holding this GPU in the window gets its share, its points and its idle runs."""
    price = gpu.price_per_gpu_hour
    for pod in gpu.pods:
        totals = pods[pod]
        totals.gpus += gpu.share
        totals.activity += [
            v
            for t, v in timeline.activity.items()
            if begin <= t < end and timeline.activity_pod[t] == pod
        ]
        totals.memory += [
            v
            for t, v in timeline.memory.items()
            if begin <= t < end and timeline.memory_pod[t] == pod
        ]
        hours = idle_by_pod.get(pod, 0.0)
        totals.idle_gpu_hours += hours
        if totals.idle_cost is not None and hours > 0:
            totals.idle_cost = None if price is None else totals.idle_cost + hours * price


def _model_gpu_pods(cluster: Cluster) -> dict[str, tuple[float, str | None]]:
    """Pods of the snapshot bound to a node and holding GPUs: ``namespace/name`` → (GPUs,
    gang)."""
    held: dict[str, tuple[float, str | None]] = {}
    for pod in cluster.pods:
        if pod.node_name is None:
            continue
        gpus = pod.gpu.count * pod.gpu.milli_per_gpu / 1000 if pod.gpu is not None else 0.0
        if gpus > 0 or pod.claims:
            held[f"{pod.namespace}/{pod.name}"] = (gpus, pod.gang)
    return held


def _pod_rows(cluster: Cluster, pods: dict[str, _PodTotals]) -> tuple[PodUtilisation, ...]:
    in_model = _model_gpu_pods(cluster)
    rows = []
    for name in sorted(set(pods) | set(in_model)):
        namespace, _, pod = name.partition("/")
        totals = pods.get(name, _PodTotals())
        gpus, gang = in_model.get(name, (0.0, None))
        rows.append(
            PodUtilisation(
                namespace=namespace,
                name=pod,
                gpus=round(totals.gpus or gpus, 6),
                activity_mean_percent=rounded(mean(totals.activity)),
                activity_p95_percent=rounded(p95(totals.activity)),
                memory_mean_mib=rounded(mean(totals.memory)),
                memory_p95_mib=rounded(p95(totals.memory)),
                idle_gpu_hours=round(totals.idle_gpu_hours, 6),
                idle_cost=None if totals.idle_cost is None else round(totals.idle_cost, 6),
                in_snapshot=name in in_model,
                workload=gang or name,
            )
        )
    return tuple(rows)


def _team_rows(
    rows: Sequence[PodUtilisation], totals: Mapping[str, _PodTotals]
) -> tuple[TeamUtilisation, ...]:
    by_team: dict[str, list[PodUtilisation]] = defaultdict(list)
    for row in rows:
        by_team[row.team].append(row)
    teams = []
    for team, members in sorted(by_team.items()):
        activity = [
            v for m in members for v in totals.get(f"{m.namespace}/{m.name}", _PodTotals()).activity
        ]
        teams.append(
            TeamUtilisation(
                team=team,
                pods=len(members),
                pods_unknown=sum(1 for m in members if m.activity_mean_percent is None),
                activity_mean_percent=rounded(mean(activity)),
                idle_gpu_hours=round(sum(m.idle_gpu_hours for m in members), 6),
                idle_cost=round(sum(m.idle_cost or 0.0 for m in members), 6),
                unpriced_idle_gpu_hours=round(
                    sum(m.idle_gpu_hours for m in members if m.idle_cost is None), 6
                ),
            )
        )
    return tuple(teams)


# --- JSON -------------------------------------------------------------------------------


def report_json(report: UtilisationReport) -> dict[str, Any]:
    """The stored and served form (snake_case, as the other reports); ``None`` = unknown."""
    return {
        "start": report.start.isoformat(),
        "end": report.end.isoformat(),
        "idle_below_percent": report.settings.idle_below_percent,
        "idle_for_seconds": report.settings.idle_for_seconds,
        "gpus_total": report.gpus_total,
        "gpus_measured": report.gpus_measured,
        "coverage": report.coverage,
        "idle_gpu_hours": report.idle_gpu_hours,
        "idle_cost": report.idle_cost,
        "unpriced_idle_gpu_hours": report.unpriced_idle_gpu_hours,
        "idle_gpus_now": report.idle_gpus_now,
        "idle_cost_per_hour_now": report.idle_cost_per_hour_now,
        "gpus": [_as_dict(gpu) for gpu in report.gpus],
        "pods": [_pod_dict(pod) for pod in report.pods],
        "teams": [_as_dict(team) for team in report.teams],
        "unmatched": list(report.unmatched),
        "without_data": [list(pair) for pair in report.without_data],
        "notes": list(report.notes),
    }


def _pod_dict(pod: PodUtilisation) -> dict[str, Any]:
    row = _as_dict(pod)
    return {"namespace": row.pop("namespace"), "pod": row.pop("name"), "team": pod.team, **row}


def _as_dict(row: Any) -> dict[str, Any]:
    return {
        name: list(value) if isinstance(value, tuple) else value
        for name in row.__slots__
        for value in (getattr(row, name),)
    }


# --- the Prometheus HTTP API's matrix ---------------------------------------------------


def series_from_matrix(payload: Mapping[str, Any], *, source: str) -> tuple[DcgmSeries, ...]:
    """The series of a ``/api/v1/query_range`` answer (``resultType`` matrix).

    Each result is ``{"metric": {"__name__": ..., labels}, "values": [[t, "v"], ...]}``
    (Prometheus docs, "Range queries"); a ``NaN`` point is no point. Anything else is a
    ModelError naming ``source`` (the query) and the field.
    """
    if payload.get("status") != "success":
        raise ModelError(source, "", "status", f"{payload.get('error') or 'not success'}")
    data = payload.get("data") or {}
    if data.get("resultType") != "matrix":
        raise ModelError(
            source, "", "data.resultType", f"expected matrix, got {data.get('resultType')!r}"
        )
    result = []
    for position, item in enumerate(data.get("result") or []):
        labels = dict(item.get("metric") or {})
        try:
            samples = tuple(
                (float(time), float(value))
                for time, value in item.get("values") or []
                if value not in ("NaN", "+Inf", "-Inf")
            )
        except (TypeError, ValueError) as error:
            raise ModelError(source, "", f"data.result[{position}].values", str(error)) from error
        result.append(DcgmSeries(labels.pop("__name__", ""), labels, samples))
    return tuple(result)
