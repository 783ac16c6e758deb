"""The project's own kinds (capacityweb.io): ``Topology``, ``NodeGroup`` and
``Reservation`` → the model, checked against each other at assembly.

Pure: no Django, no I/O. ``topology.kube.parse`` dispatches the kinds here (handlers take
its first-pass collection). A hand-written NodeGroup overrides a discovered group of
the same name field by field (``topology.kube.discovery.merge_project_groups``); a
Reservation naming an unknown group is an error.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from topology.kube import discovery
from topology.kube.core import levels as topology_k8s
from topology.kube.core.daemons import less_daemons
from topology.kube.core.nodes import node_allocatable, node_taints, with_gpus
from topology.kube.dra import slices as dra
from topology.kube.fields import ObjectContext
from topology.kube.names import dns1123_label_problem, dns1123_subdomain_problem
from topology.model.hardware import (
    CounterSet,
    Device,
    ModelError,
    Node,
    NodeGroup,
    NodePlacement,
    Reservation,
    ReservedNodeGroupCapacity,
)

PROJECT_GROUP = "capacityweb.io"
# A price per GPU- or node-hour above this is a typo (the dearest GPU-hour costs tens of
# dollars), and past it the figures built on it (x GPUs x hours, summed) could overflow to
# infinity, which no JSON column or response holds: 1e308 stopped every later evaluation
# of the cluster from being stored.
MAX_PRICE_PER_HOUR = 1_000_000.0
# A node group's size beyond this is a typo too: Kubernetes supports clusters of up to
# 5,000 nodes (the scalability thresholds), the largest managed offerings some tens of
# thousands; the plans simulate up to maxSize new nodes, so 10^9 was minutes of CPU.
MAX_NODE_GROUP_SIZE = 100_000
# cluster-autoscaler gives up on a node after --max-node-provision-time (15 minutes by
# default); a week is past any provisioning delay a real group has.
MAX_PROVISIONING_DELAY_SECONDS = 7 * 24 * 3600.0


def topology(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """The project's Topology; Kueue/KAI/Volcano ones are topology_k8s's (and win)."""
    found = topology_k8s.level_topology(ctx, ctx.mapping(obj.get("spec"), "spec"))
    if collected.topology is not None:
        ctx.fail("kind", "only one capacityweb.io Topology per cluster")
    collected.topology = found


def node_group(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    name = ctx.object.partition("/")[2]
    size = {"minimum": 0, "maximum": MAX_NODE_GROUP_SIZE}
    min_size = ctx.integer(spec.get("minSize"), "spec.minSize", **size)
    max_size = ctx.integer(spec.get("maxSize"), "spec.maxSize", **size)
    if max_size < min_size:
        ctx.fail("spec.maxSize", f"must be >= minSize ({min_size}), got {max_size}")
    # no pricePerNodeHour: price unknown (0 in the plans' arithmetic, never a negative
    # figure that would make the group look cheaper than free)
    price = ctx.number(
        spec.get("pricePerNodeHour"), "spec.pricePerNodeHour", minimum=0, maximum=MAX_PRICE_PER_HOUR
    )
    selector = ctx.labels(spec.get("nodeSelector"), "spec.nodeSelector")
    given = frozenset(k for k in spec if spec[k] is not None)
    group = NodeGroup(
        name=name,
        node_selector=selector,
        min_size=min_size,
        max_size=max_size,
        price_per_node_hour=price,
        template=_template_node(ctx, name, selector, price, spec.get("template"))
        if "template" in given
        else Node(name=f"{name}-template", node_group=name),
        placements=_placements(ctx, spec.get("placement")),
        provisioning_delay_seconds=ctx.number(
            spec.get("provisioningDelaySeconds"),
            "spec.provisioningDelaySeconds",
            maximum=MAX_PROVISIONING_DELAY_SECONDS,
        ),
        price_known=spec.get("pricePerNodeHour") is not None,
        dra_scale_from_zero=spec.get("draScaleFromZero") is None
        or ctx.boolean(spec.get("draScaleFromZero"), "spec.draScaleFromZero"),
    )
    collected.node_groups.append((ctx, group, given))


def _template_node(
    ctx: ObjectContext, group: str, selector: dict[str, str], price: float, raw: Any
) -> Node:
    """What a new node looks like; GPUs built the same way as for real nodes."""
    template = ctx.mapping(raw, "spec.template")
    if not template:
        ctx.fail("spec.template", "required")
    name = f"{group}-template"
    labels = {**selector, **ctx.labels(template.get("labels"), "spec.template.labels")}
    resources, gpu_count = node_allocatable(
        ctx, template.get("allocatable"), "spec.template.allocatable"
    )
    node = Node(
        name=name,
        labels=labels,
        taints=node_taints(ctx, template.get("taints"), "spec.template.taints"),
        allocatable=resources,
        node_group=group,
        price_per_node_hour=price,
    )
    devices: list[Device] = []
    counter_sets: list[CounterSet] = []
    for path, item in ctx.items(template.get("resourceSlices"), "spec.template.resourceSlices"):
        spec = ctx.mapping(item.get("spec"), f"{path}.spec") if "spec" in item else item
        parsed = dra.parse_slice(ObjectContext(ctx.source, ctx.object), spec)
        devices += [d.device for d in parsed.devices]
        counter_sets += parsed.counter_sets
    return with_gpus(node, gpu_count, devices, counter_sets)


def _placements(ctx: ObjectContext, raw: Any) -> tuple[NodePlacement, ...]:
    return tuple(
        NodePlacement(
            labels=ctx.labels(item.get("labels"), f"{path}.labels"),
            max_new_nodes=ctx.integer(
                item.get("maxNewNodes"),
                f"{path}.maxNewNodes",
                minimum=0,
                maximum=MAX_NODE_GROUP_SIZE,
            ),
        )
        for path, item in ctx.items(raw, "spec.placement")
    )


def reservation(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    name = ctx.object.partition("/")[2]
    problem = dns1123_subdomain_problem(name)
    if problem is not None:  # an object name, as the API server requires of one
        ctx.fail("metadata.name", f"{name!r}: {problem}")
    spec = ctx.mapping(obj.get("spec"), "spec")
    owner = ctx.mapping(spec.get("owner"), "spec.owner")
    namespaces = tuple(
        _namespace(ctx, n, f"spec.owner.namespaces[{i}]")
        for i, n in enumerate(ctx.sequence(owner.get("namespaces"), "spec.owner.namespaces"))
    )
    if not namespaces:
        ctx.fail("spec.owner.namespaces", "required: who may use the reservation")
    chosen = [k for k in ("nodeNames", "nodeSelector", "nodeGroup") if spec.get(k)]
    if len(chosen) != 1:
        ctx.fail(
            "spec",
            f"needs exactly one of nodeNames, nodeSelector, nodeGroup; got {chosen or 'none'}",
        )
    start = ctx.timestamp(spec.get("start"), "spec.start")
    end = ctx.timestamp(spec.get("end"), "spec.end")
    if start and end and not start < end:
        ctx.fail("spec.end", "must be after spec.start")
    found = Reservation(
        name=name,
        owner_namespaces=namespaces,
        node_names=tuple(
            ctx.text(n, f"spec.nodeNames[{i}]", required=True)
            for i, n in enumerate(ctx.sequence(spec.get("nodeNames"), "spec.nodeNames"))
        ),
        node_selector=ctx.labels(spec.get("nodeSelector"), "spec.nodeSelector"),
        node_group=_reserved_group(ctx, spec.get("nodeGroup")),
        start=start,
        end=end,
        price_per_gpu_hour=ctx.number(
            spec.get("pricePerGpuHour"), "spec.pricePerGpuHour", maximum=MAX_PRICE_PER_HOUR
        ),
    )
    collected.reservations.append((ctx, found))


def _namespace(ctx: ObjectContext, raw: Any, field: str) -> str:
    """A namespace name: a DNS-1123 label, as the API server requires of one."""
    name = ctx.text(raw, field, required=True)
    problem = dns1123_label_problem(name)
    if problem is not None:
        ctx.fail(field, f"{name!r}: not a namespace name: {problem}")
    return name


def _reserved_group(ctx: ObjectContext, raw: Any) -> ReservedNodeGroupCapacity | None:
    group = ctx.mapping(raw, "spec.nodeGroup")
    if not group:
        return None
    if group.get("count") is None:
        ctx.fail("spec.nodeGroup.count", "required")
    return ReservedNodeGroupCapacity(
        node_group=ctx.text(group.get("name"), "spec.nodeGroup.name", required=True),
        count=ctx.integer(group.get("count"), "spec.nodeGroup.count", minimum=1),
    )


def checked_node_groups(collected: Any, found: tuple[NodeGroup, ...]) -> tuple[NodeGroup, ...]:
    """Hand-written groups over discovered ones; one without a template needs a
    discovered group of its name to take the template from.

    A declared template is what the cloud provider would template a new node from
    (cluster-autoscaler ``simulator/node_info_utils.go``
    ``SanitizedTemplateNodeInfoFromNodeGroup``): its allocatable less the snapshot's
    DaemonSets that would run on it (``topology.kube.core.daemons.less_daemons``), for every
    consumer of the group."""
    names = {g.name for g in found}
    project = []
    for ctx, group, given in collected.node_groups:
        if "template" not in given and group.name not in names:
            collected.errors.append(ModelError(ctx.source, ctx.object, "spec.template", "required"))
            continue
        if "template" in given:
            daemons = collected.discovered.daemon_pods
            template = replace(group.template, allocatable=less_daemons(group.template, daemons))
            group = replace(group, template=template)
        project.append((group, given))
    return discovery.merge_project_groups(found, project)


def checked_reservations(
    collected: Any, node_groups: tuple[NodeGroup, ...]
) -> tuple[Reservation, ...]:
    known = {g.name for g in node_groups}
    kept = []
    for ctx, found in collected.reservations:
        if found.node_group and found.node_group.node_group not in known:
            collected.errors.append(
                ModelError(
                    ctx.source,
                    ctx.object,
                    "spec.nodeGroup.name",
                    f"no NodeGroup named {found.node_group.node_group!r}",
                )
            )
            continue
        kept.append(found)
    return tuple(kept)
