"""Node objects → ``Node``: allocatable, taints, readiness, and the node-selector
requirements that pods, PersistentVolumes and discovered pools share.

Pure: no Django, no I/O. ``topology.kube.parse`` dispatches Node and ResourceSlice objects
here; ``topology.kube.discovery`` builds Karpenter templates and DaemonSet pods with the
same readers. GPUs: DRA devices win; without them the device-plugin allocatable and
the GPU Feature Discovery labels (``topology.kube.dra.slices``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from topology.kube.core import podstatus
from topology.kube.core.podrequests import is_integer_resource
from topology.kube.dra import slices as dra
from topology.kube.fields import ObjectContext, node_requirement
from topology.model.hardware import (
    GPU_RESOURCE,
    SHARED_GPU_RESOURCE,
    Node,
    NodeSelectorTerm,
    Resources,
    Taint,
    Toleration,
)
from topology.model.quantity import cpu_milli, memory_bytes, whole_count

REQUIRED_AFFINITY = "requiredDuringSchedulingIgnoredDuringExecution"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
CORE_RESOURCES = ("cpu", "memory", "pods", GPU_RESOURCE)
# a sanity bound on any one extended resource of a node (issue 28): real nodes have
# 8 GPUs, a time-sliced one a few dozen replicas, far below this
MAX_DEVICES_PER_NODE = 1024


def parse_node(ctx: ObjectContext, obj: dict[str, Any]) -> tuple[Node, int]:
    """A Node and its device-plugin GPU count (``nvidia.com/gpu`` allocatable)."""
    meta, spec = obj.get("metadata") or {}, ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    allocatable = status.get("allocatable", status.get("capacity"))
    field_name = "status.allocatable" if "allocatable" in status else "status.capacity"
    resources, gpus = node_allocatable(ctx, allocatable, field_name)
    node = Node(
        name=ctx.text(meta.get("name"), "metadata.name", required=True),
        labels=ctx.labels(meta.get("labels"), "metadata.labels"),
        taints=node_taints(ctx, spec.get("taints"), "spec.taints"),
        unschedulable=ctx.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        ready=_ready(ctx, status.get("conditions")),
        allocatable=resources,
        created=podstatus.creation_time(ctx, meta),
        kubelet_version=ctx.text(
            ctx.mapping(status.get("nodeInfo"), "status.nodeInfo").get("kubeletVersion"),
            "status.nodeInfo.kubeletVersion",
        ),
    )
    return node, gpus


def node_allocatable(ctx: ObjectContext, raw: Any, field_name: str) -> tuple[Resources, int]:
    """Allocatable resources, each >= 0, and at most ``MAX_DEVICES_PER_NODE`` of any
    extended resource (a device count): a larger figure is no real node's, and
    modelling it device by device would take unbounded time and memory."""
    values = {}
    for key, value in ctx.mapping(raw, field_name).items():
        quantity = values[str(key)] = ctx.quantity(value, f"{field_name}.{key}")
        if quantity < 0:
            ctx.fail(f"{field_name}.{key}", f"must be greater than or equal to 0, got {value}")
        if is_integer_resource(str(key)) and quantity > MAX_DEVICES_PER_NODE:
            reason = f"{value} devices on one node: more than {MAX_DEVICES_PER_NODE} is not a node"
            ctx.fail(f"{field_name}.{key}", reason)
    extended = {k: whole_count(v) for k, v in values.items() if k not in CORE_RESOURCES}
    resources = Resources(
        cpu_milli=cpu_milli(values.get("cpu", 0)),
        memory_bytes=memory_bytes(values.get("memory", 0)),
        pods=whole_count(values.get("pods", 0)),
        extended=extended,
    )
    gpus = whole_count(values.get(GPU_RESOURCE, 0))
    return resources, gpus or whole_count(values.get(SHARED_GPU_RESOURCE, 0))  # renamed replicas


def node_taints(ctx: ObjectContext, raw: Any, field_name: str) -> tuple[Taint, ...]:
    taints = []
    for path, item in ctx.items(raw, field_name):
        effect = ctx.text(item.get("effect"), f"{path}.effect", required=True)
        if effect not in TAINT_EFFECTS:
            ctx.fail(f"{path}.effect", f"must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
        key = ctx.text(item.get("key"), f"{path}.key", required=True)
        taints.append(Taint(key, ctx.text(item.get("value"), f"{path}.value"), effect))
    return tuple(taints)


def _ready(ctx: ObjectContext, raw: Any) -> bool:
    """Ready unless a Ready condition says otherwise (exports without status count as ready)."""
    for path, condition in ctx.items(raw, "status.conditions"):
        if condition.get("type") == "Ready":
            return ctx.text(condition.get("status"), f"{path}.status") == "True"
    return True


def pod_tolerations(ctx: ObjectContext, raw: Any) -> tuple[Toleration, ...]:
    out = []
    for path, item in ctx.items(raw, "spec.tolerations"):
        operator = ctx.text(item.get("operator"), f"{path}.operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            ctx.fail(f"{path}.operator", f"must be Equal or Exists, got {operator!r}")
        effect = ctx.text(item.get("effect"), f"{path}.effect")
        if effect and effect not in TAINT_EFFECTS:
            ctx.fail(f"{path}.effect", f"must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
        out.append(
            Toleration(
                key=ctx.text(item.get("key"), f"{path}.key"),
                operator=operator,
                value=ctx.text(item.get("value"), f"{path}.value"),
                effect=effect,
            )
        )
    return tuple(out)


def required_node_affinity(
    ctx: ObjectContext, raw: Any
) -> tuple[tuple[NodeSelectorTerm, ...], list[str]]:
    """Required node affinity terms (ORed). Preferred affinity does not filter: ignored."""
    affinity = ctx.mapping(raw, "spec.affinity")
    node_affinity = ctx.mapping(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
    base = f"spec.affinity.nodeAffinity.{REQUIRED_AFFINITY}"
    required = ctx.mapping(node_affinity.get(REQUIRED_AFFINITY), base)
    return node_selector_terms(ctx, required.get("nodeSelectorTerms"), f"{base}.nodeSelectorTerms")


def node_selector_terms(
    ctx: ObjectContext, raw: Any, field_name: str
) -> tuple[tuple[NodeSelectorTerm, ...], list[str]]:
    terms, unsupported = [], []
    for path, term in ctx.items(raw, field_name):
        if term.get("matchFields"):
            unsupported.append("node affinity matchFields not supported")
        requirements = tuple(
            node_requirement(ctx, req_path, req)
            for req_path, req in ctx.items(term.get("matchExpressions"), f"{path}.matchExpressions")
        )
        terms.append(NodeSelectorTerm(requirements))
    return tuple(terms), unsupported


def nodes_with_devices(
    nodes: list[tuple[Node, int]], slices: list[tuple[ObjectContext, dra.ParsedSlice]]
) -> tuple[Node, ...]:
    """Each node with its GPUs: its ResourceSlices' devices (and the counter sets they
    consume), else its device-plugin count and GFD labels."""
    by_node: dict[str, list[Any]] = {}
    counter_sets: dict[tuple[str, str], list[Any]] = {}
    current, incomplete = dra.current_slices(slices)
    for parsed in current:
        for counter in parsed.counter_sets:
            counter_sets.setdefault((parsed.driver, parsed.pool), []).append(counter)
        for item in parsed.devices:
            if item.node_name:
                by_node.setdefault(item.node_name, []).append((parsed, item.device))
    out = []
    for node, gpu_count in nodes:
        entries = by_node.get(node.name, [])
        devices = [device for _, device in entries]
        used = {c.counter_set for d in devices for c in d.consumes}
        sets = [
            counter
            for key in dict.fromkeys((p.driver, p.pool) for p, _ in entries)
            for counter in counter_sets.get(key, [])
            if counter.name in used
        ]
        node = with_gpus(node, gpu_count, devices, sets)
        pools = tuple(sorted({f"{p.driver}/{p.pool}" for p, _ in entries} & incomplete))
        out.append(replace(node, incomplete_pools=pools) if pools else node)
    return tuple(out)


def with_gpus(node: Node, gpu_count: int, devices: list[Any], counter_sets: list[Any]) -> Node:
    """DRA GPU devices win; without them, device-plugin allocatable + GFD labels."""
    gpus, placed = dra.dra_gpus(devices)
    if gpus:
        return replace(node, gpus=gpus, devices=placed, counter_sets=tuple(counter_sets))
    plugin_gpus, plugin_devices = dra.plugin_gpus(dict(node.labels), gpu_count)
    return replace(
        node,
        gpus=plugin_gpus,
        devices=tuple(placed) + plugin_devices,
        counter_sets=tuple(counter_sets),
    )


def node_with_plugin_gpus(node: Node, gpu_count: int) -> Node:
    return with_gpus(node, gpu_count, [], [])
