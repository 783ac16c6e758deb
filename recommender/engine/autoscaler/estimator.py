"""cluster-autoscaler's binpacking estimator: how many template nodes for these pods?

``cluster-autoscaler/estimator/binpacking_estimator.go`` ``Estimate``:
first-fit decreasing. Pods are ordered by ``decreasing_pod_orderer.go``
``calculatePodScore`` (cpu / template allocatable cpu + memory / template
allocatable memory, highest first; upstream's ``sort.Slice`` is not stable,
ours keeps the given order among equal scores). Each pod goes to a node the
estimate already added if the scheduler's filters accept it there
(``tryToScheduleOnExistingNodes``); otherwise a fresh template node is added
(``tryToScheduleOnNewNodes``) unless the limiter refuses (node group max size,
cluster-wide limits: ``threshold_based_limiter.go``) or the last added node
is still empty (a pod that does not fit an empty template node never will).
The count is the nodes that got a pod.

The filters are the scheduler simulation's own (``placement.Placer`` on a
state holding only the estimate's nodes): labels, taints, affinity, resources,
GPU model and memory, devices and DRA claims as the scheduler checks them.
Inter-pod terms (affinity, topology spread) are judged against the nodes
around by the caller (``admit``), as upstream runs them on the whole snapshot.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from recommender.engine.autoscaler.plan import options_for, without_topology
from recommender.engine.scheduler.demand import advertised_gpus
from recommender.engine.scheduler.placement import PlacementOptions, Placer
from recommender.engine.scheduler.state import ClusterState
from topology.model.hardware import (
    HOSTNAME_LABEL,
    NO_POD_TERMS,
    Cluster,
    LabelRequirement,
    Node,
    NodeSelectorTerm,
    Pod,
    Resources,
)
from topology.model.mig import MIG_RESOURCE_PREFIX


@dataclass(slots=True)
class Estimate:
    """The estimate's nodes in order, each with the pods it took."""

    nodes: list[tuple[Node, list[Pod]]] = field(default_factory=list)

    @property
    def node_count(self) -> int:
        return sum(1 for _, pods in self.nodes if pods)

    @property
    def pods(self) -> tuple[Pod, ...]:
        return tuple(p for _, pods in self.nodes for p in pods)


def pod_score(pod: Pod, template: Node) -> float:
    """``calculatePodScore``: cpu and memory requests as fractions of the template."""
    score = 0.0
    if template.allocatable.cpu_milli > 0:
        score += pod.requests.cpu_milli / template.allocatable.cpu_milli
    if template.allocatable.memory_bytes > 0:
        score += pod.requests.memory_bytes / template.allocatable.memory_bytes
    return score


def decreasing(pods: Sequence[Pod], template: Node) -> list[Pod]:
    return sorted(pods, key=lambda p: -pod_score(p, template))


def estimate(
    cluster: Cluster,
    template: Node,
    pods: Sequence[Pod],
    *,
    limit: int,
    policy: str,
    at: datetime,
    admit: Callable[[Pod, Node, list[Pod]], bool] | None = None,
    inter_pod: Callable[[Pod], bool] = lambda pod: True,
    mix: tuple[Pod, ...] = (),
    partitionable_devices: bool = True,
) -> Estimate:
    """``Estimate``: at most ``limit`` nodes like ``template`` for ``pods`` (first-fit decreasing).

    ``admit(pod, node, pods on it)``: the inter-pod check of the caller (None: none),
    asked only for the pods ``inter_pod`` names (those the pods around may refuse).
    ``mix``: the pods FGD scoring expects (the evaluation's; lets one placer serve every
    pod); which estimate node a pod takes does not change the count for identical nodes.
    ``partitionable_devices``: the DRAPartitionableDevices gate of the autoscaler's filters.
    """
    no_inter_pod = admit is None or not any(inter_pod(p) for p in pods)
    if no_inter_pod and counted(template) and all(plain(p) for p in pods):
        return _counted_estimate(template, decreasing(pods, template), limit)
    options = options_for(
        policy, at, mix=mix or tuple(pods), partitionable_devices=partitionable_devices
    )
    run = _Binpacking(cluster, options, admit, inter_pod)
    for pod in decreasing(pods, template):
        if run.nodes and run.try_place(pod):
            continue
        if run.nodes and not run.nodes[-1][1]:
            continue  # the last node is empty and still refused it: so would a new one
        if len(run.nodes) >= limit:
            continue  # the limiter refuses another node
        run.add_node(template)
        run.try_place(pod)
    return Estimate([(n, p) for n, p in run.nodes if p])


def counted(template: Node) -> bool:
    """A template on which NodeResourcesFit by counts is the whole resource check:
    whole GPUs of one model and memory, no counted units, no MIG, no counter sets."""
    return (
        advertised_gpus(template) == template.gpu_count
        and len({(g.model, g.memory_bytes) for g in template.gpus}) <= 1
        and not template.counter_sets
        and not any(d.unit_gpu_milli is not None for d in template.devices)
        and not any(k.startswith(MIG_RESOURCE_PREFIX) for k in template.allocatable.extended)
    )


def plain(pod: Pod) -> bool:
    """A pod whose fit on a node the template accepts is counts alone: no claims, no
    GPU share, no MIG resource, no inter-pod terms."""
    return (
        not pod.claims
        and (pod.gpu is None or not pod.gpu.is_share)
        and not pod.pod_terms
        and not pod.host_ports
        and not any(k.startswith(MIG_RESOURCE_PREFIX) for k in pod.requests.extended)
    )


def _counts(resources: Resources, gpus: int) -> tuple[int, ...]:
    return (resources.cpu_milli, resources.memory_bytes, resources.pods, gpus)


def _counted_estimate(template: Node, pods: Sequence[Pod], limit: int) -> Estimate:
    """``Estimate`` for plain pods on a counted template (the same nodes and pods as the
    scheduler's filters give them, which for these pods and nodes only add up counts;
    ``test_cluster_autoscaler`` compares both): first fit over the nodes in the order
    they were added, each pod shape resuming where it last fitted (nodes only fill up)."""
    keys = sorted(template.allocatable.extended)
    capacity = (
        *_counts(template.allocatable, advertised_gpus(template)),
        *(template.allocatable.extended[k] for k in keys),
    )
    free: list[list[int]] = []
    result = Estimate()
    resume: dict[tuple[int, ...], int] = {}
    for pod in pods:
        if any(k not in template.allocatable.extended for k in pod.requests.extended):
            continue  # the template lacks a resource the pod asks for: no node helps
        gpus = pod.gpu.count if pod.gpu is not None else 0
        need = (
            *_counts(pod.requests, gpus),
            *(pod.requests.extended.get(k, 0) for k in keys),
        )
        need = (*need[:2], max(1, need[2]), *need[3:])
        start = resume.get(need, 0)
        placed = False
        for index in range(start, len(free)):
            if all(f >= n for f, n in zip(free[index], need, strict=True)):
                free[index] = [f - n for f, n in zip(free[index], need, strict=True)]
                result.nodes[index][1].append(pod)
                resume[need] = index
                placed = True
                break
        if placed:
            continue
        resume[need] = len(free)
        if result.nodes and not result.nodes[-1][1]:
            continue
        if len(free) >= limit or not all(c >= n for c, n in zip(capacity, need, strict=True)):
            continue
        free.append([c - n for c, n in zip(capacity, need, strict=True)])
        name = f"{template.name}-e-{len(result.nodes)}"
        node = replace(template, name=name, labels={**template.labels, HOSTNAME_LABEL: name})
        result.nodes.append((node, [pod]))
        resume[need] = len(free) - 1
    return result


class _Binpacking:
    """The estimate's own state: only its template nodes, each with the pods it took."""

    def __init__(
        self,
        cluster: Cluster,
        options: PlacementOptions,
        admit: Callable[[Pod, Node, list[Pod]], bool] | None,
        inter_pod: Callable[[Pod], bool],
    ) -> None:
        self.alone = replace(cluster, nodes=(), pods=(), gangs=(), reservations=())
        self.options = options
        self.state = ClusterState.from_cluster(self.alone)
        self.placer = Placer(self.alone, self.state, self.options, diagnose=False)
        self.admit = admit
        self.inter_pod = inter_pod
        self.nodes: list[tuple[Node, list[Pod]]] = []
        self.by_name: dict[str, list[Pod]] = {}

    def add_node(self, template: Node) -> None:
        name = f"{template.name}-e-{len(self.nodes)}"
        node = replace(template, name=name, labels={**template.labels, HOSTNAME_LABEL: name})
        self.state.add_node(node)
        # a placer made before a node was added does not see it: a new one
        self.placer = Placer(self.alone, self.state, self.options, diagnose=False)
        self.nodes.append((node, []))
        self.by_name[name] = self.nodes[-1][1]

    def try_place(self, pod: Pod) -> bool:
        """Place the pod on one of the estimate's nodes (False: none takes it). Nodes the
        caller's inter-pod check refuses are kept out by a hostname NotIn term."""
        bare = replace(pod, pod_terms=NO_POD_TERMS)
        if self.admit is not None and self.inter_pod(pod):
            refused = tuple(n.name for n, pods in self.nodes if not self.admit(pod, n, pods))
            if len(refused) == len(self.nodes):
                return False
            if refused:
                bare = replace(bare, affinity=_excluding(bare.affinity, refused))
        outcome = self.placer.place_one(without_topology(bare))
        if outcome.placed:
            self.by_name[outcome.bindings[0].node].append(pod)
        return outcome.placed


def _excluding(
    terms: tuple[NodeSelectorTerm, ...], names: tuple[str, ...]
) -> tuple[NodeSelectorTerm, ...]:
    """Node affinity ``terms`` with ``hostname NotIn names`` ANDed into each."""
    requirement = LabelRequirement(HOSTNAME_LABEL, "NotIn", names)
    if not terms:
        return (NodeSelectorTerm((requirement,)),)
    return tuple(NodeSelectorTerm((*t.requirements, requirement)) for t in terms)
