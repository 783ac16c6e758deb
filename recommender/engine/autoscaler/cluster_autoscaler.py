"""The naive autoscaler: cluster-autoscaler without ProvisioningRequest.

What it does, deliberately, because this is what capacityweb measures:

- pod by pod, in scheduling order; a gang is just its pods;
- expendable pods (priority below ``--expendable-pods-priority-cutoff``,
  default -10) never trigger a scale-up
  (``core/podlistprocessor/filter_out_expendable.go``, ``core/utils``'s
  ``FilterOutExpendableAndSplit``);
- a pod that the real scheduler can put on an existing node triggers nothing,
  nor one it places by preempting lower-priority pods (the pod then has a
  ``nominatedNodeName`` and ``FilterOutExpendableAndSplit`` leaves it out);
- otherwise a pod fits an already-planned new node, or a group whose template
  *counts* cover it (cpu, memory, pods, extended resources, GPU count, DRA
  device count per driver), with the template's labels and taints respected —
  but GPU model, memory, partitions, shares and topology ignored;
- among fitting groups, least-waste (unused cpu + memory fraction), ties by
  name; never beyond ``max_size``; a new node lands in the group's FIRST
  placement domain that still has a slot, then the next (the autoscaler
  cannot choose where the cloud puts it), or with no domain labels at all.

Then the real scheduler runs on the cluster with those nodes: pods that still
do not run, and GPUs on the added nodes that nobody uses, are stranded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from recommender.engine import costs
from recommender.engine.autoscaler.plan import (
    BLOCKED,
    NAIVE,
    PREEMPTS,
    RUNS_NOW,
    NodeAddition,
    ScaleUpPlan,
    WorkloadPlan,
    new_node,
    options_for,
    placement_text,
    pod_shape,
    unique_name,
    without_topology,
    workload_mix,
)
from recommender.engine.scheduler import interpod
from recommender.engine.scheduler.admission import Hold, held
from recommender.engine.scheduler.demand import advertised_gpus
from recommender.engine.scheduler.placement import Placer, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.hardware import HOSTNAME_LABEL, Cluster, DeviceClass, Node, NodeGroup, Pod

SCALE_UP = "scale_up"
# core/utils FilterOutExpendableAndSplit: a pod whose nominatedNodeName names an existing
# node "will be scheduled after low priority pods are preempted": ignored in scale-up
WAITING_FOR_PREEMPTION = (
    "kube-scheduler nominates it for a node after preempting lower-priority pods: "
    "cluster-autoscaler ignores it in scale-up"
)
# cluster-autoscaler's --expendable-pods-priority-cutoff default (main.go flags)
EXPENDABLE_PODS_PRIORITY_CUTOFF = -10
CPU, MEMORY, PODS, GPUS = "cpu", "memory", "pods", "gpus"


@dataclass(slots=True)
class PlannedNode:
    """A node the naive autoscaler asked for, with the counts it believes are still free."""

    group: NodeGroup
    node: Node
    free: dict[str, int]
    trigger: str  # the workload whose pod made it buy this node
    domain: Mapping[str, str]  # the placement labels it landed with
    pods: list[Pod] = field(default_factory=list)  # what the estimate put on it

    # planned nodes of one kind differ only by name (same labels otherwise, same taints)
    kind: tuple[str, tuple[tuple[str, str], ...]] = field(init=False)

    def __post_init__(self) -> None:
        self.kind = (self.group.name, tuple(sorted(self.domain.items())))


@dataclass(slots=True)
class NaiveLedger:
    """What the naive pass decided, per workload."""

    planned: list[PlannedNode] = field(default_factory=list)
    needs_new: dict[str, bool] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    held: dict[str, Hold] = field(default_factory=dict)  # never tried (admission.held)
    preempts: dict[str, tuple[str, ...]] = field(default_factory=dict)  # waiting for preemption


def template_counts(node: Node, device_classes: Mapping[str, DeviceClass]) -> dict[str, int]:
    """A template's allocatable as the naive autoscaler counts it."""
    counts = {
        CPU: node.allocatable.cpu_milli,
        MEMORY: node.allocatable.memory_bytes,
        PODS: node.allocatable.pods,
        GPUS: advertised_gpus(node),
    }
    counts.update({f"ext:{k}": v for k, v in node.allocatable.extended.items()})
    for device in node.devices:
        key = f"dev:{device.driver}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def pod_counts(pod: Pod, device_classes: Mapping[str, DeviceClass]) -> dict[str, int]:
    """A pod's request as counts: a 0.25-GPU share is one GPU, a DRA request its device count."""
    requests = pod.requests
    counts = {CPU: requests.cpu_milli, MEMORY: requests.memory_bytes, PODS: max(1, requests.pods)}
    if pod.gpu is not None:
        counts[GPUS] = pod.gpu.count
    counts.update({f"ext:{k}": v for k, v in requests.extended.items()})
    for claim in pod.claims:
        for request in claim.requests:
            key = f"dev:{_class_driver(device_classes.get(request.device_class))}"
            counts[key] = counts.get(key, 0) + max(1, request.count)
    return counts


def _class_driver(device_class: DeviceClass | None) -> str:
    """The driver a DeviceClass selects (the only selector the naive view reads)."""
    if device_class is not None:
        for selector in device_class.selectors:
            if selector.target == "driver" and isinstance(selector.value, str):
                return selector.value
    return "*"


def counts_cover(free: Mapping[str, int], demand: Mapping[str, int]) -> bool:
    for key, amount in demand.items():
        if amount <= 0:
            continue
        if key == "dev:*":
            if sum(v for k, v in free.items() if k.startswith("dev:")) < amount:
                return False
        elif free.get(key, 0) < amount:
            return False
    return True


def take_counts(free: dict[str, int], demand: Mapping[str, int]) -> None:
    for key, amount in demand.items():
        if key == "dev:*":
            for device_key in sorted(k for k in free if k.startswith("dev:")):
                used = min(free[device_key], amount)
                free[device_key] -= used
                amount -= used
        else:
            free[key] = free.get(key, 0) - amount


def labels_and_taints_admit(node: Node, pod: Pod) -> bool:
    """The template checks cluster-autoscaler does make: selectors, affinity, taints."""
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    if pod.affinity and not any(term.matches(node.labels) for term in pod.affinity):
        return False
    return all(
        taint.effect == "PreferNoSchedule" or any(t.tolerates(taint) for t in pod.tolerations)
        for taint in node.taints
    )


def waste(counts: Mapping[str, int], demand: Mapping[str, int]) -> float:
    """Least-waste expander score: unused cpu fraction + unused memory fraction."""
    total = 0.0
    for key in (CPU, MEMORY):
        if counts.get(key, 0) > 0:
            total += (counts[key] - demand.get(key, 0)) / counts[key]
    return total


class NaivePlanner:
    def __init__(
        self, cluster: Cluster, state: ClusterState, at: datetime, policy: str, mix: tuple[Pod, ...]
    ) -> None:
        self.cluster = cluster
        self.state = state
        self.at = at
        self.policy = policy
        self.classes = {c.name: c for c in cluster.device_classes}
        self.groups = tuple(sorted(cluster.node_groups, key=lambda g: g.name))
        self.taken = set(state.node_names())
        self.added: dict[str, int] = {}
        self.added_per_slot: dict[tuple[str, int], int] = {}
        self.ledger = NaiveLedger()
        # shapes that found no existing node: existing nodes only fill up in this pass,
        # so a later pod of the same shape cannot fit either (saves a full node scan)
        self.no_room: set[str] = set()
        self.admits: dict[tuple[object, ...], bool] = {}  # (node kind, pod shape) → verdict
        # some pod's placement depends on the pods around a node (InterPodAffinity,
        # PodTopologySpread): "no room for this shape" must then tell labels apart
        self.labels_matter = any(p.pod_terms for p in cluster.pods)
        self.templates: dict[tuple[object, ...], tuple[Node, dict[str, int]]] = {}
        # planned nodes with GPUs left, in purchase order: the only ones a GPU pod can take
        self.with_gpus: list[PlannedNode] = []
        self.placer = Placer(cluster, state, options_for(policy, at, mix=mix), diagnose=False)

    def decide(self, pending: Sequence[Workload]) -> NaiveLedger:
        for workload in pending:
            self.ledger.needs_new[workload.key] = False
            self.ledger.reasons[workload.key] = []
            hold = held(workload, self.cluster.topology, len(self.taken))
            if hold is not None:  # gated: CA skips it; unsupported: no guess either way
                self.ledger.held[workload.key] = hold
                continue
            for pod in workload.pods:
                self.decide_pod(workload, pod)
        return self.ledger

    def decide_pod(self, workload: Workload, pod: Pod) -> None:
        if pod.priority < EXPENDABLE_PODS_PRIORITY_CUTOFF:
            self.ledger.needs_new[workload.key] = True
            self.ledger.reasons[workload.key].append(
                f"pod {pod.name}: expendable (priority {pod.priority} is below "
                f"--expendable-pods-priority-cutoff {EXPENDABLE_PODS_PRIORITY_CUTOFF}): "
                "cluster-autoscaler never scales up for it"
            )
            return
        shape = pod_shape(pod)
        if self.labels_matter:  # inter-pod terms: pods of one shape differ by their labels
            shape = repr((shape, pod.pod_terms, sorted(pod.labels.items())))
        if shape not in self.no_room:
            outcome = self.placer.place_one(without_topology(pod))
            if outcome.preempted:  # nominated: CA ignores it in scale-up
                self.ledger.preempts[workload.key] = (
                    *self.ledger.preempts.get(workload.key, ()),
                    *outcome.preempted,
                )
            if outcome.placed:
                return
            if not pod.pod_terms.affinity:  # required pod affinity may be met by a later pod
                self.no_room.add(shape)
        self.ledger.needs_new[workload.key] = True
        demand = pod_counts(pod, self.classes)
        needs_gpus = demand.get(GPUS, 0) > 0
        for planned in self.with_gpus if needs_gpus else self.ledger.planned:
            if (
                counts_cover(planned.free, demand)
                and self.admit(planned, pod, shape)
                and self.pods_admit(planned, pod)
            ):
                take_counts(planned.free, demand)
                planned.pods.append(pod)
                if planned.free.get(GPUS, 0) <= 0 and needs_gpus:
                    self.with_gpus.remove(planned)
                return
        group, reason = self.expand(pod, demand)
        if group is None:
            self.ledger.reasons[workload.key].append(reason)
            return
        self.buy(group, workload, demand).pods.append(pod)

    def admit(self, planned: PlannedNode, pod: Pod, shape: str) -> bool:
        """``labels_and_taints_admit``, once per (kind of planned node, pod shape) unless
        the pod names nodes by hostname (the one label that differs within a kind)."""
        if HOSTNAME_LABEL in pod.node_selector or pod.affinity:
            return labels_and_taints_admit(planned.node, pod)
        key = (planned.kind, shape)
        verdict = self.admits.get(key)
        if verdict is None:
            verdict = self.admits[key] = labels_and_taints_admit(planned.node, pod)
        return verdict

    def first_domain(self, group: NodeGroup) -> Mapping[str, str]:
        """Where the cloud puts the next node: the first placement with a free slot."""
        for index, placement in enumerate(group.placements):
            if self.added_per_slot.get((group.name, index), 0) < placement.max_new_nodes:
                return placement.labels
        return {}

    def count_slot(self, group: NodeGroup, labels: Mapping[str, str]) -> None:
        for index, placement in enumerate(group.placements):
            if placement.labels == labels:
                slot = (group.name, index)
                self.added_per_slot[slot] = self.added_per_slot.get(slot, 0) + 1
                return

    def expand(self, pod: Pod, demand: Mapping[str, int]) -> tuple[NodeGroup | None, str]:
        """Least-waste choice among groups whose template counts cover the pod."""
        fitting: list[tuple[float, str, NodeGroup]] = []
        full: list[str] = []
        for group in self.groups:
            template, counts = self.template(group)
            if not (counts_cover(counts, demand) and labels_and_taints_admit(template, pod)):
                continue
            if not self.pods_admit(template, pod):
                full.append(_pods_refuse(group, self.first_domain(group)))
                continue
            if group.current_size + self.added.get(group.name, 0) >= group.max_size:
                full.append(f"max size {group.max_size} reached for node group {group.name}")
                continue
            fitting.append((waste(counts, demand), group.name, group))
        if fitting:
            return min(fitting, key=lambda item: item[:2])[2], ""
        if full:
            return None, f"pod {pod.name}: " + "; ".join(full)
        return None, f"pod {pod.name}: no node group template covers its requests by counts"

    def template(self, group: NodeGroup) -> tuple[Node, dict[str, int]]:
        """The group's next node as the autoscaler sees it, and its counts (kept per domain)."""
        domain = self.first_domain(group)
        key = (group.name, tuple(sorted(domain.items())))
        found = self.templates.get(key)
        if found is None:
            node = new_node(group, domain, f"{group.name}-template")
            found = self.templates[key] = (node, template_counts(node, self.classes))
        return found

    def pods_admit(self, planned: PlannedNode | Node, pod: Pod) -> bool:
        """InterPodAffinity and PodTopologySpread on a planned node (or a group's next,
        empty node), with the pods the estimate put on planned nodes: cluster-autoscaler's
        binpacking estimator runs the scheduler's filters on its template nodes
        (``estimator/binpacking_estimator.go``), NodePorts among them: a planned node
        takes no two pods binding one host port."""
        if isinstance(planned, PlannedNode) and pod.host_ports:
            used = [port for other in planned.pods for port in other.host_ports]
            if any(wanted.conflicts(port) for wanted in pod.host_ports for port in used):
                return False
        if not self.labels_matter:
            return True
        existing = (
            (self.state.node(n), self.state.alloc(n).placed) for n in self.state.node_names()
        )
        around = [*existing, *((p.node, p.pods) for p in self.ledger.planned)]
        node = planned.node if isinstance(planned, PlannedNode) else planned
        if not isinstance(planned, PlannedNode):
            around.append((node, ()))
        return interpod.fits(pod, node, around, self.cluster.namespace_labels)

    def buy(self, group: NodeGroup, workload: Workload, demand: Mapping[str, int]) -> PlannedNode:
        name = unique_name(f"{group.name}-naive-{len(self.taken)}", self.taken)
        domain = self.first_domain(group)
        self.count_slot(group, domain)
        node = new_node(group, domain, name)
        free = template_counts(node, self.classes)
        take_counts(free, demand)
        planned = PlannedNode(group, node, free, workload.key, domain)
        self.ledger.planned.append(planned)
        if free.get(GPUS, 0) > 0:
            self.with_gpus.append(planned)
        self.added[group.name] = self.added.get(group.name, 0) + 1
        return planned


def _pods_refuse(group: NodeGroup, domain: Mapping[str, str]) -> str:
    where = placement_text(domain)
    return f"pod affinity or topology spread refuses the next node of group {group.name}{where}"


def naive_scale_up(
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    at: datetime,
    policy: str = "default",
) -> ScaleUpPlan:
    """Decide like the naive autoscaler, then let the real scheduler judge the result."""
    mix = workload_mix(pending)
    ledger = NaivePlanner(cluster, state.copy(), at, policy, mix).decide(pending)
    after = state.copy()
    for planned in ledger.planned:
        after.add_node(planned.node)
    options = options_for(policy, at, mix=mix)
    result = place(cluster, pending, state=after, options=options, diagnose=False)
    placed = {o.workload: o.placed for o in result.outcomes}
    bound_nodes = {b.node for o in result.outcomes if o.placed for b in o.bindings}
    stranded = {p.node.name: _stranded(p, result.state, bound_nodes) for p in ledger.planned}
    outcomes = {
        w.key: _workload_plan(w, ledger, placed.get(w.key, False), stranded) for w in pending
    }
    return ScaleUpPlan(
        mode=NAIVE,
        additions=_additions(ledger),
        outcomes=outcomes,
        cost_per_hour=costs.round_money(sum(p.group.price_per_node_hour for p in ledger.planned)),
        stranded_gpus=sum(gpus for gpus, _ in stranded.values()),
        stranded_per_hour=costs.round_money(sum(cost for _, cost in stranded.values())),
    )


def _stranded(planned: PlannedNode, state: ClusterState, bound: set[str]) -> tuple[int, float]:
    """(unused GPUs, wasted $/h) of one naive node after the real scheduler ran."""
    node = planned.node
    unused = sum(1 for cell in state.gpu_cells(node.name) if cell.allocated_milli == 0)
    cost = costs.stranded_cost_per_hour(
        planned.group.price_per_node_hour, node.gpu_count, unused, node.name in bound
    )
    return unused, cost


def _workload_plan(
    workload: Workload,
    ledger: NaiveLedger,
    schedulable_after: bool,
    stranded: Mapping[str, tuple[int, float]],
) -> WorkloadPlan:
    mine = [p for p in ledger.planned if p.trigger == workload.key]
    add_nodes: dict[str, int] = {}
    for planned in mine:
        add_nodes[planned.group.name] = add_nodes.get(planned.group.name, 0) + 1
    reasons = ledger.reasons.get(workload.key, [])
    hold = ledger.held.get(workload.key)
    if hold is not None:
        return WorkloadPlan(workload.key, hold.verdict, reasons=hold.reasons)
    preempts = ledger.preempts.get(workload.key, ())
    if not ledger.needs_new.get(workload.key):
        verdict = PREEMPTS if preempts else RUNS_NOW
        reasons = [WAITING_FOR_PREEMPTION] if preempts else reasons
    else:
        verdict = BLOCKED if reasons and not mine else SCALE_UP
    return WorkloadPlan(
        workload=workload.key,
        verdict=verdict,
        add_nodes=add_nodes,
        reasons=tuple(reasons),
        schedulable_after=schedulable_after,
        stranded_gpus=sum(stranded[p.node.name][0] for p in mine),
        preempts=preempts,
    )


def _additions(ledger: NaiveLedger) -> tuple[NodeAddition, ...]:
    """Naive nodes grouped by (group, domain, trigger workload), in purchase order."""
    grouped: dict[tuple[str, str, str], list[PlannedNode]] = {}
    for planned in ledger.planned:
        key = (planned.group.name, repr(sorted(planned.domain.items())), planned.trigger)
        grouped.setdefault(key, []).append(planned)
    additions = []
    for (group_name, _, trigger), nodes in grouped.items():
        group = nodes[0].group
        placement = dict(nodes[0].domain)
        additions.append(
            NodeAddition(
                node_group=group_name,
                count=len(nodes),
                placement=placement,
                node_names=tuple(p.node.name for p in nodes),
                workloads=(trigger,),
                cost_per_hour=costs.nodes_cost_per_hour(len(nodes), group.price_per_node_hour),
            )
        )
    return tuple(additions)
