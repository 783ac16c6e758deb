"""Why one pending workload does not fit, node by node: the breakdown behind its diagnosis.

kube-scheduler's "0/N nodes are available: …" message counts each node's first failing
filter; the scheduling framework keeps the per-node map (``framework.Diagnosis.
NodeToStatusMap``, filled by ``findNodesThatPassFilters`` in
``pkg/scheduler/schedule_one.go``), which kube-scheduler-simulator shows per node and
plugin. This rebuilds that map for one workload as the evaluation's scheduler pass saw
it: one pass over the pending workloads in order (``placement.place_explained``, the
same run as the evaluation's ``place``), keeping for each failure the map its
diagnosis counted: its first member that fits on no node once the members before it
are placed greedily, and every node's first failing filter for that member.

A workload held before Filter (scheduling gates, an unsupported field) gets no node
scan: kube-scheduler never filters it either (PreEnqueue), and its hold says why.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from topology.model.hardware import WHOLE_GPU_MILLI, Cluster

from .admission import held
from .filters import FilterContext, may_use_node, reserved_nodes_at
from .placement import PlacementOptions, place_explained
from .state import ClusterState
from .workloads import Workload, pending_workloads, pod_gpu_milli

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"  # NVIDIA GPU feature discovery's model label


@dataclass(frozen=True, slots=True)
class NodeReason:
    node: str
    node_group: str | None
    path: tuple[str | None, ...]  # the node's domain at each topology level, outermost first
    gpus: int
    # GPUs with nothing allocated, after the workloads placed before, on a node the
    # workload may use (0 on another team's reservation: ``filters.may_use_node``)
    free_gpus: int
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
    placed: bool  # the scheduler places it now (no map: nothing refused it)
    held: str | None  # the hold's message when the workload never reaches Filter
    member: str | None  # the member the reasons are for (None when placed or held)
    levels: tuple[str, ...]  # topology level names, outermost first
    nodes: tuple[NodeReason, ...]  # every node with its reason for ``member``


def workload_breakdown(
    cluster: Cluster, key: str, *, at: datetime, policy: str = "default"
) -> Breakdown | None:
    """The per-node breakdown of workload ``key``; None when it is not pending."""
    return all_breakdowns(cluster, at=at, policy=policy).get(key)


def all_breakdowns(
    cluster: Cluster, *, at: datetime, policy: str = "default"
) -> dict[str, Breakdown]:
    """Every pending workload's breakdown, from one scheduler pass over the cluster: the
    evaluation's own pass (same order, options and seed), keeping each failure's map."""
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    mix = tuple(p for w in pending for p in w.pods)  # as the evaluation's options_for
    options = PlacementOptions(policy=policy, at=at, workload_mix=mix)
    levels = tuple(level.name for level in cluster.topology.levels)
    total = len(state.node_names())
    found = {}
    reserved = FilterContext(reserved_for=reserved_nodes_at(cluster, at))

    def free(namespace: str, name: str) -> int:
        return state.free_gpus(name) if may_use_node(reserved, namespace, name) else 0

    places: dict[str, tuple[str | None, tuple[str | None, ...], int]] = {}
    for workload, (outcome, pod, reasons) in zip(
        pending, place_explained(cluster, pending, state, options), strict=True
    ):
        asks = workload_asks(cluster, workload)
        hold = held(workload, cluster.topology, total)
        if hold is not None:
            found[workload.key] = Breakdown(
                workload.key, asks, False, hold.diagnosis.summary, None, levels, ()
            )
            continue
        nodes: tuple[NodeReason, ...] = ()
        if pod is not None:  # failed: the state is as before the workload
            places = places or _node_places(cluster, state)
            nodes = tuple(
                NodeReason(name, *places[name], free(workload.namespace, name), reason)
                for name, reason in zip(state.node_names(), reasons, strict=True)
            )
        found[workload.key] = Breakdown(
            workload.key, asks, outcome.placed, None, pod.key if pod else None, levels, nodes
        )
    return found


def _node_places(
    cluster: Cluster, state: ClusterState
) -> dict[str, tuple[str | None, tuple[str | None, ...], int]]:
    """Node → (node group, domain path, GPUs): what does not change during the pass."""
    places = {}
    for name in state.node_names():
        node = state.node(name)
        places[name] = (node.node_group, cluster.topology.path(node.labels), node.gpu_count)
    return places


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
