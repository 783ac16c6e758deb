"""Fluent builders of the engine's model dataclasses, for every engine test.

As kube-scheduler's one test-wrapper package (``pkg/scheduler/testing/wrappers.go``:
``MakeNode().Name("n1").Capacity(...).Label(...).Obj()``), each builder starts from the
dataclass's own defaults, sets only what the test says, and ``build()`` returns the
frozen object::

    make_node("n1").allocatable(cpu=64, memory="512Gi", pods=110).gpus(8, "H100").build()
    make_pod("p", "ml").requests(cpu="500m", memory="1Gi").gpus(1).on("n1").build()
    make_group("pool", template).selector(pool="x").size(0, 4).price(10.0).build()
    make_gang("train", 3, "ml").required("cloud.google.com/gce-topology-block").build()

Builders never change: each call returns a new one, so a test module can name a shape
once and derive every node of it (``H100 = make_node().allocatable(...).gpus(8, "H100")``,
then ``H100.named("n1").label(BLOCK, "b2").build()``).

Quantities are Kubernetes quantities (``64``, ``"500m"``, ``"512Gi"``) or plain numbers
of base units (cpu cores, memory bytes). Pure: no Django, so ``-p no:django`` runs it.
These build model objects; tests of the parsers build Kubernetes object dicts instead.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Generic, Self, TypeVar

from topology.model.devices import (
    AttributeSelector,
    ClaimAllocation,
    CounterSet,
    Device,
    DeviceClaim,
    DeviceRequest,
    Gpu,
    MatchAttribute,
)
from topology.model.hardware import (
    AutoscalerRef,
    Gang,
    GpuRequest,
    Node,
    NodeGroup,
    NodePlacement,
    Pod,
    QuotaQueue,
    Reservation,
    ReservedNodeGroupCapacity,
    Resources,
)
from topology.model.mig import partitionable_gpu
from topology.model.quantity import cpu_milli, memory_bytes
from topology.model.terms import (
    HostPort,
    NodeSelectorTerm,
    PodAffinityTerm,
    PodPlacementTerms,
    SpreadConstraint,
    Taint,
    Toleration,
)

HOSTNAME = "kubernetes.io/hostname"
WHOLE_GPU = {"gpu_milli": 1000}
_KEEP: Any = object()  # GpuSpec fields a call leaves as they were

Quantity = str | int | float


def _resources(
    base: Resources,
    cpu: Quantity | None,
    memory: Quantity | None,
    pods: int | None,
    extended: Mapping[str, int] | None,
) -> Resources:
    return Resources(
        cpu_milli=base.cpu_milli if cpu is None else cpu_milli(cpu),
        memory_bytes=base.memory_bytes if memory is None else memory_bytes(memory),
        pods=base.pods if pods is None else pods,
        extended={**base.extended, **(extended or {})},
    )


T = TypeVar("T")


class _Builder(Generic[T]):
    """Holds the object built so far; every setter returns a changed copy."""

    _built: T

    def set(self, **fields: Any) -> Self:
        """Any other field of the object, as ``dataclasses.replace`` takes it."""
        clone = copy.copy(self)
        clone._built = replace(self._built, **fields)  # type: ignore[type-var]
        return clone

    def build(self) -> T:
        return self._built


# --- nodes --------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuSpec:
    """The physical GPUs ``NodeBuilder.gpus`` makes at ``build()``: names are formats of
    ``{node}`` and ``{i}`` (and ``{gpu}``, the GPU's name, for devices)."""

    count: int = 0
    model: str | None = None
    gpu_name: str = "gpu-{i}"
    device_name: str = "{gpu}"
    devices: bool = True
    capacity: Mapping[str, int] | None = field(default_factory=lambda: dict(WHOLE_GPU))
    device_model: bool = True
    shareable: bool = False


class NodeBuilder(_Builder[Node]):
    """A Node: nothing allocatable, no labels, no GPUs until said."""

    def __init__(self, name: str) -> None:
        self._built = Node(name)
        self._gpus = GpuSpec()
        self._hostname = False

    def named(self, name: str) -> Self:
        return self.set(name=name)

    def allocatable(
        self,
        cpu: Quantity | None = None,
        memory: Quantity | None = None,
        pods: int | None = None,
        extended: Mapping[str, int] | None = None,
    ) -> Self:
        """What the node offers; ``cpu`` in cores or a quantity, ``memory`` in bytes or
        a quantity; what is not said keeps its value."""
        return self.set(
            allocatable=_resources(self._built.allocatable, cpu, memory, pods, extended)
        )

    def resources(self, resources: Resources) -> Self:
        return self.set(allocatable=resources)

    def label(self, key: str, value: str) -> Self:
        return self.set(labels={**self._built.labels, key: value})

    def labels(self, labels: Mapping[str, str]) -> Self:
        return self.set(labels={**self._built.labels, **labels})

    def hostname(self) -> Self:
        """The ``kubernetes.io/hostname`` label the kubelet sets: the node's name,
        whatever it is named at ``build()``."""
        clone = copy.copy(self)
        clone._hostname = True
        return clone

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        return self.set(taints=(*self._built.taints, Taint(key, value, effect)))

    def gpus(self, count: int, model: str | None | object = _KEEP, **spec: Any) -> Self:
        """``count`` physical GPUs, each with one whole Device on it (``GpuSpec``).

        What is not said keeps its value, so ``H100.gpus(2)`` is two of the shape's
        GPUs. ``devices=False``: GPUs only (what counting-only code reads);
        ``capacity=None``: devices without the ``gpu_milli`` capacity;
        ``device_model=False``: devices without the model; ``shareable``: consumable
        devices several pods draw on (DRA allowMultipleAllocations).
        """
        if model is not _KEEP:
            spec["model"] = model
        clone = copy.copy(self)
        clone._gpus = replace(self._gpus, count=count, **spec)
        return clone

    def gpu(self, *gpus: Gpu) -> Self:
        """Physical GPUs as given, after those ``gpus`` makes."""
        return self.set(gpus=(*self._built.gpus, *gpus))

    def device(self, *devices: Device) -> Self:
        """Devices as given, after those ``gpus`` makes."""
        return self.set(devices=(*self._built.devices, *devices))

    def counter_set(self, *counters: CounterSet) -> Self:
        return self.set(counter_sets=(*self._built.counter_sets, *counters))

    def partitionable_gpu(self, name: str, model: str) -> Self:
        """One MIG-capable GPU as DRA publishes it: its counters and every partition
        (``topology.model.mig.partitionable_gpu``)."""
        counters, devices = partitionable_gpu(name, model)
        return self.gpu(Gpu(name, model=model)).counter_set(counters).device(*devices)

    def group(self, node_group: str | None) -> Self:
        return self.set(node_group=node_group)

    def price(self, per_node_hour: float | None) -> Self:
        return self.set(price_per_node_hour=per_node_hour)

    def unschedulable(self) -> Self:
        return self.set(unschedulable=True)

    def not_ready(self) -> Self:
        return self.set(ready=False)

    def created(self, at: float) -> Self:
        return self.set(created=at)

    def build(self) -> Node:
        node, spec = self._built, self._gpus
        labels = {**node.labels, HOSTNAME: node.name} if self._hostname else node.labels
        gpus = tuple(
            Gpu(spec.gpu_name.format(node=node.name, i=i), model=spec.model)
            for i in range(spec.count)
        )
        devices = tuple(
            Device(
                spec.device_name.format(node=node.name, i=i, gpu=gpu.name),
                gpu=gpu.name,
                model=spec.model if spec.device_model else None,
                capacity=dict(spec.capacity) if spec.capacity is not None else {},
                shareable=spec.shareable,
            )
            for i, gpu in enumerate(gpus)
            if spec.devices
        )
        return replace(
            node,
            labels=labels,
            gpus=(*gpus, *node.gpus),
            devices=(*devices, *node.devices),
        )


def make_node(name: str = "") -> NodeBuilder:
    """A node builder; ``name`` may wait for ``named`` when the builder is a shape."""
    return NodeBuilder(name)


# --- pods ---------------------------------------------------------------------------


class PodBuilder(_Builder[Pod]):
    """A Pod: pending, priority 0, requesting one pod slot and nothing else until said."""

    def __init__(self, name: str, namespace: str) -> None:
        self._built = Pod(namespace, name)

    def named(self, name: str) -> Self:
        return self.set(name=name)

    def namespace(self, namespace: str) -> Self:
        return self.set(namespace=namespace)

    def requests(
        self,
        cpu: Quantity | None = None,
        memory: Quantity | None = None,
        pods: int | None = None,
        extended: Mapping[str, int] | None = None,
    ) -> Self:
        """What the pod requests; as ``NodeBuilder.allocatable``."""
        return self.set(requests=_resources(self._built.requests, cpu, memory, pods, extended))

    def resources(self, resources: Resources) -> Self:
        return self.set(requests=resources)

    def gpus(
        self,
        count: int,
        milli: int = 1000,
        *,
        models: tuple[str, ...] = (),
        memory: int | None = None,
    ) -> Self:
        """``count`` device-plugin GPUs, each ``milli`` of one GPU (below 1000: a share)."""
        return self.set(gpu=GpuRequest(count, milli, models, memory))

    def claim(self, *claims: DeviceClaim) -> Self:
        return self.set(claims=(*self._built.claims, *claims))

    def on(self, node_name: str | None) -> Self:
        """Bound to ``node_name`` (None: pending)."""
        return self.set(node_name=node_name)

    def priority(self, priority: int) -> Self:
        return self.set(priority=priority)

    def arrival(self, at: float) -> Self:
        return self.set(arrival=at)

    def started(self, at: float | None) -> Self:
        return self.set(started=at)

    def label(self, key: str, value: str) -> Self:
        return self.set(labels={**self._built.labels, key: value})

    def labels(self, labels: Mapping[str, str]) -> Self:
        return self.set(labels={**self._built.labels, **labels})

    def node_selector(self, selector: Mapping[str, str]) -> Self:
        return self.set(node_selector={**self._built.node_selector, **selector})

    def node_affinity(self, *terms: NodeSelectorTerm) -> Self:
        """Required node affinity: the terms, ORed."""
        return self.set(affinity=(*self._built.affinity, *terms))

    def toleration(self, *tolerations: Toleration) -> Self:
        return self.set(tolerations=(*self._built.tolerations, *tolerations))

    def gang(self, key: str | None) -> Self:
        """Member of the Gang ``namespace/name``."""
        return self.set(gang=key)

    def required_topology(self, level: str | None) -> Self:
        return self.set(required_topology=level)

    def preferred_topology(self, level: str | None) -> Self:
        return self.set(preferred_topology=level)

    def pod_terms(
        self,
        affinity: tuple[PodAffinityTerm, ...] = (),
        anti_affinity: tuple[PodAffinityTerm, ...] = (),
        spread: tuple[SpreadConstraint, ...] = (),
    ) -> Self:
        """Required pod affinity, anti-affinity and DoNotSchedule spread."""
        return self.set(pod_terms=PodPlacementTerms(affinity, anti_affinity, spread))

    def host_ports(self, *ports: HostPort) -> Self:
        return self.set(host_ports=(*self._built.host_ports, *ports))

    def gates(self, *gates: str) -> Self:
        return self.set(scheduling_gates=(*self._built.scheduling_gates, *gates))

    def preemption_policy(self, policy: str) -> Self:
        return self.set(preemption_policy=policy)

    def queue(self, queue: str | None) -> Self:
        return self.set(queue=queue)


def make_pod(name: str = "", namespace: str = "default") -> PodBuilder:
    """A pod builder; ``name`` may wait for ``named`` when the builder is a shape."""
    return PodBuilder(name, namespace)


# --- gangs --------------------------------------------------------------------------


class GangBuilder(_Builder[Gang]):
    def __init__(self, name: str, min_member: int, namespace: str) -> None:
        self._built = Gang(namespace, name, min_member)

    def required(self, level: str | None) -> Self:
        """The topology level all members must share (Kueue podset-required-topology)."""
        return self.set(required_topology=level)

    def preferred(self, level: str | None) -> Self:
        return self.set(preferred_topology=level)

    def priority(self, priority: int) -> Self:
        return self.set(priority=priority)

    def queue(self, queue: str | None) -> Self:
        return self.set(queue=queue)


def make_gang(name: str, min_member: int, namespace: str = "default") -> GangBuilder:
    return GangBuilder(name, min_member, namespace)


# --- node groups --------------------------------------------------------------------


class GroupBuilder(_Builder[NodeGroup]):
    """A NodeGroup of ``template``: no selector, 0 to 10 nodes, 1.0 an hour until said."""

    def __init__(self, name: str, template: Node) -> None:
        self._built = NodeGroup(name, {}, 0, 10, 1.0, template=template)

    def template(self, template: Node) -> Self:
        """Labels, taints, allocatable and devices of a new node."""
        return self.set(template=template)

    def selector(self, selector: Mapping[str, str]) -> Self:
        return self.set(node_selector={**self._built.node_selector, **selector})

    def size(self, min_size: int, max_size: int) -> Self:
        return self.set(min_size=min_size, max_size=max_size)

    def max_size(self, max_size: int) -> Self:
        return self.set(max_size=max_size)

    def current_size(self, size: int) -> Self:
        return self.set(current_size=size)

    def price(self, per_node_hour: float) -> Self:
        return self.set(price_per_node_hour=per_node_hour)

    def placement(self, labels: Mapping[str, str], max_new_nodes: int) -> Self:
        """Where new nodes can land (topology labels) and how many."""
        placement = NodePlacement(dict(labels), max_new_nodes)
        return self.set(placements=(*self._built.placements, placement))

    def autoscaler(self, ref: AutoscalerRef | None) -> Self:
        return self.set(autoscaler=ref)


def make_group(name: str, template: Node) -> GroupBuilder:
    return GroupBuilder(name, template)


# --- reservations and queues ----------------------------------------------------------


class ReservationBuilder(_Builder[Reservation]):
    """A Reservation of the namespaces given, on no node, always active, free until said."""

    def __init__(self, name: str, owners: tuple[str, ...]) -> None:
        self._built = Reservation(name, owners)

    def nodes(self, *names: str) -> Self:
        return self.set(node_names=(*self._built.node_names, *names))

    def selector(self, selector: Mapping[str, str]) -> Self:
        return self.set(node_selector={**self._built.node_selector, **selector})

    def group_capacity(self, node_group: str, count: int) -> Self:
        return self.set(node_group=ReservedNodeGroupCapacity(node_group, count))

    def start(self, at: datetime | None) -> Self:
        return self.set(start=at)

    def end(self, at: datetime | None) -> Self:
        """The first instant it no longer holds."""
        return self.set(end=at)

    def price_per_gpu_hour(self, price: float) -> Self:
        return self.set(price_per_gpu_hour=price)


def make_reservation(name: str, *owner_namespaces: str) -> ReservationBuilder:
    return ReservationBuilder(name, owner_namespaces)


class QueueBuilder(_Builder[QuotaQueue]):
    """A QuotaQueue (``ClusterQueue/cq``, ``VolcanoQueue/q``…): no quota until said."""

    def __init__(self, name: str) -> None:
        self._built = QuotaQueue(name, {})

    def limit(self, resource: str, amount: int) -> Self:
        """Admitted in total without borrowing, in the pod's base units."""
        return self.set(limit={**self._built.limit, resource: amount})

    def cohort(self, cohort: str | None) -> Self:
        return self.set(cohort=cohort)

    def borrowing_limit(self, resource: str, amount: int) -> Self:
        return self.set(borrowing_limit={**(self._built.borrowing_limit or {}), resource: amount})

    def local_queue(self, key: str) -> Self:
        return self.set(local_queues=(*self._built.local_queues, key))

    def flavor_limit(self, flavor: str, resource: str, amount: int) -> Self:
        limits = {**self._built.flavor_limits}
        limits[flavor] = {**limits.get(flavor, {}), resource: amount}
        return self.set(flavor_limits=limits)


def make_queue(name: str) -> QueueBuilder:
    return QueueBuilder(name)


# --- DRA claims ------------------------------------------------------------------------


class ClaimBuilder(_Builder[DeviceClaim]):
    """A DeviceClaim (a ResourceClaim's or a template's): no request until said."""

    def __init__(self, name: str) -> None:
        self._built = DeviceClaim(name, ())

    def request(
        self,
        name: str,
        device_class: str,
        count: int = 1,
        *,
        selectors: tuple[AttributeSelector, ...] = (),
        **fields: Any,
    ) -> Self:
        """One device request; ``fields``: the other DeviceRequest fields
        (``allocation_mode``, ``capacity_requests``, ``gpu``, ``admin_access``)."""
        made = DeviceRequest(name, device_class, count, selectors=selectors, **fields)
        return self.set(requests=(*self._built.requests, made))

    def match_attribute(self, attribute: str, *requests: str) -> Self:
        constraint = MatchAttribute(attribute, requests)
        return self.set(constraints=(*self._built.constraints, constraint))

    def allocated(self, allocation: ClaimAllocation) -> Self:
        return self.set(allocation=allocation)


def make_claim(name: str) -> ClaimBuilder:
    return ClaimBuilder(name)
