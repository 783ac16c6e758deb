"""Node groups discovered from the objects a cluster already runs.

No hand-written capacityweb.io NodeGroup is needed to get a first answer: the
groups an autoscaler can grow are read from what is there, and each records
where it was found (``NodeGroup.source``) so every page can say it.

::

    Node labels ─────────────┐  cloud.google.com/gke-nodepool, eks.amazonaws.com/nodegroup,
                             │  kubernetes.azure.com/agentpool: nodes sharing a pool = a group
    ConfigMap kube-system/   ├─► managed pools ──┐
    cluster-autoscaler-status┘  (min/max/target  │
      old text or YAML format    joined by name) ├─► template from a ready member,
    karpenter.sh NodePool ──► one group per      │   minus its DaemonSets' requests
      (+ instance catalogue)    eligible type ───┘
    capacityweb.io NodeGroup ─► overrides any field it sets (same name)
    price table ─► pricePerNodeHour by instance type / region, unless a NodeGroup sets it

Upstream behaviour followed:

- kubernetes/autoscaler ``cluster-autoscaler/clusterstate/api/types.go`` and
  ``clusterstate/utils/status.go``: the status ConfigMap's ``status`` key holds
  ``ClusterAutoscalerStatus`` as YAML (CA >= 1.30: ``nodeGroups[].name``,
  ``health.cloudProviderTarget``, ``minSize``, ``maxSize``,
  ``nodeCounts.registered``); before, the readable text of
  ``clusterstate.go`` ``buildHealthStatusNodeGroup``: ``Name: X`` then
  ``Health: Healthy (ready=1 ... registered=1 ... cloudProviderTarget=1
  (minSize=1, maxSize=5))``.
- ``cluster-autoscaler/processors/nodeinfosprovider/mixed_nodeinfos_processor.go``
  and ``simulator/node_info_utils.go``: a group's template is a ready,
  schedulable member (an unready one only as a last resort) with its hostname
  replaced, CA's own taints dropped, and the pods a fresh node would run
  already placed on it (``podsExpectedOnFreshNode``) — here: subtracted from
  its allocatable. Those pods are taken from the DaemonSet objects whose pods
  would run on the template (CA's ``--force-daemonsets`` path, and its path
  for a group without members); CA's default takes the DaemonSet and static
  pods running on the member, the same set whenever every such DaemonSet runs
  there (the parse keeps no pod owner to tell them apart; static pods are
  not counted).
- kubernetes-sigs/karpenter ``pkg/apis/v1/nodepool.go``: ``spec.template``
  (labels, taints, requirements), ``spec.limits`` (counted against the
  capacity of the pool's nodes), ``spec.weight``, ``spec.replicas`` (static
  pools, not scaled for pending pods).

Not modelled, and said so in ``Snapshot.notices``: a CA group no labelled node
can be matched to (no template to simulate it from), a Karpenter NodePool's
weight (capacityweb picks the cheapest valid option), spot prices, instance
types missing from the bundled catalogue, static NodePools.

Pure: no Django, no clock; reads only its own bundled data files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from topology.hardware import (
    HOSTNAME_LABEL,
    AutoscalerRef,
    LabelRequirement,
    ModelError,
    Node,
    NodeGroup,
    NodeSelectorTerm,
    Resources,
    Taint,
    Toleration,
)
from topology.kubefields import ObjectContext
from topology.prices import PriceTable
from topology.quantity import cpu_milli, memory_bytes, parse_quantity, whole_count

CATALOGUE_FILE = Path(__file__).resolve().parent / "data" / "instance_types.yaml"
CA_STATUS_NAMESPACE = "kube-system"
CA_STATUS_NAME = "cluster-autoscaler-status"
CA_SOURCE = "cluster-autoscaler status ConfigMap"
PROJECT_SOURCE = "capacityweb.io NodeGroup"
KARPENTER_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# label key → (pool kind, how pages name the source); first match wins per node
MANAGED_POOL_LABELS: tuple[tuple[str, str, str], ...] = (
    ("cloud.google.com/gke-nodepool", "gke", "GKE node pool label"),
    ("eks.amazonaws.com/nodegroup", "eks", "EKS node group label"),
    ("kubernetes.azure.com/agentpool", "aks", "AKS agent pool label"),
)
# taints cluster-autoscaler puts on nodes itself; dropped from a template (taints.SanitizeTaints)
CA_TAINTS = (
    "ToBeDeletedByClusterAutoscaler",
    "DeletionCandidateOfClusterAutoscaler",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
)
# a NodePool without limits can grow without bound; the model needs a number
UNBOUNDED_NEW_NODES = 1000
KARPENTER_VM_MEMORY_OVERHEAD = Fraction(75, 1000)  # karpenter-provider-aws default
_PAIR = re.compile(r"(\w+)=(\d+)")


# --- what the parse collects ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaGroupStatus:
    """One node group as cluster-autoscaler's status ConfigMap reports it."""

    name: str
    min_size: int
    max_size: int
    target_size: int
    registered: int
    ready: int
    scale_up: str = ""  # NoActivity | InProgress | Backoff ...
    backoff: str = ""  # "QUOTA_EXCEEDED: ..." when in Backoff


@dataclass(frozen=True, slots=True)
class KarpenterPool:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    requirements: tuple[LabelRequirement, ...]
    limits: Mapping[str, Fraction]
    weight: int | None
    replicas: int | None


@dataclass(frozen=True, slots=True)
class DaemonPod:
    """What one DaemonSet would run on a new node: its requests and where it goes."""

    name: str
    requests: Resources
    gpu_count: int
    node_selector: Mapping[str, str]
    affinity: tuple[NodeSelectorTerm, ...]
    tolerations: tuple[Toleration, ...]


@dataclass(slots=True)
class Discovered:
    ca_groups: list[tuple[ObjectContext, CaGroupStatus]] = field(default_factory=list)
    karpenter_pools: list[tuple[ObjectContext, KarpenterPool]] = field(default_factory=list)
    daemon_pods: list[DaemonPod] = field(default_factory=list)
    cloud_reservations: list[Any] = field(
        default_factory=list
    )  # cloud_reservations.CloudReservation
    notices: list[ModelError] = field(default_factory=list)  # found while parsing one object


# --- handlers (registered in topology.kube's kind dispatch) --------------------------


def config_map(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """Only cluster-autoscaler's status ConfigMap is read; every other one is counted ignored."""
    if ctx.object != f"ConfigMap/{CA_STATUS_NAMESPACE}/{CA_STATUS_NAME}":
        collected.ignored[f"ConfigMap ({obj.get('apiVersion', '')})"] += 1
        return
    data = ctx.mapping(obj.get("data"), "data")
    text = ctx.text(data.get("status"), "data.status", required=True)
    for status in parse_ca_status(ctx, text):
        collected.discovered.ca_groups.append((ctx, status))


def karpenter_node_pool(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    from topology import kube  # kube registers this handler: imported late, no cycle

    spec = ctx.mapping(obj.get("spec"), "spec")
    template = ctx.mapping(spec.get("template"), "spec.template")
    meta = ctx.mapping(template.get("metadata"), "spec.template.metadata")
    tspec = ctx.mapping(template.get("spec"), "spec.template.spec")
    path = "spec.template.spec.requirements"
    requirements = tuple(
        kube.node_requirement(ctx, item_path, item)
        for item_path, item in ctx.items(tspec.get("requirements"), path)
    )
    limits = {
        str(key): ctx.quantity(value, f"spec.limits.{key}")
        for key, value in ctx.mapping(spec.get("limits"), "spec.limits").items()
    }
    pool = KarpenterPool(
        name=ctx.object.partition("/")[2],
        labels=ctx.labels(meta.get("labels"), "spec.template.metadata.labels"),
        taints=kube.node_taints(ctx, tspec.get("taints"), "spec.template.spec.taints"),
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


def daemon_set(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """A DaemonSet's pod template: what every new node it selects will run."""
    from topology import kube  # kube registers this handler: imported late, no cycle

    spec = ctx.mapping(obj.get("spec"), "spec")
    template = ctx.mapping(spec.get("template"), "spec.template")
    pod_spec = ctx.mapping(template.get("spec"), "spec.template.spec")
    requests, gpu = kube.pod_spec_requests(ctx, pod_spec)
    affinity, _unsupported = kube.required_node_affinity(ctx, pod_spec.get("affinity"))
    collected.discovered.daemon_pods.append(
        DaemonPod(
            name=ctx.object,
            requests=requests,
            gpu_count=gpu.count if gpu else 0,
            node_selector=ctx.labels(
                pod_spec.get("nodeSelector"), "spec.template.spec.nodeSelector"
            ),
            affinity=affinity,
            tolerations=kube.pod_tolerations(ctx, pod_spec.get("tolerations")),
        )
    )


KWOK_API_VERSION = "kwok.cluster-autoscaler.x-k8s.io/v1alpha1"  # the reader's name for the file
KWOK_KIND = "KwokProviderConfig"


def config_objects(document: Any) -> list[dict[str, Any]] | None:
    """cluster-autoscaler's kwok provider config (``cloudprovider/kwok/kwok_types.go``
    ``KwokProviderConfig``: ``readNodesFrom``, ``nodegroups``; no ``kind``) as an object
    ``topology.kube`` dispatches on; None if the document is not one."""
    if (
        isinstance(document, dict)
        and "kind" not in document
        and "readNodesFrom" in document
        and isinstance(document.get("nodegroups"), dict)
    ):
        return [
            {
                "apiVersion": KWOK_API_VERSION,
                "kind": KWOK_KIND,
                "metadata": {"name": "kwok-provider-config"},
                "spec": document,
            }
        ]
    return None


def kwok_provider_config(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """The kwok provider adds fake nodes built from template nodes (a simulation tool):
    read, said, not modelled."""
    spec = ctx.mapping(obj.get("spec"), "spec")
    groups = ctx.mapping(spec.get("nodegroups"), "nodegroups")
    key = groups.get("fromNodeLabelKey") or groups.get("fromNodeAnnotationKey") or "?"
    collected.discovered.notices.append(
        ModelError(
            ctx.source,
            ctx.object,
            "nodegroups",
            f"cluster-autoscaler kwok provider (fake nodes, groups keyed by {key}, templates "
            f"from {ctx.text(spec.get('readNodesFrom'), 'readNodesFrom') or '?'}): not modelled",
        )
    )


# --- cluster-autoscaler status ConfigMap ------------------------------------------------


def parse_ca_status(ctx: ObjectContext, text: str) -> tuple[CaGroupStatus, ...]:
    """Node groups of the ``status`` key, in either format CA has written."""
    if text.lstrip().startswith("Cluster-autoscaler status at"):
        return _ca_text_status(text)
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        ctx.fail("data.status", "neither cluster-autoscaler's text status nor its YAML status")
    status = ctx.mapping(document, "data.status")
    groups = []
    for path, item in ctx.items(status.get("nodeGroups"), "data.status.nodeGroups"):
        health = ctx.mapping(item.get("health"), f"{path}.health")
        counts = ctx.mapping(health.get("nodeCounts"), f"{path}.health.nodeCounts")
        registered = ctx.mapping(counts.get("registered"), f"{path}.health.nodeCounts.registered")
        scale_up = ctx.mapping(item.get("scaleUp"), f"{path}.scaleUp")
        backoff = ctx.mapping(scale_up.get("backoffInfo"), f"{path}.scaleUp.backoffInfo")
        groups.append(
            CaGroupStatus(
                name=ctx.text(item.get("name"), f"{path}.name", required=True),
                min_size=ctx.integer(health.get("minSize"), f"{path}.health.minSize"),
                max_size=ctx.integer(health.get("maxSize"), f"{path}.health.maxSize"),
                target_size=ctx.integer(
                    health.get("cloudProviderTarget"), f"{path}.health.cloudProviderTarget"
                ),
                registered=ctx.integer(registered.get("total"), f"{path}...registered.total"),
                ready=ctx.integer(registered.get("ready"), f"{path}...registered.ready"),
                scale_up=ctx.text(scale_up.get("status"), f"{path}.scaleUp.status"),
                backoff=_backoff_text(backoff),
            )
        )
    return tuple(groups)


def _backoff_text(backoff: Mapping[str, Any]) -> str:
    parts = [str(backoff[k]) for k in ("errorCode", "errorMessage") if backoff.get(k)]
    return ": ".join(parts)


def _ca_text_status(text: str) -> tuple[CaGroupStatus, ...]:
    """The readable format (CA < 1.30): after ``NodeGroups:``, ``Name:`` opens a group and
    its ``Health:`` line carries ``key=value`` counts; ``ScaleUp:`` its scale-up status."""
    _, found, groups_text = text.partition("\nNodeGroups:")
    if not found:
        return ()
    groups: list[CaGroupStatus] = []
    current: dict[str, Any] = {}
    for line in groups_text.splitlines():
        label, _, rest = line.strip().partition(":")
        rest = rest.strip()
        if label == "Name":
            if current:
                groups.append(_text_group(current))
            current = {"name": rest}
        elif label == "Health" and current:
            current.update({k: int(v) for k, v in _PAIR.findall(rest)})
        elif label == "ScaleUp" and current:
            current["scale_up"] = rest.split(" ", 1)[0]
    if current:
        groups.append(_text_group(current))
    return tuple(groups)


def _text_group(values: Mapping[str, Any]) -> CaGroupStatus:
    return CaGroupStatus(
        name=values["name"],
        min_size=values.get("minSize", 0),
        max_size=values.get("maxSize", 0),
        target_size=values.get("cloudProviderTarget", 0),
        registered=values.get("registered", 0),
        ready=values.get("ready", 0),
        scale_up=values.get("scale_up", ""),
    )


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
    template: Node | None = None
    notes: list[str] = field(default_factory=list)


def discover_node_groups(
    discovered: Discovered,
    nodes: Iterable[Node],
    prices: PriceTable,
    catalogue: tuple[InstanceType, ...] | None = None,
) -> tuple[tuple[NodeGroup, ...], tuple[ModelError, ...]]:
    """Groups from node labels, the CA status and Karpenter NodePools; notices for the rest."""
    nodes = tuple(nodes)
    notices: list[ModelError] = list(discovered.notices)
    found = _label_pools(nodes)
    _join_ca_status(discovered, found, notices)
    groups = [
        _finished(f, discovered.daemon_pods, prices, notices) for f in found.values() if f.members
    ]
    for ctx, pool in discovered.karpenter_pools:
        groups += _karpenter_groups(
            ctx,
            pool,
            nodes,
            discovered.daemon_pods,
            prices,
            catalogue or bundled_catalogue(),
            notices,
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
    entry: _Found, daemon_pods: list[DaemonPod], prices: PriceTable, notices: list[ModelError]
) -> NodeGroup:
    ready = [n for n in entry.members if n.ready and not n.unschedulable]
    member = ready[0] if ready else entry.members[0]
    template = template_from_member(entry.name, member, daemon_pods)
    notes = list(entry.notes)
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
        notes.append(_no_price_note(template.labels))
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
        notes=tuple(notes),
    )


def _no_price_note(labels: Mapping[str, str]) -> str:
    kind = labels.get(INSTANCE_TYPE_LABEL)
    what = f"instance type {kind}" if kind else "no instance-type label"
    return f"no price ({what} not in the price table): costs count it as 0; set pricePerNodeHour"


def template_from_member(group: str, member: Node, daemon_pods: Iterable[DaemonPod]) -> Node:
    """What a new node of the group looks like, as cluster-autoscaler builds it: the
    member's labels (hostname replaced), taints without CA's own, allocatable less
    what the DaemonSets that would run on it request."""
    name = f"{group}-template"
    labels = {**member.labels, HOSTNAME_LABEL: name}
    taints = tuple(t for t in member.taints if t.key not in CA_TAINTS)
    base = replace(member, name=name, labels=labels, taints=taints, ready=True)
    base = replace(base, unschedulable=False, node_group=group)
    return replace(base, allocatable=_less_daemons(base, daemon_pods))


def _less_daemons(node: Node, daemon_pods: Iterable[DaemonPod]) -> Resources:
    cpu, memory, pods = (
        node.allocatable.cpu_milli,
        node.allocatable.memory_bytes,
        node.allocatable.pods,
    )
    extended = dict(node.allocatable.extended)
    for daemon in daemon_pods:
        if not _runs_on(daemon, node):
            continue
        cpu -= daemon.requests.cpu_milli
        memory -= daemon.requests.memory_bytes
        pods -= 1
        for key, value in daemon.requests.extended.items():
            extended[key] = extended.get(key, 0) - value
    return Resources(
        cpu_milli=max(cpu, 0),
        memory_bytes=max(memory, 0),
        pods=max(pods, 0),
        extended={k: max(v, 0) for k, v in extended.items()},
    )


def _runs_on(daemon: DaemonPod, node: Node) -> bool:
    """The DaemonSet controller's test: node selector, required affinity, and every
    NoSchedule/NoExecute taint tolerated (DaemonSets tolerate unschedulable themselves)."""
    if any(node.labels.get(k) != v for k, v in daemon.node_selector.items()):
        return False
    if daemon.affinity and not any(t.matches(node.labels) for t in daemon.affinity):
        return False
    return all(
        any(t.tolerates(taint) for t in daemon.tolerations)
        for taint in node.taints
        if taint.effect in ("NoSchedule", "NoExecute")
    )


# --- Karpenter NodePools --------------------------------------------------------------------


def _karpenter_groups(
    ctx: ObjectContext,
    pool: KarpenterPool,
    nodes: tuple[Node, ...],
    daemon_pods: list[DaemonPod],
    prices: PriceTable,
    catalogue: tuple[InstanceType, ...],
    notices: list[ModelError],
) -> list[NodeGroup]:
    """One group per catalogue instance type the NodePool's requirements allow; the
    pool's limits bound the new nodes of each (what remains of the limit after the
    pool's current nodes, divided by one node's capacity)."""

    def notice(field_name: str, reason: str) -> None:
        notices.append(ModelError(ctx.source, ctx.object, field_name, reason))

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
            f"weight {pool.weight} not modelled: Karpenter tries higher-weight NodePools "
            "first, capacityweb picks the cheapest valid option",
        )
    spot_only = _allows(pool, CAPACITY_TYPE_LABEL, "spot") and not _allows(
        pool, CAPACITY_TYPE_LABEL, "on-demand"
    )
    if spot_only:
        notice(
            "spec.template.spec.requirements",
            "spot capacity only: the price table holds on-demand prices, spot is not priced",
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
    room = _limit_room(pool, members, catalogue)
    groups = []
    for kind in eligible:
        groups.append(_karpenter_group(pool, kind, members, room, daemon_pods, prices, spot_only))
    return groups


def _allows(pool: KarpenterPool, key: str, value: str) -> bool:
    return all(r.matches({key: value}) for r in pool.requirements if r.key == key)


def _eligible(pool: KarpenterPool, kind: InstanceType) -> bool:
    """Requirements on a label the catalogue knows must match it; the others (zone,
    capacity type, custom labels) constrain the offering, not the type."""
    return all(r.matches(kind.labels) for r in pool.requirements if r.key in kind.labels)


def _limit_room(
    pool: KarpenterPool, members: list[Node], catalogue: tuple[InstanceType, ...]
) -> dict[str, Fraction]:
    by_name = {t.name: t for t in catalogue}
    room = dict(pool.limits)
    for node in members:
        kind = by_name.get(node.labels.get(INSTANCE_TYPE_LABEL, ""))
        for resource in room:
            used = kind.capacity(resource) if kind else _node_capacity(node, resource)
            room[resource] -= used
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
    from topology import kube  # kube registers this module's handlers: imported late

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
    template = kube.node_with_plugin_gpus(bare, kind.gpus)
    template = replace(template, allocatable=_less_daemons(template, daemon_pods), node_group=name)
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
        notes.append(_no_price_note(labels))
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
        autoscaler=AutoscalerRef(kind="karpenter", name=pool.name),
        price_source=price.source if price else None,
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
            notes=tuple(n for n in merged.notes if not n.startswith("no price")),
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
