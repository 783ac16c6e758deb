"""Node groups discovered from the objects a cluster already runs.

No hand-written capacityweb.io NodeGroup is needed to get a first answer: the
groups an autoscaler can grow are read from what is there, and each records
where it was found (``NodeGroup.source``) so every page can say it.

::

    Node labels ─────────────┐  cloud.google.com/gke-nodepool, eks.amazonaws.com/nodegroup,
                             │  alpha.eksctl.io/nodegroup-name, kubernetes.azure.com/agentpool:
                             │  nodes sharing a pool = a group
    ConfigMap kube-system/   ├─► managed pools ──┐
    cluster-autoscaler-status┘  (min/max/target  │
      old text or YAML format    joined by name) ├─► template from a ready member,
    karpenter.sh NodePool ──► one group per      │   minus its DaemonSets' requests
      (+ instance catalogue)    eligible type ───┘
    capacityweb.io NodeGroup ─► overrides any field it sets (same name)
    price table ─► pricePerNodeHour by instance type / region, unless a NodeGroup sets it

Upstream behaviour followed, in the modules that read each source:
``topology.kube.autoscaler.status`` (cluster-autoscaler's status ConfigMap, both formats),
``topology.kube.core.daemons`` (a template as cluster-autoscaler builds it from a member, less
its DaemonSets' pods), ``topology.kube.karpenter`` (NodePools and the instance catalogue).
Here: pools from node labels, CA groups joined to them by name, and hand-written
capacityweb.io NodeGroups overriding what they set.

A CA group no labelled node belongs to (a pool with no node yet) is a group with no
member when a capacityweb.io NodeGroup it names gives the template (``_declared_pools``).

Not modelled, and said so in ``Snapshot.notices``: a CA group no labelled node
can be matched to and no NodeGroup templates (nothing to simulate it from), a Karpenter NodePool's
weight (capacityweb picks the cheapest valid option), spot prices, instance
types missing from the bundled catalogue, static NodePools.

Pure: no Django, no clock, no I/O here (the Karpenter catalogue is a bundled file).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from topology.kube.autoscaler.status import CaGroupStatus
from topology.kube.core.daemons import template_from_member
from topology.kube.fields import ObjectContext
from topology.kube.karpenter import (
    InstanceType,
    KarpenterPool,
    NodeClaimRecord,
    bundled_catalogue,
    karpenter_groups,
)
from topology.kube.providers.prices import INSTANCE_TYPE_LABEL, PriceTable, no_price_note
from topology.model.hardware import (
    AutoscalerRef,
    DaemonPod,
    ModelError,
    Node,
    NodeGroup,
    Pod,
)

CA_SOURCE = "cluster-autoscaler status ConfigMap"
PROJECT_SOURCE = "capacityweb.io NodeGroup"
PROJECT_TEMPLATE_SOURCE = "capacityweb.io NodeGroup template (no member yet)"
# label key → (pool kind, how pages name the source); first match wins per node
MANAGED_POOL_LABELS: tuple[tuple[str, str, str], ...] = (
    ("cloud.google.com/gke-nodepool", "gke", "GKE node pool label"),
    ("eks.amazonaws.com/nodegroup", "eks", "EKS node group label"),
    # eksctl labels every node group it creates; a self-managed one (an ASG, no EKS
    # managed node group) carries only this label (eksctl pkg/apis/eksctl.io/v1alpha5
    # NodeGroupNameLabel)
    ("alpha.eksctl.io/nodegroup-name", "eksctl", "eksctl node group label"),
    ("kubernetes.azure.com/agentpool", "aks", "AKS agent pool label"),
)


@dataclass(slots=True)
class Discovered:
    ca_groups: list[tuple[ObjectContext, CaGroupStatus]] = field(default_factory=list)
    karpenter_pools: list[tuple[ObjectContext, KarpenterPool]] = field(default_factory=list)
    node_claims: list[tuple[ObjectContext, NodeClaimRecord]] = field(default_factory=list)
    daemon_pods: list[DaemonPod] = field(default_factory=list)
    cloud_reservations: list[Any] = field(
        default_factory=list
    )  # cloud_reservations.CloudReservation
    notices: list[ModelError] = field(default_factory=list)  # found while parsing one object
    # Kueue AdmissionChecks: name → spec.controllerName (topology.kube.kueue.quotas)
    admission_checks: dict[str, str] = field(default_factory=dict)
    # their spec.parameters naming a ProvisioningRequestConfig, and each such config's
    # spec.provisioningClassName
    check_configs: dict[str, str] = field(default_factory=dict)
    provisioning_classes: dict[str, str] = field(default_factory=dict)


# --- assembly ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Found:
    """A group being discovered: its name, members and what each source said."""

    name: str
    selector: dict[str, str]
    members: list[Node]
    sources: list[str]
    autoscaler: AutoscalerRef | None = None
    min_size: int | None = None
    max_size: int | None = None
    declared: NodeGroup | None = None  # the NodeGroup templating a pool with no member yet
    notes: list[str] = field(default_factory=list)


def discover_node_groups(
    discovered: Discovered,
    nodes: Iterable[Node],
    prices: PriceTable,
    catalogue: tuple[InstanceType, ...] | None = None,
    pods: Iterable[Pod] = (),
    declared: Iterable[NodeGroup] = (),
) -> tuple[tuple[NodeGroup, ...], tuple[ModelError, ...]]:
    """Groups from node labels, the CA status and Karpenter NodePools; notices for the
    rest. ``pods``: the snapshot's pods (a template keeps its member's DaemonSet pods);
    ``declared``: capacityweb.io NodeGroups with a template, which give one to a CA
    group no node is a member of yet (``_declared_pools``)."""
    nodes = tuple(nodes)
    notices: list[ModelError] = list(discovered.notices)
    found = _label_pools(nodes)
    found.update(_declared_pools(discovered, found, declared))
    _join_ca_status(discovered, found, notices)
    bound: dict[str, list[Pod]] = {}
    for pod in pods:
        if pod.node_name is not None:
            bound.setdefault(pod.node_name, []).append(pod)
    groups = [
        _finished(f, discovered.daemon_pods, bound, prices)
        for f in found.values()
        if f.members or f.declared is not None
    ]
    for ctx, pool in discovered.karpenter_pools:
        groups += karpenter_groups(
            ctx,
            pool,
            nodes,
            discovered.daemon_pods,
            prices,
            catalogue or bundled_catalogue(),
            notices,
            discovered.node_claims,
        )
    return tuple(sorted((g for g in groups if g), key=lambda g: g.name)), tuple(notices)


def _label_pools(nodes: tuple[Node, ...]) -> dict[str, _Found]:
    found: dict[str, _Found] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        for key, pool_kind, source in MANAGED_POOL_LABELS:
            pool = node.labels.get(key)
            if not pool:
                continue
            entry = found.setdefault(
                pool,
                _Found(
                    name=pool,
                    selector={key: pool},
                    members=[],
                    sources=[source],
                    autoscaler=AutoscalerRef(kind=pool_kind, name=pool),
                ),
            )
            entry.members.append(node)
            break
    return found


def _declared_pools(
    discovered: Discovered, found: dict[str, _Found], declared: Iterable[NodeGroup]
) -> dict[str, _Found]:
    """A pool with no node yet (scaled to zero, or never grown): cluster-autoscaler lists
    its group and builds new nodes from the cloud's instance template (GKE: the MIG's,
    ``cloudprovider/gce/templates.go``), which no Kubernetes object shows. A declared
    NodeGroup named by the CA group (as ``_pool_named_in`` names a pool) stands for that
    template: the group is found with no members, and the CA status gives its bounds."""
    waiting = {
        g.name: _Found(g.name, dict(g.node_selector), [], [PROJECT_TEMPLATE_SOURCE], declared=g)
        for g in declared
        if g.name not in found
    }
    pools: dict[str, _Found] = {}
    for _ctx, status in discovered.ca_groups:
        entry = None if _pool_named_in(status.name, found) else _pool_named_in(status.name, waiting)
        if entry is None or entry.name in pools:
            continue
        pool_kind = _pool_kind_of_ca_name(status.name)
        entry.autoscaler = AutoscalerRef(kind=pool_kind, name=entry.name) if pool_kind else None
        pools[entry.name] = entry
    return pools


# the prefix each managed pool's CA group name carries (GKE: the MIG ``gke-<cluster>-
# <pool>-<hash>-grp``, EKS: the ASG ``eks-<nodegroup>-<uuid>``, AKS ``aks-<pool>-<id>-vmss``)
_CA_NAME_PREFIXES = (("gke-", "gke"), ("eks-", "eks"), ("aks-", "aks"))


def _pool_kind_of_ca_name(ca_name: str) -> str | None:
    last = ca_name.rsplit("/", 1)[-1]
    return next((kind for prefix, kind in _CA_NAME_PREFIXES if last.startswith(prefix)), None)


def _join_ca_status(
    discovered: Discovered, found: dict[str, _Found], notices: list[ModelError]
) -> None:
    """A CA group belongs to the managed pool whose name it contains as a whole
    ``-``/``/``-separated part (GKE ``gke-<cluster>-<pool>-<hash>-grp``, EKS
    ``eks-<nodegroup>-<uuid>``, AKS ``aks-<pool>-<id>-vmss``); the longest such pool
    name wins. No pool: no member to template it from, said as a notice."""
    for ctx, status in discovered.ca_groups:
        entry = _pool_named_in(status.name, found)
        if entry is None:
            notices.append(
                ModelError(
                    ctx.source,
                    ctx.object,
                    f"data.status: node group {status.name}",
                    "no node carries a managed node-pool label matching this name, so there "
                    "is no member to take a template from: not simulated (add a capacityweb.io "
                    "NodeGroup with a template to include it)",
                )
            )
            continue
        pool_ref = entry.autoscaler
        if pool_ref is not None and pool_ref.kind == "cluster-autoscaler":
            _add_zone_group(entry, status)
        else:
            entry.autoscaler = AutoscalerRef(
                kind="cluster-autoscaler",
                name=status.name,
                pool_kind=pool_ref.kind if pool_ref else None,
                pool=pool_ref.name if pool_ref else None,
                target_size=status.target_size,
            )
            entry.min_size, entry.max_size = status.min_size, status.max_size
            entry.sources.insert(0, CA_SOURCE)
        if status.backoff or status.scale_up == "Backoff":
            entry.notes.append(f"cluster-autoscaler scale-up in Backoff {status.backoff}".rstrip())


def _add_zone_group(entry: _Found, status: CaGroupStatus) -> None:
    """A second CA group of one pool (a GKE regional pool has one instance group per
    zone, each a CA node group with its own min/max): the pool's bounds are the sums."""
    ref = entry.autoscaler
    assert ref is not None
    entry.min_size = (entry.min_size or 0) + status.min_size
    entry.max_size = (entry.max_size or 0) + status.max_size
    entry.autoscaler = replace(ref, target_size=(ref.target_size or 0) + status.target_size)
    entry.notes.append(
        f"also cluster-autoscaler group {status.name}: one pool, several CA groups (one per "
        "zone); min/max/target summed, where new nodes land per zone is CA's choice"
    )


def _pool_named_in(ca_name: str, found: dict[str, _Found]) -> _Found | None:
    last = ca_name.rsplit("/", 1)[-1]
    named = [e for pool, e in found.items() if re.search(rf"(^|-){re.escape(pool)}(-|$)", last)]
    return max(named, key=lambda e: len(e.name), default=None)


def _finished(
    entry: _Found,
    daemon_pods: list[DaemonPod],
    bound: dict[str, list[Pod]],
    prices: PriceTable,
) -> NodeGroup:
    notes = list(entry.notes)
    if entry.declared is not None:
        template = entry.declared.template
        notes.append(f"no member yet: new nodes as the template of NodeGroup {entry.name}")
    else:
        ready = [n for n in entry.members if n.ready and not n.unschedulable]
        member = ready[0] if ready else entry.members[0]
        template = template_from_member(entry.name, member, bound.get(member.name, ()), daemon_pods)
        if not ready:
            notes.append(f"no ready member: template taken from {member.name}, which is not ready")
    size = len(entry.members)
    if entry.max_size is None:
        notes.append(
            "min/max size unknown (no cluster-autoscaler status names this pool): held at its "
            "current size; set minSize/maxSize in a capacityweb.io NodeGroup to let it grow"
        )
    price = prices.price_for_labels(template.labels)
    if price is None:
        notes.append(no_price_note(template.labels))
    return NodeGroup(
        name=entry.name,
        node_selector=dict(entry.selector),
        min_size=entry.min_size if entry.min_size is not None else size,
        max_size=entry.max_size if entry.max_size is not None else size,
        price_per_node_hour=price.per_node_hour if price else 0.0,
        template=replace(template, price_per_node_hour=price.per_node_hour if price else 0.0),
        current_size=size,
        source=" + ".join(entry.sources),
        autoscaler=entry.autoscaler,
        price_source=price.source if price else None,
        price_known=price is not None,
        notes=tuple(notes),
    )


# --- hand-written groups win ---------------------------------------------------------------


def merge_project_groups(
    discovered: tuple[NodeGroup, ...],
    project: Iterable[tuple[NodeGroup, frozenset[str]]],
) -> tuple[NodeGroup, ...]:
    """A capacityweb.io NodeGroup named like a discovered group overrides each field
    it sets (``given``: its spec keys); one naming no discovered group stands alone."""
    by_name = {g.name: g for g in discovered}
    for group, given in project:
        base = by_name.get(group.name)
        if base is None:
            by_name[group.name] = replace(group, source=group.source or PROJECT_SOURCE)
            continue
        by_name[group.name] = _overridden(base, group, given)
    return tuple(sorted(by_name.values(), key=lambda g: g.name))


_OVERRIDES = {
    "nodeSelector": ("node_selector",),
    "minSize": ("min_size",),
    "maxSize": ("max_size",),
    "pricePerNodeHour": ("price_per_node_hour",),
    "template": ("template",),
    "placement": ("placements",),
    "provisioningDelaySeconds": ("provisioning_delay_seconds",),
    "draScaleFromZero": ("dra_scale_from_zero",),
}


def _overridden(base: NodeGroup, group: NodeGroup, given: frozenset[str]) -> NodeGroup:
    changes: dict[str, Any] = {}
    for key, attributes in _OVERRIDES.items():
        if key in given:
            changes.update({a: getattr(group, a) for a in attributes})
    merged = replace(base, **changes, source=f"{base.source} + {PROJECT_SOURCE} overrides")
    if "pricePerNodeHour" in given:
        merged = replace(
            merged,
            price_source=f"{PROJECT_SOURCE} {group.name} pricePerNodeHour",
            price_known=True,
            notes=tuple(n for n in merged.notes if not n.startswith("price unknown")),
        )
    if "maxSize" in given:
        merged = replace(merged, notes=tuple(n for n in merged.notes if "size unknown" not in n))
    return replace(
        merged,
        template=replace(
            merged.template, node_group=merged.name, price_per_node_hour=merged.price_per_node_hour
        ),
    )


def gpus_by_instance_type(groups: Iterable[NodeGroup]) -> dict[str, int]:
    """GPUs of one node per instance type: the bundled catalogue, then the groups' templates."""
    counts = {t.name: t.gpus for t in bundled_catalogue()}
    for group in groups:
        kind = group.template.labels.get(INSTANCE_TYPE_LABEL)
        if kind and group.template.gpu_count:
            counts[kind] = group.template.gpu_count
    return counts
