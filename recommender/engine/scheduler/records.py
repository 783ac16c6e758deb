"""Per-node records under ``ClusterState``: what a node has, what is free on it.

``NodeInfo`` holds what never changes for a node (devices by name, GPU devices
in order, counter totals); ``NodeAlloc`` what is still free after every binding;
``Allocation`` and ``DeviceTake`` what one pod takes. The device choices
(``allocate``) and the state (``state``) both build on these, so they live
below both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from topology.model.hardware import WHOLE_GPU_MILLI, Device, Node, Pod, Topology

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
        "placed",
        "preemption_memo",
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
        # memo key per (memo.NodeKeys, personal), GPU key per (memo.NodeKeys, "gpu"):
        # valid until the next write
        self.memo_keys: dict[tuple[object, bool | str], int] = {}
        self._free_gpu_milli: int | None = None
        # (pod, MIG resource) → the GPUs its instances were counted on, to give them back
        self.mig_instances: dict[tuple[str, str], tuple[str, ...]] = {}
        # the pods bound or placed here, for the rules that read them (``interpod``)
        self.placed: tuple[Pod, ...] = ()
        # victims found here per pod (``preemption``): valid until the next write
        # (filter context, pod the entry belongs to or None for a shape, victims or None)
        self.preemption_memo: dict[object, object] = {}

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
        other.placed = self.placed
        other.preemption_memo = {}
        return other

    def changed(self) -> None:
        """Forget what was derived from the free resources (called on every write)."""
        self.memo_keys.clear()
        self._free_gpu_milli = None
        self.preemption_memo.clear()

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


def pod_allocation_base(pod: Pod) -> Allocation:
    """The node-level part of a pod's request (cpu, memory, pods, extended)."""
    requests = pod.requests
    return Allocation(
        cpu_milli=requests.cpu_milli,
        memory_bytes=requests.memory_bytes,
        pods=max(1, requests.pods),
        extended=dict(requests.extended),
    )
