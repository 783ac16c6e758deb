"""Edits of the model one workload's answer may hinge on, applied to a copy of a cluster.

The same edits serve two callers: ``relaxations`` (the engine looks for the smallest
one that unblocks a workload) and the workload page's interactive what-if (a person
picks one). Each is an ``Edit`` value; ``apply`` returns a new ``Cluster`` and never
touches the one given::

    raise-max     node group G: max size (and each domain's new-node slots) + N
    topology      the workload requires level L (its key or name) instead ("": none)
    gpu-model     the workload's pods ask GPU model M instead of theirs
    sharing       node group G and its members share GPUs (fractions per pod: time-
                  slicing / MPS as the trace's shared GPUs), or stop sharing (N = 0)
    reservation   the workload's namespace may use reservation R
    priority      the workload's pods (and gang) get priority N: kube-scheduler then
                  evicts lower-priority pods for it where that makes it fit

Bad input (an unknown group, level, reservation; a negative amount) raises
``EditError`` naming the field and the reason; the API answers 400 with it.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from topology.model.hardware import Cluster, Device, Node, NodeGroup, Pod, TopologyLevel

RAISE_MAX = "raise-max"
TOPOLOGY = "topology"
GPU_MODEL = "gpu-model"
SHARING = "sharing"
RESERVATION = "reservation"
PRIORITY = "priority"
KINDS = (RAISE_MAX, TOPOLOGY, GPU_MODEL, SHARING, RESERVATION, PRIORITY)
PRODUCT_LABEL = "nvidia.com/gpu.product"
MAX_RAISE = 1000  # nodes: past any real group, bounds the what-if's work
MAX_PRIORITY = 2_000_000_000  # system-cluster-critical's value, the highest kube allows


class EditError(ValueError):
    """An edit that cannot apply: ``field`` names what is wrong."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Edit:
    kind: str
    target: str = ""
    amount: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, "amount": self.amount}

    @property
    def changes_pods(self) -> bool:
        """Whether the edit changes the workload's own pods (it must be read again)."""
        return self.kind in (TOPOLOGY, GPU_MODEL, PRIORITY)

    @property
    def changes_nodes(self) -> bool:
        """Whether the edit changes existing nodes (the scheduler state must be rebuilt)."""
        return self.kind == SHARING

    def text(self, cluster: Cluster, workload_key: str) -> str:
        """The edit in an operator's words."""
        if self.kind == RAISE_MAX:
            group = _group(cluster, self.target)
            slots = f" and each of its domains' new-node slots by {self.amount}"
            members = f"; it has {group.current_size} nodes" if group.current_size else ""
            return (
                f"raise node group {group.name}'s max size by {self.amount} "
                f"({group.max_size} → {group.max_size + self.amount}{members})"
                + (slots if group.placements else "")
            )
        if self.kind == TOPOLOGY:
            if not self.target:
                return f"drop {workload_key}'s topology requirement"
            return f"require one {_level_name(cluster, self.target)} instead"
        if self.kind == GPU_MODEL:
            return f"ask for GPU model {self.target} instead"
        if self.kind == SHARING:
            verb = "enable" if self.amount else "disable"
            return f"{verb} GPU sharing (fractions of a GPU per pod) on node group {self.target}"
        if self.kind == PRIORITY:
            return f"give it priority {self.amount} (lower-priority pods may then be evicted)"
        namespace = workload_key.partition("/")[0]
        return f"let {namespace} use reservation {self.target}"


def edit_from(data: Mapping[str, Any]) -> Edit:
    """An ``Edit`` from a form or JSON body (``kind``, ``target``, ``amount``)."""
    kind = str(data.get("kind") or "")
    if kind not in KINDS:
        raise EditError("kind", f"must be one of {', '.join(KINDS)}, not {kind!r}")
    target = str(data.get("target") or "").strip()
    raw = data.get("amount")
    try:
        amount = int(raw) if raw not in (None, "") else (1 if kind in (RAISE_MAX, SHARING) else 0)
    except (TypeError, ValueError):
        raise EditError("amount", f"must be a whole number, not {raw!r}") from None
    highest = MAX_PRIORITY if kind == PRIORITY else MAX_RAISE
    if amount < 0 or amount > highest:
        raise EditError("amount", f"must be between 0 and {highest}, not {amount}")
    if kind == RAISE_MAX and amount == 0:
        raise EditError("amount", "must be at least 1 to raise a max size")
    return Edit(kind, target, amount)


def apply(cluster: Cluster, workload_key: str, edit: Edit) -> Cluster:
    """``cluster`` with ``edit`` made (EditError when it names nothing there)."""
    if edit.kind == RAISE_MAX:
        group = _group(cluster, edit.target)
        return _with_group(cluster, _raised(group, edit.amount))
    if edit.kind == SHARING:
        group = _group(cluster, edit.target)
        return _sharing(cluster, group, on=edit.amount > 0)
    if edit.kind == RESERVATION:
        return _reservation(cluster, workload_key, edit.target)
    pods = [p for p in cluster.pods if _of(p, workload_key) and p.node_name is None]
    if not pods:
        raise EditError("workload", f"{workload_key} has no pending pod in the snapshot")
    if edit.kind == TOPOLOGY:
        return _topology(cluster, workload_key, edit.target)
    if edit.kind == PRIORITY:
        return _priority(cluster, workload_key, edit.amount)
    if not edit.target:
        raise EditError("target", "name the GPU model to ask for")
    return _pods(cluster, workload_key, lambda p: _with_model(p, edit.target))


def _of(pod: Pod, workload_key: str) -> bool:
    return pod.gang == workload_key or (pod.gang is None and pod.key == workload_key)


def _group(cluster: Cluster, name: str) -> NodeGroup:
    for group in cluster.node_groups:
        if group.name == name:
            return group
    known = ", ".join(sorted(g.name for g in cluster.node_groups)) or "none"
    raise EditError("target", f"no node group {name!r} (known: {known})")


def _level_name(cluster: Cluster, key: str) -> str:
    return _level(cluster, key).name


def _level(cluster: Cluster, given: str) -> TopologyLevel:
    """The level named by its node label key or by its name ("block")."""
    for level in cluster.topology.levels:
        if given in (level.key, level.name):
            return level
    known = ", ".join(f"{level.name} ({level.key})" for level in cluster.topology.levels)
    raise EditError("target", f"no topology level {given!r} (known: {known})")


def _with_group(cluster: Cluster, group: NodeGroup) -> Cluster:
    groups = tuple(group if g.name == group.name else g for g in cluster.node_groups)
    return replace(cluster, node_groups=groups)


def _raised(group: NodeGroup, amount: int) -> NodeGroup:
    placements = tuple(replace(p, max_new_nodes=p.max_new_nodes + amount) for p in group.placements)
    return replace(group, max_size=group.max_size + amount, placements=placements)


def _sharing(cluster: Cluster, group: NodeGroup, *, on: bool) -> Cluster:
    template = _shared_node(group.template, on)
    cluster = _with_group(cluster, replace(group, template=template))
    nodes = tuple(_shared_node(n, on) if n.node_group == group.name else n for n in cluster.nodes)
    return replace(cluster, nodes=nodes)


def _shared_node(node: Node, on: bool) -> Node:
    """Whole GPU devices made shareable (or not): counted units and partitions stay."""
    devices = tuple(_shared_device(d, on) for d in node.devices)
    return replace(node, devices=devices)


def _shared_device(device: Device, on: bool) -> Device:
    if device.gpu is None or device.unit_gpu_milli is not None or device.consumes:
        return device
    if device.profile is not None:
        return device
    return replace(device, shareable=on)


def _reservation(cluster: Cluster, workload_key: str, name: str) -> Cluster:
    namespace = workload_key.partition("/")[0]
    found = [r for r in cluster.reservations if r.name == name]
    if not found:  # the names are not listed: other teams' are not everyone's to read
        raise EditError("target", f"no reservation {name!r}")
    reservations = tuple(
        replace(r, owner_namespaces=(*r.owner_namespaces, namespace))
        if r.name == name and not r.may_use(namespace)
        else r
        for r in cluster.reservations
    )
    return replace(cluster, reservations=reservations)


def _topology(cluster: Cluster, workload_key: str, level: str) -> Cluster:
    required = _level(cluster, level).key if level else None
    gangs = tuple(
        replace(g, required_topology=required) if g.key == workload_key else g
        for g in cluster.gangs
    )
    cluster = replace(cluster, gangs=gangs)
    return _pods(cluster, workload_key, lambda p: replace(p, required_topology=required))


def _priority(cluster: Cluster, workload_key: str, priority: int) -> Cluster:
    gangs = tuple(
        replace(g, priority=priority) if g.key == workload_key else g for g in cluster.gangs
    )
    cluster = replace(cluster, gangs=gangs)
    return _pods(cluster, workload_key, lambda p: replace(p, priority=priority))


def _pods(cluster: Cluster, workload_key: str, change: Any) -> Cluster:
    pods = tuple(
        change(p) if _of(p, workload_key) and p.node_name is None else p for p in cluster.pods
    )
    return replace(cluster, pods=pods)


def _with_model(pod: Pod, model: str) -> Pod:
    selector = dict(pod.node_selector)
    if PRODUCT_LABEL in selector:
        selector[PRODUCT_LABEL] = model
    gpu = replace(pod.gpu, models=(model,)) if pod.gpu is not None else None
    return replace(pod, gpu=gpu, node_selector=selector)
