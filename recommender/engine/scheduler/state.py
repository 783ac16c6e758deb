"""Mutable allocation state over the frozen model: what is still free where.

The model (``topology.model.hardware``) says what a node *has*; ``ClusterState``
says what is still *free* after the bound pods and every simulated binding.
Placement explores alternatives (gang domains, scale-up options) on copies, so
``copy()`` must be cheap: it shares every per-node record and clones one only
when a copy first writes to it (copy-on-write per node).

::

    ClusterState ── nodes: name → NodeInfo   (static, shared by all copies)
                 ├─ allocs: name → NodeAlloc (mutable, cloned on first write)
                 ├─ derived: caches computed from the model alone (placement's
                 │  filter context and memo), shared by all copies and subsets
                 ├─ by_nodes: caches computed from the node list (domains),
                 │  shared by copies until one adds a node (it extends its own)
                 └─ watchers: what must hear of every change to this state
                    (placement's score indexes), cloned with each copy
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Protocol, TypeVar

from topology.kube.dra.slices import mig_resource_replicas
from topology.model.hardware import WHOLE_GPU_MILLI, Cluster, Gpu, Node, Pod
from topology.model.mig import MIG_RESOURCE_PREFIX, instance_share

from .allocate import bound_allocation
from .claims_held import held_by_claims, unallocated_claim_takes
from .records import (
    Allocation,
    DeviceTake,
    GpuCell,
    NodeAlloc,
    NodeInfo,
    device_gpu_milli,
)

BOUND_ALLOCATIONS = "bound allocations"  # ``derived`` key: pod key → what it takes


class StateWatcher(Protocol):
    """Something kept in step with one state: told of every change, cloned with it."""

    def changed(self, name: str, released: bool) -> None: ...

    def added(self, name: str) -> None: ...

    def clone(self) -> StateWatcher: ...


class NodeListCache(Protocol):
    """Something derived from a state's node list; a state that adds a node keeps
    ``extended`` (a new object: the old one stays with the states sharing it)."""

    def extended(self, state: ClusterState, name: str) -> NodeListCache: ...


Watcher = TypeVar("Watcher", bound=StateWatcher)


class ClusterState:
    """Free resources of every node; copy-on-write per node."""

    def __init__(self, infos: dict[str, NodeInfo], allocs: dict[str, NodeAlloc]) -> None:
        self._infos = infos
        self._allocs = allocs
        self._owned: set[str] = set(allocs)
        self._order: list[str] = list(infos)
        self._names: tuple[str, ...] | None = None
        self.derived: dict[object, object] = {}
        # caches computed from the node list alone: shared by copies until a node is added
        self.by_nodes: dict[object, NodeListCache] = {}
        # watchers of this state alone (copies get clones): placement's score indexes
        self.watchers: dict[object, StateWatcher] = {}
        # ResourceClaims allocated by a pod placed on this state: claim key -> (node,
        # pod key); a later pod naming one finds it allocated there (``claims_taken``)
        self.claims: dict[str, tuple[str, str]] = {}

    @classmethod
    def from_cluster(cls, cluster: Cluster) -> ClusterState:
        """Free = allocatable minus what bound pods use (their devices taken too) and
        what allocated DRA claims hold (``claims_held``)."""
        infos = {n.name: NodeInfo(n) for n in cluster.nodes}
        state = cls(infos, {name: NodeAlloc(info) for name, info in infos.items()})
        for node_name, holder, held in held_by_claims(infos, cluster.allocated_claims):
            state.apply(node_name, holder, held)
        classes = {c.name: c for c in cluster.device_classes}
        counted: set[str] = set()  # claims taken once, however many pods share them
        taken: dict[str, Allocation] = {}
        for pod in cluster.bound_pods():
            info = infos.get(pod.node_name or "")
            if info is not None:
                alloc = state.alloc(info.node.name)
                allocation = bound_allocation(info, alloc, pod)
                claims = unallocated_claim_takes(info, alloc, pod, classes, counted)
                if claims:
                    allocation = replace(allocation, devices=(*allocation.devices, *claims))
                state.apply(info.node.name, pod.key, allocation, pod)
                taken[pod.key] = allocation
        state.derived[BOUND_ALLOCATIONS] = taken
        return state

    def bound_allocation(self, pod_key: str) -> Allocation | None:
        """What a pod bound in the snapshot takes (to give it back when it is preempted)."""
        taken = self.derived.get(BOUND_ALLOCATIONS)
        return taken.get(pod_key) if isinstance(taken, dict) else None

    def watcher(self, kind: type[Watcher]) -> Watcher:
        """The watcher of this kind kept on this state, made (empty) on first use."""
        found = self.watchers.get(kind)
        if not isinstance(found, kind):
            found = self.watchers[kind] = kind()
        return found

    def copy(self) -> ClusterState:
        other = ClusterState.__new__(ClusterState)
        other._infos = self._infos
        other._allocs = dict(self._allocs)
        other._owned = set()
        other._order = self._order
        other._names = self._names
        other.derived = self.derived
        other.by_nodes = self.by_nodes
        other.watchers = {key: watcher.clone() for key, watcher in self.watchers.items()}
        other.claims = dict(self.claims)
        self._owned = set()  # both now share every record: the first writer clones
        return other

    def subset(self, names: Iterable[str]) -> ClusterState:
        """A copy holding only ``names`` (in that order), sharing records and caches."""
        names = list(names)
        other = ClusterState({n: self._infos[n] for n in names}, {})
        other._allocs = {n: self._allocs[n] for n in names}
        other.derived = self.derived
        other.claims = {k: v for k, v in self.claims.items() if v[0] in other._infos}
        self._owned = set()
        return other

    def add_node(self, node: Node) -> None:
        """A simulated new node (scale-up); replaces nothing already present."""
        if node.name in self._infos:
            raise ValueError(f"node {node.name} already exists")
        self._infos = {**self._infos, node.name: NodeInfo(node)}
        self._order = [*self._order, node.name]
        self._names = None
        self._allocs[node.name] = NodeAlloc(self._infos[node.name])
        self._owned.add(node.name)
        self.by_nodes = {k: v.extended(self, node.name) for k, v in self.by_nodes.items()}
        for watcher in self.watchers.values():
            watcher.added(node.name)

    def add_nodes(self, nodes: Iterable[Node]) -> None:
        """``add_node`` for many nodes at once: the node table is copied once and the
        node-list caches are dropped (rebuilt on first use) instead of grown per node."""
        nodes = list(nodes)
        infos = dict(self._infos)
        for node in nodes:
            if node.name in infos:
                raise ValueError(f"node {node.name} already exists")
            infos[node.name] = NodeInfo(node)
        self._infos = infos
        self._order = [*self._order, *(n.name for n in nodes)]
        self._names = None
        for node in nodes:
            self._allocs[node.name] = NodeAlloc(infos[node.name])
            self._owned.add(node.name)
        self.by_nodes = {}
        for node in nodes:
            for watcher in self.watchers.values():
                watcher.added(node.name)

    def node_names(self) -> tuple[str, ...]:
        """The nodes in order; the same tuple object until a node is added."""
        if self._names is None:
            self._names = tuple(self._order)
        return self._names

    def node(self, name: str) -> Node:
        return self._infos[name].node

    def info(self, name: str) -> NodeInfo:
        return self._infos[name]

    def alloc(self, name: str) -> NodeAlloc:
        """Read-only view of a node's free resources (do not mutate)."""
        return self._allocs[name]

    def _writable(self, name: str) -> NodeAlloc:
        if name not in self._owned:
            self._allocs[name] = self._allocs[name].clone()
            self._owned.add(name)
        return self._allocs[name]

    def apply(
        self, node_name: str, pod_key: str, allocation: Allocation, pod: Pod | None = None
    ) -> None:
        """Take ``allocation`` on the node for ``pod_key`` (``pod``: kept on the node for
        the rules that read the pods around it)."""
        self._change(node_name, pod_key, allocation, sign=1, pod=pod)

    def release(
        self, node_name: str, pod_key: str, allocation: Allocation, pod: Pod | None = None
    ) -> None:
        """Give back exactly what ``apply`` took (used to undo a failed gang)."""
        self._change(node_name, pod_key, allocation, sign=-1, pod=pod)

    def _change(
        self, node_name: str, pod_key: str, allocation: Allocation, sign: int, pod: Pod | None
    ) -> None:
        alloc = self._writable(node_name)
        alloc.changed()
        if pod is not None:
            alloc.placed = (
                (*alloc.placed, pod)
                if sign > 0
                else tuple(p for p in alloc.placed if p.key != pod_key)
            )
            if pod.claims:
                self._claims_changed(node_name, pod, sign)
        for watcher in self.watchers.values():
            watcher.changed(node_name, sign < 0)
        info = self._infos[node_name]
        alloc.cpu_free_milli -= sign * allocation.cpu_milli
        alloc.memory_free_bytes -= sign * allocation.memory_bytes
        alloc.pods_free -= sign * allocation.pods
        for name, amount in allocation.extended.items():
            alloc.extended_free[name] = alloc.extended_free.get(name, 0) - sign * amount
            if name.startswith(MIG_RESOURCE_PREFIX) and info.mig_mode_gpus:
                _change_mig_instances(alloc, info, pod_key, name, amount, sign)
        for take in allocation.devices:
            _change_device(alloc, info, pod_key, take, sign)

    def _claims_changed(self, node_name: str, pod: Pod, sign: int) -> None:
        """The pod's claims not allocated before are allocated now, on its node (until
        it is released): the allocator wrote ``status.allocation`` when it bound."""
        for claim in pod.claims:
            if claim.allocation is not None or not claim.key:
                continue
            if sign > 0:
                self.claims.setdefault(claim.key, (node_name, pod.key))
            elif self.claims.get(claim.key) == (node_name, pod.key):
                del self.claims[claim.key]

    def gpu_cells(self, node_name: str) -> list[GpuCell]:
        info = self._infos[node_name]
        alloc = self._allocs[node_name]
        return [
            GpuCell(
                gpu=g.name,
                model=g.model,
                allocated_milli=min(WHOLE_GPU_MILLI, alloc.gpu_milli.get(g.name, 0)),
                pods=alloc.gpu_pods.get(g.name, ()),
                profiles=alloc.gpu_profiles.get(g.name, ()),
            )
            for g in info.node.gpus
        ]

    def free_gpus(self, node_name: str) -> int:
        """Whole GPUs nothing is using (no share, no partition, no pod)."""
        alloc = self._allocs[node_name]
        return sum(1 for used in alloc.gpu_milli.values() if used == 0)

    def allocated_gpu_milli(self, node_name: str) -> int:
        alloc = self._allocs[node_name]
        return sum(min(WHOLE_GPU_MILLI, used) for used in alloc.gpu_milli.values())

    def total_allocated_gpu_milli(self, names: Iterable[str] | None = None) -> int:
        return sum(self.allocated_gpu_milli(n) for n in (names or self._order))


def _change_device(
    alloc: NodeAlloc, info: NodeInfo, pod_key: str, take: DeviceTake, sign: int
) -> None:
    device = info.devices[take.device]
    if take.exclusive:
        if sign > 0:
            alloc.exclusive.add(device.name)
        else:
            alloc.exclusive.discard(device.name)
        for use in device.consumes:
            counters = alloc.counters_free.setdefault(use.counter_set, {})
            for name, amount in use.counters.items():
                counters[name] = counters.get(name, 0) - sign * amount
    else:
        free = alloc.device_free.setdefault(device.name, {})
        for name, amount in take.capacity.items():
            free[name] = free.get(name, device.capacity.get(name, 0)) - sign * amount
    if device.gpu is not None:
        milli = device_gpu_milli(device, take, info)
        partition = device.profile is not None and bool(device.consumes)
        _change_gpu(alloc, device.gpu, pod_key, milli, sign, device.profile, partition)


def _change_gpu(
    alloc: NodeAlloc,
    gpu: str,
    pod_key: str,
    milli: int,
    sign: int,
    profile: str | None,
    partition: bool,
) -> None:
    """Count (sign 1) or give back (-1) ``milli`` of a physical GPU for a pod, with the
    partition profile it holds there, if any."""
    alloc.gpu_milli[gpu] = alloc.gpu_milli.get(gpu, 0) + sign * milli
    if not partition:
        alloc.gpu_nonpartition_milli[gpu] = alloc.gpu_nonpartition_milli.get(gpu, 0) + sign * milli
    pods = alloc.gpu_pods.get(gpu, ())
    alloc.gpu_pods[gpu] = (*pods, pod_key) if sign > 0 else _without(pods, pod_key)
    if profile is not None:
        profiles = alloc.gpu_profiles.get(gpu, ())
        alloc.gpu_profiles[gpu] = (*profiles, profile) if sign > 0 else _without(profiles, profile)


def _change_mig_instances(
    alloc: NodeAlloc, info: NodeInfo, pod_key: str, resource: str, amount: int, sign: int
) -> None:
    """Count MIG instances taken as extended resources on GPUs in MIG mode.

    The device plugin does not say which GPU holds an instance; each is counted on
    the first MIG-mode GPU (node order) with room for it, else the least used one,
    so the heatmap, stranded GPUs and free GPU figures see it. The GPUs chosen are
    kept per pod, and given back exactly on release.
    """
    profile = resource.removeprefix(MIG_RESOURCE_PREFIX)
    replicas = mig_resource_replicas(info.node.labels, resource)  # time-sliced instances
    key = (pod_key, resource)
    if sign > 0:
        chosen: list[str] = []
        for _ in range(amount):  # one at a time: each instance counts before the next picks
            gpu = _gpu_for_instance(alloc, info, profile, replicas)
            milli = _instance_milli(gpu, profile, replicas)
            _change_gpu(alloc, gpu.name, pod_key, milli, 1, profile, partition=True)
            chosen.append(gpu.name)
        alloc.mig_instances[key] = tuple(chosen)
        return
    gpu_of = {g.name: g for g in info.mig_mode_gpus}
    for name in alloc.mig_instances.pop(key, ()):
        milli = _instance_milli(gpu_of[name], profile, replicas)
        _change_gpu(alloc, name, pod_key, milli, -1, profile, partition=True)


def _instance_milli(gpu: Gpu, profile: str, replicas: int = 1) -> int:
    return round(instance_share(gpu.model, profile) * WHOLE_GPU_MILLI) // replicas


def _gpu_for_instance(alloc: NodeAlloc, info: NodeInfo, profile: str, replicas: int) -> Gpu:
    gpus = info.mig_mode_gpus
    for gpu in gpus:
        taken = alloc.gpu_milli.get(gpu.name, 0)
        if taken + _instance_milli(gpu, profile, replicas) <= WHOLE_GPU_MILLI:
            return gpu
    return min(gpus, key=lambda g: alloc.gpu_milli.get(g.name, 0))


def _without(items: tuple[str, ...], item: str) -> tuple[str, ...]:
    if item not in items:
        return items
    index = items.index(item)
    return items[:index] + items[index + 1 :]
