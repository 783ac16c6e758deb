"""Pods, gangs and the DRA claims pods carry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from tests.builders.base import Builder, Quantity, merged_resources
from topology.model.devices import (
    AttributeSelector,
    ClaimAllocation,
    DeviceClaim,
    DeviceRequest,
    MatchAttribute,
)
from topology.model.hardware import Gang, GpuRequest, Pod, Resources
from topology.model.terms import (
    HostPort,
    NodeSelectorTerm,
    PodAffinityTerm,
    PodPlacementTerms,
    SpreadConstraint,
    Toleration,
)

# --- pods ---------------------------------------------------------------------------


class PodBuilder(Builder[Pod]):
    """A Pod: pending, priority 0, requesting one pod slot and nothing else until said."""

    def __init__(self, name: str, namespace: str) -> None:
        self._built = Pod(namespace, name)

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
        return self.set(
            requests=merged_resources(self._built.requests, cpu, memory, pods, extended)
        )

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

    def controller(self, ref: str | None) -> Self:
        """``Kind/namespace/name`` of the ownerReference with ``controller: true``
        (None: a bare pod, which nothing recreates once evicted)."""
        return self.set(controller=ref)

    def node_daemon(self, ref: str | None) -> Self:
        """``DaemonSet/namespace/name`` of a DaemonSet's pod (or a static pod's mirror key)."""
        return self.set(node_daemon=ref)

    def safe_to_evict(self, safe: bool | None) -> Self:
        """``cluster-autoscaler.kubernetes.io/safe-to-evict`` read: True, False or unset."""
        return self.set(safe_to_evict=safe)

    def blocking_local_volumes(self, *names: str) -> Self:
        """Volumes that block a drain (hostPath, an emptyDir not on Memory)."""
        return self.set(blocking_local_volumes=(*self._built.blocking_local_volumes, *names))


def make_pod(name: str = "", namespace: str = "default") -> PodBuilder:
    """A pod builder; ``name`` may wait for ``named`` when the builder is a shape."""
    return PodBuilder(name, namespace)


# --- gangs --------------------------------------------------------------------------


class GangBuilder(Builder[Gang]):
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


# --- DRA claims ------------------------------------------------------------------------


class ClaimBuilder(Builder[DeviceClaim]):
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
