"""Devices of the one hardware model: physical GPUs, the allocatable units on them
(whole GPUs, partitions drawing on shared counters, consumable shares, counted
device-plugin units) and DRA claims and classes (``topology.model.hardware`` re-exports
every name here).

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from topology.model.terms import NodeSelectorTerm

GPU_RESOURCE = "nvidia.com/gpu"


# --- devices ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gpu:
    """One physical accelerator: the unit the heatmap draws and the GPU counts count."""

    name: str  # unique within the node, e.g. "gpu-0"
    model: str | None = None
    memory_bytes: int | None = None
    pcie_root: str | None = None
    numa_node: int | None = None


@dataclass(frozen=True, slots=True)
class CounterSet:
    """Shared counters of one partitionable device (DRA sharedCounters).

    A MIG-capable GPU exposes e.g. ``memory-slice-0..7`` and ``compute`` here;
    each partition Device consumes some of them. A placement is valid only if
    the counters stay non-negative.
    """

    name: str
    counters: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class CounterConsumption:
    counter_set: str
    counters: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Device:
    """One allocatable unit on a node.

    - whole GPU: ``consumes`` empty, ``shareable`` False;
    - partition (MIG-like): ``profile`` set, ``consumes`` draws from a CounterSet;
    - consumable: ``shareable`` True (DRA allowMultipleAllocations): several
      pods draw ``capacity`` (e.g. ``gpu_milli`` 1000, ``memory`` bytes) at once;
    - counted unit: ``unit_gpu_milli`` set. The device plugin advertises
      ``nvidia.com/gpu`` as a count and kube-scheduler only counts it, so a
      MIG-single instance or a time-slicing/MPS replica is one unit of that
      count, taken whole by one pod, several per physical GPU.

    ``gpu`` names the physical Gpu the device lives on (None for non-GPU devices).
    ``attributes`` are DRA attributes by qualified name (e.g.
    ``resource.kubernetes.io/pcieRoot``, ``gpu.nvidia.com/productName``).
    """

    name: str
    driver: str = GPU_RESOURCE
    gpu: str | None = None
    model: str | None = None
    memory_bytes: int | None = None
    profile: str | None = None
    attributes: Mapping[str, str | int | bool] = field(default_factory=dict)
    capacity: Mapping[str, int] = field(default_factory=dict)
    consumes: tuple[CounterConsumption, ...] = ()
    shareable: bool = False
    pool: str = ""
    # one advertised unit of a counted device-plugin resource that shares its physical
    # GPU with the GPU's other units (a MIG instance under the single strategy, a
    # time-slicing or MPS replica): taking it holds this much of the GPU and leaves the
    # other units free; None for a device that is the whole GPU or a DRA device
    unit_gpu_milli: int | None = None


@dataclass(frozen=True, slots=True)
class AttributeSelector:
    """One compiled term of the supported CEL subset.

    ``device.attributes["d"].a == v`` → (attribute "d/a", op "==", v);
    ``device.capacity["d"].memory >= q`` → (capacity "d/memory", op ">=", v);
    ``device.driver == "x"`` → (driver, "==", "x"). Terms are ANDed.
    """

    target: str  # "attribute" | "capacity" | "driver"
    name: str  # qualified attribute / capacity name; "" for driver
    op: str  # == != < <= > >= in
    value: str | int | bool | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    device_class: str
    count: int = 1
    allocation_mode: str = "ExactCount"  # ExactCount | All
    selectors: tuple[AttributeSelector, ...] = ()
    capacity_requests: Mapping[str, int] = field(default_factory=dict)
    # the devices asked for are GPUs or parts of one (what GPU demand counts); the
    # engine decides it against the cluster's devices (workloads.pending_workloads)
    gpu: bool = True
    # adminAccess: the devices are matched but not taken (the structured allocator
    # leaves admin-access devices free for others, and may give in-use ones)
    admin_access: bool = False
    # firstAvailable (KEP-4816, a prioritized list): the subrequests, tried in order,
    # the first that can be allocated is taken (named "<request>/<subrequest>"). The
    # request's own fields are its first subrequest's: what demand and GPU counts read.
    first_available: tuple[DeviceRequest, ...] = ()

    def alternatives(self) -> tuple[DeviceRequest, ...]:
        """What may satisfy the request, in the allocator's order: its subrequests,
        each named ``<request>/<subrequest>``, or the request itself."""
        if not self.first_available:
            return (self,)
        return tuple(replace(s, name=f"{self.name}/{s.name}") for s in self.first_available)


@dataclass(frozen=True, slots=True)
class MatchAttribute:
    """All devices of the named requests (all requests if empty) share this attribute's value."""

    attribute: str
    requests: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    """One ``status.allocation.devices.results`` entry of a ResourceClaim: the device
    ``<driver>/<pool>/<device>`` given to ``request``."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    consumed_capacity: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClaimAllocation:
    """A ResourceClaim's ``status.allocation`` and ``status.reservedFor``.

    ``node_names`` / ``node_terms``: the allocation's ``nodeSelector`` (its
    ``matchFields`` on ``metadata.name``, its label terms, ORed): where a pod using
    the claim may run. Both empty: any node. ``reserved_for``: names of the pods
    the claim is reserved for (``resource: pods``)."""

    devices: tuple[AllocatedDevice, ...]
    node_names: tuple[str, ...] = ()
    node_terms: tuple[NodeSelectorTerm, ...] = ()
    reserved_for: tuple[str, ...] = ()

    def allows(self, node_name: str, labels: Mapping[str, str]) -> bool:
        if not self.node_names and not self.node_terms:
            return True
        return node_name in self.node_names or any(t.matches(labels) for t in self.node_terms)


@dataclass(frozen=True, slots=True)
class DeviceClaim:
    name: str
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[MatchAttribute, ...] = ()
    # "namespace/name" of the ResourceClaim object ("" for a template's copy)
    key: str = ""
    # status.allocation: the devices are already taken (once, however many pods
    # share the claim); None: not allocated yet
    allocation: ClaimAllocation | None = None


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[AttributeSelector, ...] = ()
    # spec.extendedResourceName (KEP-5004): pods asking this extended resource get
    # devices of the class where no node advertises it (topology.kube.dra.extended)
    extended_resource_name: str | None = None
