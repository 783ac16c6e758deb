"""Why one pending workload does not fit, node by node: the breakdown behind its diagnosis.

kube-scheduler's "0/N nodes are available: …" message counts each node's first failing
filter; the scheduling framework keeps the per-node map (``framework.Diagnosis.
NodeToStatusMap``, filled by ``findNodesThatPassFilters`` in
``pkg/scheduler/schedule_one.go``), which kube-scheduler-simulator shows per node and
plugin. This rebuilds that map for one workload as the evaluation's scheduler pass saw
it: the workloads before it (``pending_workloads`` order) placed first, then its first
member that fits nowhere, after the members before it were placed greedily
(``placement.blocked_member``, the same member ``diagnosis`` speaks of).

A workload held before Filter (scheduling gates, an unsupported field) gets no node
scan: kube-scheduler never filters it either (PreEnqueue), and its hold says why.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from topology.hardware import WHOLE_GPU_MILLI, Cluster

from .admission import held
from .placement import PlacementOptions, blocked_member, place
from .state import ClusterState
from .workloads import Workload, pending_workloads, pod_gpu_milli

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"  # NVIDIA GPU feature discovery's model label


@dataclass(frozen=True, slots=True)
class NodeReason:
    node: str
    node_group: str | None
    path: tuple[str | None, ...]  # the node's domain at each topology level, outermost first
    gpus: int
    free_gpus: int  # GPUs with nothing allocated, after the workloads placed before
    reason: str  # the first failing filter's reason; "" where the member fits


@dataclass(frozen=True, slots=True)
class Asks:
    """What the workload asks for, as the scheduler reads it."""

    kind: str
    pods: int
    min_member: int  # all-or-nothing size of a gang (1 for a lone pod)
    gpus_by_model: tuple[tuple[str, float], ...]  # model ("any" when not pinned) → GPUs
    required_level: str | None  # topology level all pods must share (name, else label key)
    preferred_level: str | None
    queue: str | None


@dataclass(frozen=True, slots=True)
class Breakdown:
    workload: str
    asks: Asks
    held: str | None  # the hold's message when the workload never reaches Filter
    member: str | None  # the member the reasons are for; None: every member fits somewhere
    placed_before: int  # members placed before it (a gang's greedy pass, undone)
    levels: tuple[str, ...]  # topology level names, outermost first
    nodes: tuple[NodeReason, ...]


def workload_breakdown(
    cluster: Cluster, key: str, *, at: datetime, policy: str = "default"
) -> Breakdown | None:
    """The per-node breakdown of workload ``key``; None when it is not pending."""
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    index = next((i for i, w in enumerate(pending) if w.key == key), None)
    if index is None:
        return None
    workload = pending[index]
    mix = tuple(p for w in pending for p in w.pods)  # as the evaluation's options_for
    options = PlacementOptions(policy=policy, at=at, workload_mix=mix)
    levels = tuple(level.name for level in cluster.topology.levels)
    asks = workload_asks(cluster, workload)
    state = place(cluster, pending[:index], state=state, options=options, diagnose=False).state
    hold = held(workload, cluster.topology, len(state.node_names()))
    if hold is not None:
        return Breakdown(key, asks, hold.diagnosis.summary, None, 0, levels, ())
    pod, reasons, placed = blocked_member(cluster, workload, state, options)
    names = state.node_names()
    if pod is None:
        reasons = [""] * len(names)
    nodes = tuple(
        _node_reason(cluster, state, name, reason)
        for name, reason in zip(names, reasons, strict=True)
    )
    return Breakdown(key, asks, None, pod.key if pod else None, placed, levels, nodes)


def _node_reason(cluster: Cluster, state: ClusterState, name: str, reason: str) -> NodeReason:
    node = state.node(name)
    cells = state.gpu_cells(name)
    return NodeReason(
        node=name,
        node_group=node.node_group,
        path=cluster.topology.path(node.labels),
        gpus=len(cells),
        free_gpus=sum(1 for cell in cells if cell.allocated_milli == 0),
        reason=reason,
    )


def workload_asks(cluster: Cluster, workload: Workload) -> Asks:
    """Pods, GPUs per model (a pod's GPU request models, else its node selector's
    ``nvidia.com/gpu.product``, else "any"), gang size, topology levels and queue."""
    by_model: dict[str, float] = {}
    for pod in workload.pods:
        models = pod.gpu.models if pod.gpu is not None and pod.gpu.models else ()
        pinned = pod.node_selector.get(GPU_PRODUCT_LABEL)
        model = " or ".join(models) if models else (pinned or "any")
        gpus = pod_gpu_milli(pod) / WHOLE_GPU_MILLI
        if gpus:
            by_model[model] = by_model.get(model, 0.0) + gpus
    queues = {p.queue for p in workload.pods if p.queue}
    return Asks(
        kind=workload.kind,
        pods=len(workload.pods),
        min_member=workload.min_member,
        gpus_by_model=tuple(sorted(by_model.items())),
        required_level=_level_name(cluster, workload.required_topology),
        preferred_level=_level_name(cluster, workload.preferred_topology),
        queue=", ".join(sorted(queues)) or None,
    )


def _level_name(cluster: Cluster, key: str | None) -> str | None:
    if key is None:
        return None
    index = cluster.topology.index_of(key)
    return cluster.topology.levels[index].name if index is not None else key
