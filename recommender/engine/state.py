"""Mutable allocation state over the frozen model: what is still free where.

The model (``topology.hardware``) says what a node *has*; ``ClusterState``
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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from topology.dra import mig_resource_replicas
from topology.hardware import WHOLE_GPU_MILLI, Cluster, Device, Gpu, Node, Pod, Topology
from topology.mig import MIG_RESOURCE_PREFIX, instance_share

GPU_MILLI = "gpu_milli"


@dataclass(frozen=True, slots=True)
class GpuCell:
    """One physical GPU as the heatmap draws it."""

    gpu: str
    model: str | None
    allocated_milli: int
    pods: tuple[str, ...]
    profiles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeviceTake:
    """Part of one device a binding uses: capacity drawn, or the whole device."""

    device: str
    capacity: Mapping[str, int]
    exclusive: bool


@dataclass(frozen=True, slots=True)
class Allocation:
    """Everything one pod takes from one node; applied and released as a unit."""

    cpu_milli: int = 0
    memory_bytes: int = 0
    pods: int = 1
    extended: Mapping[str, int] = field(default_factory=dict)
    devices: tuple[DeviceTake, ...] = ()

    @property
    def device_names(self) -> tuple[str, ...]:
        return tuple(t.device for t in self.devices)


class NodeInfo:
    """Static per-node facts computed once: devices by name, GPU devices in order."""

    __slots__ = (
        "node",
        "devices",
        "gpu_devices",
        "gpus",
        "counter_capacity",
        "counter_kind_totals",
        "models",
        "gpu_models",
        "mig_mode_gpus",
        "memo_static",
        "_path",
    )

    def __init__(self, node: Node) -> None:
        self.node = node
        self.devices: dict[str, Device] = {d.name: d for d in node.devices}
        self.gpu_devices: tuple[Device, ...] = tuple(
            d
            for d in node.devices
            if d.gpu is not None
            and (d.profile is None or d.unit_gpu_milli is not None)
            and not d.consumes
        )
        self.gpus = {g.name: g for g in node.gpus}
        self.counter_capacity = {c.name: dict(c.counters) for c in node.counter_sets}
        # per counter set, capacity summed per kind of counter (see _partition_milli)
        self.counter_kind_totals: dict[str, dict[str, int]] = {}
        for counter_set in node.counter_sets:
            totals = self.counter_kind_totals[counter_set.name] = {}
            for name, total in counter_set.counters.items():
                kind = counter_kind(name)
                totals[kind] = totals.get(kind, 0) + total
        models = {g.model for g in node.gpus} | {d.model for d in node.devices if d.gpu}
        self.models: frozenset[str] = frozenset(m for m in models if m)
        self.gpu_models = frozenset(g.model for g in node.gpus)  # None: a GPU of no known model
        # GPUs in MIG mode under the device plugin's mixed strategy: no whole device, their
        # instances are extended resources (nvidia.com/mig-<profile>)
        whole = {d.gpu for d in self.gpu_devices}
        self.mig_mode_gpus = tuple(g for g in node.gpus if g.name not in whole)
        self.memo_static: dict[bool, tuple[object, ...]] = {}  # memo.static_key, computed once
        self._path: tuple[Topology, tuple[str | None, ...]] | None = None

    def path(self, topology: Topology) -> tuple[str | None, ...]:
        """The node's domain at each level of ``topology`` (computed once)."""
        cached = self._path
        if cached is None or cached[0] is not topology:
            cached = self._path = (topology, topology.path(self.node.labels))
        return cached[1]


class NodeAlloc:
    """What is free on one node. Cloned, never shared, before any write."""

    __slots__ = (
        "cpu_free_milli",
        "memory_free_bytes",
        "pods_free",
        "extended_free",
        "device_free",
        "exclusive",
        "counters_free",
        "gpu_milli",
        "gpu_nonpartition_milli",
        "gpu_pods",
        "gpu_profiles",
        "memo_keys",
        "_free_gpu_milli",
        "mig_instances",
    )

    def __init__(self, info: NodeInfo) -> None:
        node = info.node
        self.cpu_free_milli = node.allocatable.cpu_milli
        self.memory_free_bytes = node.allocatable.memory_bytes
        self.pods_free = node.allocatable.pods
        self.extended_free: dict[str, int] = dict(node.allocatable.extended)
        self.device_free: dict[str, dict[str, int]] = {
            d.name: dict(d.capacity) for d in node.devices if d.capacity
        }
        self.exclusive: set[str] = set()
        self.counters_free = {k: dict(v) for k, v in info.counter_capacity.items()}
        self.gpu_milli: dict[str, int] = {g: 0 for g in info.gpus}
        self.gpu_nonpartition_milli: dict[str, int] = {g: 0 for g in info.gpus}
        self.gpu_pods: dict[str, tuple[str, ...]] = {}
        self.gpu_profiles: dict[str, tuple[str, ...]] = {}
        # memo key per (memo.NodeKeys, personal): valid until the next write
        self.memo_keys: dict[tuple[object, bool], int] = {}
        self._free_gpu_milli: int | None = None
        # (pod, MIG resource) → the GPUs its instances were counted on, to give them back
        self.mig_instances: dict[tuple[str, str], tuple[str, ...]] = {}

    def clone(self) -> NodeAlloc:
        other = NodeAlloc.__new__(NodeAlloc)
        other.cpu_free_milli = self.cpu_free_milli
        other.memory_free_bytes = self.memory_free_bytes
        other.pods_free = self.pods_free
        other.extended_free = dict(self.extended_free)
        other.device_free = {k: dict(v) for k, v in self.device_free.items()}
        other.exclusive = set(self.exclusive)
        other.counters_free = {k: dict(v) for k, v in self.counters_free.items()}
        other.gpu_milli = dict(self.gpu_milli)
        other.gpu_nonpartition_milli = dict(self.gpu_nonpartition_milli)
        other.gpu_pods = dict(self.gpu_pods)
        other.gpu_profiles = dict(self.gpu_profiles)
        other.memo_keys = {}
        other._free_gpu_milli = self._free_gpu_milli
        other.mig_instances = dict(self.mig_instances)
        return other

    def changed(self) -> None:
        """Forget what was derived from the free resources (called on every write)."""
        self.memo_keys.clear()
        self._free_gpu_milli = None

    @property
    def free_gpu_milli(self) -> int:
        """GPU milli no pod uses, over all the node's GPUs (cached until the next write)."""
        free = self._free_gpu_milli
        if free is None:
            free = self._free_gpu_milli = sum(
                max(0, WHOLE_GPU_MILLI - used) for used in self.gpu_milli.values()
            )
        return free

    def device_milli_free(self, device: Device) -> int:
        """Free gpu_milli of a device; 0 once taken exclusively."""
        if device.name in self.exclusive:
            return 0
        free = self.device_free.get(device.name)
        if free is None:
            return WHOLE_GPU_MILLI
        return free.get(GPU_MILLI, WHOLE_GPU_MILLI)

    def is_untouched(self, device: Device) -> bool:
        """Whole-device use needs the device and its physical GPU entirely unused."""
        if device.name in self.exclusive:
            return False
        if device.unit_gpu_milli is None and self.gpu_milli.get(device.gpu or "", 0) > 0:
            return False  # a counted unit shares its GPU with the GPU's other units
        capacity = device.capacity
        free = self.device_free.get(device.name, {})
        return all(free.get(k, v) == v for k, v in capacity.items())


def device_gpu_milli(device: Device, take: DeviceTake, info: NodeInfo) -> int:
    """How much of the physical GPU a take occupies (for cells and the GPU ratio)."""
    if device.unit_gpu_milli is not None:
        return device.unit_gpu_milli
    if not take.exclusive:
        return take.capacity.get(GPU_MILLI, 0)
    if device.profile is None or not device.consumes:
        return WHOLE_GPU_MILLI
    return _partition_milli(device, info)


def _partition_milli(device: Device, info: NodeInfo) -> int:
    return round(min(1.0, partition_fraction(device, info)) * WHOLE_GPU_MILLI)


def partition_fraction(device: Device, info: NodeInfo) -> float:
    """A partition's share of its GPU: the largest fraction it takes of any kind of
    counter in its set.

    Counters of one kind may be split per unit (``memory-slice-0`` … ``-7``, or
    ``memorySlice0`` … ``7`` in KEP 4815, capacity 1 each): they are summed per
    kind, so 4 of 8 memory slices is a half, not four wholes. Kinds with a single
    unit (a JPEG or OFA engine) say which engine a profile holds, not how much of
    the GPU: they count only when no kind has more than one unit.
    """
    fractions: list[float] = []
    single_units: list[float] = []
    for use in device.consumes:
        totals = info.counter_kind_totals.get(use.counter_set, {})
        taken: dict[str, int] = {}
        for name, amount in use.counters.items():
            kind = counter_kind(name)
            taken[kind] = taken.get(kind, 0) + amount
        for kind, amount in taken.items():
            total = totals.get(kind, 0)
            if total > 0:
                (fractions if total > 1 else single_units).append(amount / total)
    return max(fractions or single_units or [0.0])


def counter_kind(name: str) -> str:
    """``memory-slice-3`` and ``memorySlice3`` → their kind (``memory-slice``,
    ``memorySlice``); a name without a unit number is its own kind."""
    return name.rstrip("0123456789").rstrip("-_") or name


class StateWatcher(Protocol):
    """Something kept in step with one state: told of every change, cloned with it."""

    def changed(self, name: str, released: bool) -> None: ...

    def added(self, name: str) -> None: ...

    def clone(self) -> StateWatcher: ...


class NodeListCache(Protocol):
    """Something derived from a state's node list; a state that adds a node keeps
    ``extended`` (a new object: the old one stays with the states sharing it)."""

    def extended(self, state: ClusterState, name: str) -> NodeListCache: ...


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

    @classmethod
    def from_cluster(cls, cluster: Cluster) -> ClusterState:
        """Free = allocatable minus what bound pods use (their devices taken too)."""
        from .allocate import bound_allocation

        infos = {n.name: NodeInfo(n) for n in cluster.nodes}
        state = cls(infos, {name: NodeAlloc(info) for name, info in infos.items()})
        for pod in cluster.bound_pods():
            info = infos.get(pod.node_name or "")
            if info is not None:
                state.apply(
                    info.node.name,
                    pod.key,
                    bound_allocation(info, state.alloc(info.node.name), pod),
                )
        return state

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
        self._owned = set()  # both now share every record: the first writer clones
        return other

    def subset(self, names: Iterable[str]) -> ClusterState:
        """A copy holding only ``names`` (in that order), sharing records and caches."""
        names = list(names)
        other = ClusterState({n: self._infos[n] for n in names}, {})
        other._allocs = {n: self._allocs[n] for n in names}
        other.derived = self.derived
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

    def apply(self, node_name: str, pod_key: str, allocation: Allocation) -> None:
        """Take ``allocation`` on the node for ``pod_key``."""
        self._change(node_name, pod_key, allocation, sign=1)

    def release(self, node_name: str, pod_key: str, allocation: Allocation) -> None:
        """Give back exactly what ``apply`` took (used to undo a failed gang)."""
        self._change(node_name, pod_key, allocation, sign=-1)

    def _change(self, node_name: str, pod_key: str, allocation: Allocation, sign: int) -> None:
        alloc = self._writable(node_name)
        alloc.changed()
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


def pod_allocation_base(pod: Pod) -> Allocation:
    """The node-level part of a pod's request (cpu, memory, pods, extended)."""
    requests = pod.requests
    return Allocation(
        cpu_milli=requests.cpu_milli,
        memory_bytes=requests.memory_bytes,
        pods=max(1, requests.pods),
        extended=dict(requests.extended),
    )
