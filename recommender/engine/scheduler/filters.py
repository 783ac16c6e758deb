"""Filter rules: may this pod run on this node, given what is free? (kube-scheduler Filter)

Each rule is a small function ``(info, alloc, pod, context) -> Status``; the
first failing rule's reason is the node's reason, as kube-scheduler reports
it, and the diagnosis counts nodes per reason. A new rule is one function and
one registration, ``@rule(kind)``, where the kind says what it reads:

- ``static``: the node and the pod only, never what is free (the placement
  keeps their verdict per node, across every binding);
- ``resource``: what is free on the node (cpu, memory, pods, extended);
- ``device``: which devices could serve the pod (GPUs, shares, DRA claims);
- ``pods``: the pods placed around the node (NodePorts reads those on the node;
  InterPodAffinity and PodTopologySpread those in its domains, through the pod's
  PreFilter state, ``FilterContext.cycle`` (``interpod``)).

Rules run static, then resource, then device, then pods, in registration order
within a kind; the groups are derived from the kind, never from a position in a list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, get_args

from topology.kube.core.volumes import failed_origin
from topology.model.hardware import Cluster, DeviceClass, Pod, Taint

from . import interpod
from .allocate import claim_takes, gpu_options
from .records import NodeAlloc, NodeInfo

UNSCHEDULABLE = "node(s) were unschedulable"
NOT_READY = "node(s) were not ready"
AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
RESERVED = "node(s) reserved for another team"
INSUFFICIENT_CPU = "Insufficient cpu"
INSUFFICIENT_MEMORY = "Insufficient memory"
TOO_MANY_PODS = "Too many pods"
NODE_PORTS_TAKEN = "node(s) didn't have free ports for the requested pod ports"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


@dataclass(frozen=True, slots=True)
class Status:
    ok: bool
    reason: str = ""


OK = Status(True)


@dataclass(frozen=True)
class FilterContext:
    """What filters need beyond node and pod, computed once per ``place`` call.

    ``reserved_for`` maps a node to the namespaces of the active reservations
    holding it; ``granted`` maps a namespace to nodes whose taints its pods
    are treated as tolerating (the joint autoscaler's reuse of a reservation).
    """

    device_classes: Mapping[str, DeviceClass] = field(default_factory=dict)
    reserved_for: Mapping[str, frozenset[str]] = field(default_factory=dict)
    granted: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # the PreFilter state of the pod being filtered, for the ``pods`` rules (None: no
    # pod around any node matters to it)
    cycle: interpod.PodCycle | None = None
    # the DRAPartitionableDevices feature gate of the simulated scheduler (off: a device
    # that consumes counters is never allocated; ``allocate._ClaimScratch``)
    partitionable_devices: bool = True
    # every namespace owning a reserved node: the only ones the reservation rule
    # tells apart from the rest
    owners: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "owners", frozenset().union(*self.reserved_for.values()))

    def namespace_class(self, namespace: str) -> str:
        """The namespace where a filter tells it apart (it owns a reservation or holds a
        grant), else "": the filters treat every other namespace alike."""
        return namespace if namespace in self.owners or namespace in self.granted else ""

    @classmethod
    def build(
        cls,
        cluster: Cluster,
        grants: Mapping[str, frozenset[str]],
        at: datetime | None,
        reserved_for: Mapping[str, frozenset[str]] | None = None,
        partitionable_devices: bool = True,
    ) -> FilterContext:
        """``reserved_for``: ``reserved_nodes_at(cluster, at)`` when the caller has it."""
        return cls(
            device_classes={c.name: c for c in cluster.device_classes},
            reserved_for=reserved_nodes_at(cluster, at) if reserved_for is None else reserved_for,
            granted=dict(grants),
            partitionable_devices=partitionable_devices,
        )


def reserved_nodes_at(cluster: Cluster, at: datetime | None) -> dict[str, frozenset[str]]:
    """Each node held by a reservation active at ``at`` → the namespaces owning it."""
    owners: dict[str, set[str]] = {}
    for reservation in cluster.reservations:
        if at is not None and not reservation.active_at(at):
            continue
        for node in cluster.nodes:
            if reservation.holds(node.name, node.labels):
                owners.setdefault(node.name, set()).update(reservation.owner_namespaces)
    return {name: frozenset(namespaces) for name, namespaces in owners.items()}


Check = Callable[[NodeInfo, NodeAlloc, Pod, FilterContext], Status]
RuleKind = Literal["static", "resource", "device", "pods"]
KINDS: tuple[RuleKind, ...] = get_args(RuleKind)  # also the order in which kinds run


@dataclass(frozen=True, slots=True)
class Rule:
    """A Filter rule: its name (the function's), what it reads, and the check."""

    name: str
    kind: RuleKind
    check: Check

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"filter rule {self.name}: kind {self.kind!r} is not one of {KINDS}")


_REGISTERED: list[Rule] = []


def rule(kind: RuleKind) -> Callable[[Check], Check]:
    """Register the decorated function as a Filter rule of ``kind``."""

    def register(check: Check) -> Check:
        _REGISTERED.append(Rule(check.__name__, kind, check))
        return check

    return register


@rule("static")
def node_ready(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    return OK if info.node.ready else Status(False, NOT_READY)


@rule("static")
def node_schedulable(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    """NodeUnschedulable (node_unschedulable.go): a cordoned node admits only pods that
    tolerate its node.kubernetes.io/unschedulable:NoSchedule taint."""
    if not info.node.unschedulable:
        return OK
    if any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations):
        return OK
    return Status(False, UNSCHEDULABLE)


@rule("static")
def taints_tolerated(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    if info.node.name in ctx.granted.get(pod.namespace, frozenset()):
        return OK
    for taint in info.node.taints:
        if taint.effect == "PreferNoSchedule":
            continue
        if not any(t.tolerates(taint) for t in pod.tolerations):
            return Status(False, untolerated_taint_reason(taint))
    return OK


def untolerated_taint_reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


@rule("static")
def node_affinity(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    labels = info.node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return Status(False, AFFINITY_MISMATCH)
    if pod.affinity and not any(term.matches(labels) for term in pod.affinity):
        # a volume's node constraint merged into the affinity fails with its own reason
        return Status(False, failed_origin(pod.affinity, labels) or AFFINITY_MISMATCH)
    return OK


@rule("static")
def reservation(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    return OK if may_use_node(ctx, pod.namespace, info.node.name) else Status(False, RESERVED)


def may_use_node(ctx: FilterContext, namespace: str, node_name: str) -> bool:
    """Not held by another team's reservation (or granted to ``namespace``): the
    ``reservation`` rule, and which nodes' GPUs count as free for a workload of
    ``namespace`` in its reasons and per-domain figures."""
    owners = ctx.reserved_for.get(node_name)
    if owners is None or namespace in owners:
        return True
    return node_name in ctx.granted.get(namespace, frozenset())


@rule("resource")
def node_resources(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    requests = pod.requests
    if requests.cpu_milli > alloc.cpu_free_milli:
        return Status(False, INSUFFICIENT_CPU)
    if requests.memory_bytes > alloc.memory_free_bytes:
        return Status(False, INSUFFICIENT_MEMORY)
    if max(1, requests.pods) > alloc.pods_free:
        return Status(False, TOO_MANY_PODS)
    return OK


@rule("resource")
def extended_resources(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    for name, amount in pod.requests.extended.items():
        if amount > alloc.extended_free.get(name, 0):
            return Status(False, f"Insufficient {name}")
    return OK


@rule("device")
def gpu_devices(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    """GPU count, model, memory and fractional share (device plugin / trace demand)."""
    if pod.gpu is None or pod.gpu.count == 0:
        return OK
    options = gpu_options(info, alloc, pod.gpu)
    return Status(False, options) if isinstance(options, str) else OK


@rule("device")
def device_claims(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    """DRA claims: class + request selectors, counts, capacity, counters, matchAttribute."""
    if not pod.claims:
        return OK
    takes = claim_takes(info, alloc, pod, ctx.device_classes, ctx.partitionable_devices)
    return Status(False, takes) if isinstance(takes, str) else OK


@rule("pods")
def node_ports(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    """NodePorts (nodeports/node_ports.go fitsPorts): no wanted host port may conflict
    with one a pod on the node already binds (same protocol and port, and the same
    host IP or 0.0.0.0 on either side)."""
    if not pod.host_ports:
        return OK
    for other in alloc.placed:
        for used in other.host_ports:
            if any(wanted.conflicts(used) for wanted in pod.host_ports):
                return Status(False, NODE_PORTS_TAKEN)
    return OK


@rule("pods")
def pod_topology_spread(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    """PodTopologySpread, DoNotSchedule constraints (podtopologyspread/filtering.go)."""
    if not pod.pod_terms.spread:
        return OK
    reason = interpod.spread_reason(info.node.labels, _cycle(pod, ctx))
    return Status(False, reason) if reason else OK


@rule("pods")
def inter_pod_affinity(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    """InterPodAffinity: required (anti-)affinity, and placed pods' anti-affinity
    against this pod (interpodaffinity/filtering.go)."""
    terms = pod.pod_terms
    if ctx.cycle is None and not (terms.affinity or terms.anti_affinity):
        return OK  # nothing placed matters to this pod (the placement says so)
    reason = interpod.affinity_reason(info.node.labels, _cycle(pod, ctx))
    return Status(False, reason) if reason else OK


def _cycle(pod: Pod, ctx: FilterContext) -> interpod.PodCycle:
    cycle = ctx.cycle
    if cycle is None or cycle.pod is not pod:
        raise ValueError(
            f"pod {pod.key} carries inter-pod terms: filter it with its PreFilter state"
        )
    return cycle


def _in_kind_order(rules: list[Rule]) -> tuple[Rule, ...]:
    return tuple(sorted(rules, key=lambda r: KINDS.index(r.kind)))  # stable: registration order


def _checks(kind: RuleKind) -> tuple[Check, ...]:
    return tuple(r.check for r in RULES if r.kind == kind)


RULES: tuple[Rule, ...] = _in_kind_order(_REGISTERED)
STATIC_RULES: tuple[Check, ...] = _checks("static")  # read the node and pod, never what is free
RESOURCE_RULES: tuple[Check, ...] = _checks("resource")
POD_RULES: tuple[Check, ...] = _checks("pods")  # read the pods placed around the node
_ALL_CHECKS: tuple[Check, ...] = tuple(r.check for r in RULES)


def run_filters(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    """The first failing rule's status, or OK."""
    for check in _ALL_CHECKS:
        status = check(info, alloc, pod, ctx)
        if not status.ok:
            return status
    return OK
