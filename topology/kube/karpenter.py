"""Karpenter NodePools → one discovered node group per instance type of the bundled
catalogue (``topology/data/instance_types.yaml``) that the pool's requirements allow.

Upstream behaviour followed: kubernetes-sigs/karpenter ``pkg/apis/v1/nodepool.go``:
``spec.template`` (labels, taints, requirements), ``spec.limits`` (counted against the
capacity of the pool's nodes), ``spec.weight``, ``spec.replicas`` (static pools, not
scaled for pending pods). The weight travels with each group for the ``karpenter``
autoscaler profile (the joint plan picks the cheapest valid option). Not modelled,
and said so as notices: spot prices, each instance type (or family) a NodePool names
that the catalogue lacks, static NodePools. In-flight NodeClaims (asked for, not
registered yet) are upcoming nodes of their NodePool's group of that type: its target
size, counted against the pool's limits, never bought twice.

Pure: no Django; reads only its bundled catalogue. ``topology.kube.parse`` dispatches
karpenter.sh NodePools here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from topology.kube.autoscaler.events import node_claim_events
from topology.kube.core.daemons import less_daemons
from topology.kube.core.nodes import (
    node_taints,
    node_with_plugin_gpus,
)
from topology.kube.fields import ObjectContext, node_requirement
from topology.kube.providers.prices import INSTANCE_TYPE_LABEL, PriceTable, no_price_note
from topology.model.hardware import (
    AutoscalerRef,
    DaemonPod,
    LabelRequirement,
    ModelError,
    Node,
    NodeGroup,
    PoolLimit,
    Resources,
    Taint,
)
from topology.model.quantity import cpu_milli, memory_bytes, parse_quantity, whole_count

CATALOGUE_FILE = Path(__file__).resolve().parents[1] / "data" / "instance_types.yaml"
KARPENTER_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
# a NodePool without limits can grow without bound; the model needs a number
UNBOUNDED_NEW_NODES = 1000
KARPENTER_VM_MEMORY_OVERHEAD = Fraction(75, 1000)  # karpenter-provider-aws default


@dataclass(frozen=True, slots=True)
class KarpenterPool:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    requirements: tuple[LabelRequirement, ...]
    limits: Mapping[str, Fraction]
    weight: int | None
    replicas: int | None


def karpenter_node_pool(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    template = ctx.mapping(spec.get("template"), "spec.template")
    meta = ctx.mapping(template.get("metadata"), "spec.template.metadata")
    tspec = ctx.mapping(template.get("spec"), "spec.template.spec")
    path = "spec.template.spec.requirements"
    requirements = tuple(
        node_requirement(ctx, item_path, item)
        for item_path, item in ctx.items(tspec.get("requirements"), path)
    )
    limits = {
        str(key): ctx.quantity(value, f"spec.limits.{key}")
        for key, value in ctx.mapping(spec.get("limits"), "spec.limits").items()
    }
    pool = KarpenterPool(
        name=ctx.object.partition("/")[2],
        labels=ctx.labels(meta.get("labels"), "spec.template.metadata.labels"),
        taints=node_taints(ctx, tspec.get("taints"), "spec.template.spec.taints"),
        requirements=requirements,
        limits=limits,
        weight=ctx.integer(spec.get("weight"), "spec.weight") if "weight" in spec else None,
        replicas=(
            ctx.integer(spec.get("replicas"), "spec.replicas", minimum=0)
            if "replicas" in spec
            else None
        ),
    )
    collected.discovered.karpenter_pools.append((ctx, pool))


# --- NodeClaims: nodes Karpenter has asked for ------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeClaimRecord:
    """A karpenter.sh NodeClaim (kubernetes-sigs/karpenter ``pkg/apis/v1/nodeclaim.go``):
    its NodePool (label ``karpenter.sh/nodepool``), the instance type once launched
    (label ``node.kubernetes.io/instance-type``, or a single-valued requirement on it),
    and the Node it registered as (``status.nodeName``; None: not registered yet)."""

    name: str
    pool: str
    instance_type: str | None
    node_name: str | None


def karpenter_node_claim(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    labels = ctx.labels(meta.get("labels"), "metadata.labels")
    collected.autoscaler_events.extend(node_claim_events(ctx, obj, labels.get(KARPENTER_LABEL, "")))
    if meta.get("deletionTimestamp"):
        return  # being deleted: no node to wait for
    spec = ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    kind = labels.get(INSTANCE_TYPE_LABEL) or _single_type(ctx, spec)
    claim = NodeClaimRecord(
        name=ctx.object.rpartition("/")[2],
        pool=labels.get(KARPENTER_LABEL, ""),
        instance_type=kind,
        node_name=ctx.text(status.get("nodeName"), "status.nodeName") or None,
    )
    collected.discovered.node_claims.append((ctx, claim))


def _single_type(ctx: ObjectContext, spec: dict[str, Any]) -> str | None:
    for path, item in ctx.items(spec.get("requirements"), "spec.requirements"):
        requirement = node_requirement(ctx, path, item)
        single = requirement.operator == "In" and len(requirement.values) == 1
        if requirement.key == INSTANCE_TYPE_LABEL and single:
            return str(requirement.values[0])
    return None


def in_flight(
    claims: list[tuple[ObjectContext, NodeClaimRecord]],
    pool: str,
    nodes: tuple[Node, ...],
    notices: list[ModelError],
) -> dict[str, int]:
    """In-flight NodeClaims of ``pool`` per instance type: asked for, no Node registered
    yet (Karpenter's cluster state counts them as nodes already: ``pkg/controllers/state``
    ``StateNode`` of a NodeClaim without its Node). One whose type is not chosen yet is
    said and counted nowhere."""
    registered = {n.name for n in nodes}
    counts: dict[str, int] = {}
    for ctx, claim in claims:
        if claim.pool != pool or (claim.node_name and claim.node_name in registered):
            continue
        if claim.instance_type is None:
            notices.append(
                ModelError(
                    ctx.source,
                    ctx.object,
                    "metadata.labels",
                    f"in-flight NodeClaim of NodePool {pool} whose instance type is not "
                    "chosen yet: not counted as an upcoming node of any of its groups",
                )
            )
            continue
        counts[claim.instance_type] = counts.get(claim.instance_type, 0) + 1
    return counts


# --- the instance-type catalogue (Karpenter) -------------------------------------------------


@dataclass(frozen=True, slots=True)
class InstanceType:
    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, Fraction]

    @property
    def gpus(self) -> int:
        return whole_count(self.allocatable.get("nvidia.com/gpu", Fraction(0)))

    def capacity(self, resource: str) -> Fraction:
        """What Karpenter counts against ``spec.limits``: the node's capacity (vCPUs, memory
        after the VM overhead, GPUs, one node)."""
        if resource == "nodes":
            return Fraction(1)
        if resource == "cpu":
            return Fraction(int(self.labels["karpenter.k8s.aws/instance-cpu"]))
        if resource == "memory":
            mib = int(self.labels["karpenter.k8s.aws/instance-memory"])
            overhead = -(-mib * KARPENTER_VM_MEMORY_OVERHEAD.numerator // 1000)  # ceil
            return Fraction((mib - overhead) * 2**20)
        return self.allocatable.get(resource, Fraction(0))


@cache
def bundled_catalogue() -> tuple[InstanceType, ...]:
    raw = yaml.safe_load(CATALOGUE_FILE.read_text(encoding="utf-8"))
    return tuple(
        InstanceType(
            name=name,
            labels={str(k): str(v) for k, v in entry["labels"].items()},
            allocatable={str(k): parse_quantity(v) for k, v in entry["allocatable"].items()},
        )
        for name, entry in sorted(raw["instanceTypes"].items())
    )


# --- Karpenter NodePools --------------------------------------------------------------------


def karpenter_groups(
    ctx: ObjectContext,
    pool: KarpenterPool,
    nodes: tuple[Node, ...],
    daemon_pods: list[DaemonPod],
    prices: PriceTable,
    catalogue: tuple[InstanceType, ...],
    notices: list[ModelError],
    claims: list[tuple[ObjectContext, NodeClaimRecord]] | None = None,
) -> list[NodeGroup]:
    """One group per catalogue instance type the NodePool's requirements allow; the
    pool's limits bound the new nodes of each (what remains of the limit after the
    pool's current nodes, divided by one node's capacity)."""

    def notice(field_name: str, reason: str) -> None:
        notices.append(ModelError(ctx.source, ctx.object, field_name, reason))

    claims = claims or []

    if pool.replicas is not None:
        notice(
            "spec.replicas",
            f"static NodePool ({pool.replicas} nodes): Karpenter keeps that many nodes and "
            "does not add any for pending pods; not a group to scale",
        )
        return []
    if pool.weight is not None:
        notice(
            "spec.weight",
            f"weight {pool.weight}: the karpenter profile tries higher-weight NodePools "
            "first, as Karpenter does; the joint plan picks the cheapest valid option",
        )
    spot_only = _allows(pool, CAPACITY_TYPE_LABEL, "spot") and not _allows(
        pool, CAPACITY_TYPE_LABEL, "on-demand"
    )
    if spot_only:
        notice(
            "spec.template.spec.requirements",
            "spot capacity only: the price table holds on-demand prices, spot is not priced",
        )
    missing = missing_types(pool, catalogue)
    if missing:
        notice(
            "spec.template.spec.requirements",
            "allows instance types the bundled catalogue (topology/data/instance_types.yaml) "
            f"lacks: {', '.join(missing)}: Karpenter may launch them, the model cannot",
        )
    eligible = [t for t in catalogue if _eligible(pool, t)]
    if not eligible:
        notice(
            "spec.template.spec.requirements",
            "no instance type of the bundled catalogue (topology/data/instance_types.yaml) "
            "satisfies these requirements: not simulated",
        )
        return []
    members = [n for n in nodes if n.labels.get(KARPENTER_LABEL) == pool.name]
    coming = in_flight(claims, pool.name, nodes, notices)
    room = _limit_room(pool, members, catalogue, coming)
    groups = []
    general = general_purpose_allowed(pool)
    for kind in eligible:
        group = _karpenter_group(pool, kind, members, room, daemon_pods, prices, spot_only)
        if general:
            note = f"{BEYOND_CATALOGUE} ({', '.join(general)} families)"
            group = replace(group, notes=(*group.notes, note))
        if coming.get(kind.name):
            group = _with_upcoming(group, coming[kind.name])
        groups.append(group)
    return groups


def _with_upcoming(group: NodeGroup, count: int) -> NodeGroup:
    """In-flight NodeClaims of the group's type: its target size (``groups.upcoming_nodes``
    simulates them as template copies, never bought twice), said in its notes."""
    assert group.autoscaler is not None
    return replace(
        group,
        max_size=group.max_size + count,
        autoscaler=replace(group.autoscaler, target_size=group.current_size + count),
        notes=(*group.notes, f"{count} in-flight NodeClaim(s): upcoming nodes, not bought again"),
    )


FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
CATEGORY_LABEL = "karpenter.k8s.aws/instance-category"
# the general-purpose families of Karpenter's AWS provider, which the bundled catalogue
# (NVIDIA GPU types) lacks, probed with labels one of their types carries: category,
# family, type; no karpenter.k8s.aws/instance-gpu-* label (a type without GPUs has none)
GENERAL_PURPOSE = (("c", "c7i"), ("m", "m7i"), ("r", "r7i"))
PROBED_KEYS = frozenset(
    {
        CATEGORY_LABEL,
        FAMILY_LABEL,
        "node.kubernetes.io/instance-type",
        "karpenter.k8s.aws/instance-gpu-count",
        "karpenter.k8s.aws/instance-gpu-name",
        "karpenter.k8s.aws/instance-gpu-manufacturer",
        "karpenter.k8s.aws/instance-gpu-memory",
    }
)
BEYOND_CATALOGUE = (
    "the NodePool also allows general-purpose instance types the bundled catalogue "
    "lacks, which Karpenter launches for pods they fit when cheaper"
)


def general_purpose_allowed(pool: KarpenterPool) -> list[str]:
    """The general-purpose categories (c, m, r) whose types the pool's requirements on
    instance labels allow: Karpenter may launch them (the cheapest type that fits,
    ``pkg/controllers/provisioning/scheduling``), the catalogue cannot."""
    allowed = []
    for category, family in GENERAL_PURPOSE:
        labels = {
            CATEGORY_LABEL: category,
            FAMILY_LABEL: family,
            "node.kubernetes.io/instance-type": f"{family}.2xlarge",
        }
        if all(r.matches(labels) for r in pool.requirements if r.key in PROBED_KEYS):
            allowed.append(category)
    return allowed


def missing_types(pool: KarpenterPool, catalogue: tuple[InstanceType, ...]) -> list[str]:
    """The instance types (and families) the pool names with ``In`` that no catalogue
    entry has: each said, never silently left out."""
    names = {t.name for t in catalogue}
    families = {t.labels.get(FAMILY_LABEL) for t in catalogue}
    missing: list[str] = []
    for requirement in pool.requirements:
        if requirement.operator != "In":
            continue
        if requirement.key == INSTANCE_TYPE_LABEL:
            missing += [str(v) for v in requirement.values if v not in names]
        elif requirement.key == FAMILY_LABEL:
            missing += [f"family {v}" for v in requirement.values if v not in families]
    return sorted(dict.fromkeys(missing))


def _allows(pool: KarpenterPool, key: str, value: str) -> bool:
    return all(r.matches({key: value}) for r in pool.requirements if r.key == key)


def _eligible(pool: KarpenterPool, kind: InstanceType) -> bool:
    """Requirements on a label the catalogue knows must match it; the others (zone,
    capacity type, custom labels) constrain the offering, not the type."""
    return all(r.matches(kind.labels) for r in pool.requirements if r.key in kind.labels)


def _limit_room(
    pool: KarpenterPool,
    members: list[Node],
    catalogue: tuple[InstanceType, ...],
    coming: dict[str, int],
) -> dict[str, Fraction]:
    """What the pool's limits leave after its nodes and its in-flight NodeClaims (both
    count against ``spec.limits``: the NodePool's ``status.resources``)."""
    by_name = {t.name: t for t in catalogue}
    room = dict(pool.limits)
    for node in members:
        kind = by_name.get(node.labels.get(INSTANCE_TYPE_LABEL, ""))
        for resource in room:
            used = kind.capacity(resource) if kind else _node_capacity(node, resource)
            room[resource] -= used
    for name, count in coming.items():
        kind = by_name.get(name)
        for resource in room:
            room[resource] -= count * kind.capacity(resource) if kind else 0
    return room


def _node_capacity(node: Node, resource: str) -> Fraction:
    if resource == "nodes":
        return Fraction(1)
    if resource == "cpu":
        return Fraction(node.allocatable.cpu_milli, 1000)
    if resource == "memory":
        return Fraction(node.allocatable.memory_bytes)
    if resource == "nvidia.com/gpu":
        return Fraction(node.gpu_count)
    return Fraction(node.allocatable.extended.get(resource, 0))


def _karpenter_group(
    pool: KarpenterPool,
    kind: InstanceType,
    members: list[Node],
    room: Mapping[str, Fraction],
    daemon_pods: list[DaemonPod],
    prices: PriceTable,
    spot_only: bool,
) -> NodeGroup:
    name = f"{pool.name}-{kind.name}"
    single = {
        r.key: r.values[0] for r in pool.requirements if r.operator == "In" and len(r.values) == 1
    }
    labels = {**single, **kind.labels, **pool.labels, KARPENTER_LABEL: pool.name}
    allocatable = {k: v for k, v in kind.allocatable.items()}
    resources = Resources(
        cpu_milli=cpu_milli(allocatable.pop("cpu", Fraction(0))),
        memory_bytes=memory_bytes(allocatable.pop("memory", Fraction(0))),
        pods=whole_count(allocatable.pop("pods", Fraction(0))),
        extended={k: whole_count(v) for k, v in allocatable.items() if k != "nvidia.com/gpu"},
    )
    bare = Node(name=f"{name}-template", labels=labels, taints=pool.taints, allocatable=resources)
    template = node_with_plugin_gpus(bare, kind.gpus)
    template = replace(template, allocatable=less_daemons(template, daemon_pods), node_group=name)
    size = sum(1 for n in members if n.labels.get(INSTANCE_TYPE_LABEL) == kind.name)
    new_nodes = min(
        (int(left // kind.capacity(r)) for r, left in room.items() if kind.capacity(r) > 0),
        default=UNBOUNDED_NEW_NODES,
    )
    notes = []
    if not room:
        notes.append(f"no spec.limits: up to {UNBOUNDED_NEW_NODES} new nodes assumed")
    price = None if spot_only else prices.price_for_labels(labels)
    if price is None and not spot_only:
        notes.append(no_price_note(labels))
    per_hour = price.per_node_hour if price else 0.0
    return NodeGroup(
        name=name,
        node_selector={KARPENTER_LABEL: pool.name, INSTANCE_TYPE_LABEL: kind.name},
        min_size=0,
        max_size=size + max(new_nodes, 0),
        price_per_node_hour=per_hour,
        template=replace(template, price_per_node_hour=per_hour),
        current_size=size,
        source=f"Karpenter NodePool {pool.name} + instance type {kind.name} (bundled catalogue)",
        autoscaler=AutoscalerRef(
            kind="karpenter",
            name=pool.name,
            weight=pool.weight,
            limits=tuple(
                PoolLimit(r, str(pool.limits[r]), str(left), str(kind.capacity(r)))
                for r, left in sorted(room.items())
            ),
        ),
        price_source=price.source if price else None,
        price_known=price is not None,
        notes=tuple(notes),
    )
