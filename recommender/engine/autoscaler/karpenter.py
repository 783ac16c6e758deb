"""The Karpenter profile: what kubernetes-sigs/karpenter's provisioner would launch.

Same entry as ``cluster_autoscaler.naive_scale_up``; followed upstream:

- one batch: every pending pod is provisioned for in one scheduling run
  (``pkg/controllers/provisioning/provisioner.go``, ``Provisioner.Schedule``
  after the batcher's idle/max window);
- the pods are queued by CPU request, largest first, then creation time,
  then name (``scheduling/queue.go``, ``NewQueue``/``byCPUAndMemoryDescending``:
  the memory comparison returns the CPU result, so memory never orders);
- per pod, in order (``scheduling/scheduler.go``, ``Scheduler.add``): an
  existing node first, in-flight NodeClaims included (``in_flight_nodes``)
  (``existingnode.go``; here the scheduler simulation's own filters, on the
  state the batch fills), then a NodeClaim this batch
  already opened, fewest pods first (``nodeclaim.go``, ``NodeClaim.Add``:
  the pod's requirements and tolerations must admit it and the claim's
  instance-type options narrow to those that still fit every pod), then a
  new NodeClaim from the NodePools in weight order, highest first, then name
  (``provisioner.go``/``nodepoolutils.OrderByWeight``): its options are the
  NodePool's instance types whose requirements, taints and allocatable admit
  the pod and that the NodePool's limits still allow
  (``filterByRemainingResources``);
- a NodeClaim launches its cheapest option (``cloudprovider/types.go``,
  ``InstanceTypes.OrderByPrice``; the AWS provider's lowest-price launch):
  a reserved offering (``karpenter.sh/capacity-type: reserved``, a capacity
  reservation of that instance type with nodes left, counted by
  ``scheduling/reservationmanager.go``) is priced near zero, so preferred;
  whose reservation it is does not matter to Karpenter;
- pods with DRA resource claims are not provisioned for: with
  ``IgnoreDRARequests`` on (its default) ``Scheduler.add`` returns a DRA
  error for them (``scheduling/dra.go``), said per pod;
- no gang: a gang's pods are packed one by one like any pod; the Kueue
  topology annotation is not Karpenter's (it knows zones, not blocks), so a
  gang may be split across domains and stranded.

Model of the catalogue: each node group of the cluster is one instance type
(discovery makes one per NodePool × catalogue type, ``autoscaler.name`` the
NodePool, ``autoscaler.weight`` its weight); a hand-written group with no
autoscaler is a NodePool of its own with one type; groups grown by another
autoscaler (cluster-autoscaler, a managed pool) are not Karpenter's and are
left out. A NodePool's limits arrive as each type's ``max_size`` (discovery
divides the limit left by one node's capacity), so limits shared between
types are counted per type (partly). Where a new node lands: the group's
first placement with room whose labels every pod on it admits (the cloud
chooses among the offerings left).

Then the real scheduler judges the result, as for the naive profile: pods
that still do not run, and GPUs on the launched nodes that nobody uses, are
stranded.

Pure: no Django, no I/O, no clock (``at`` is passed in).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from recommender.engine import costs
from recommender.engine.autoscaler.groups import upcoming_nodes
from recommender.engine.autoscaler.nominated import Nominated, nominations
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
    unique_name,
    without_topology,
    workload_mix,
)
from recommender.engine.scheduler.admission import Hold, held
from recommender.engine.scheduler.demand import advertised_gpus
from recommender.engine.scheduler.placement import Placer, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.kube.karpenter import BEYOND_CATALOGUE
from topology.model.hardware import Cluster, Node, NodeGroup, Pod

KARPENTER = "karpenter"
SCALE_UP = "scale_up"  # the verdict word the naive profile uses for "it buys nodes"
CPU, MEMORY, PODS, GPUS = "cpu", "memory", "pods", "nvidia.com/gpu"
# pkg/utils/pod/scheduling.go IsProvisionable: a pod with a nominatedNodeName is not
PREEMPTING_IGNORED = (
    "kube-scheduler nominates it for a node after preempting lower-priority pods: "
    "Karpenter does not provision for it"
)


@dataclass(frozen=True, slots=True)
class NodePoolModel:
    """One NodePool: its weight and its instance types (node groups), name order."""

    name: str
    weight: int
    types: tuple[NodeGroup, ...]


@dataclass(slots=True)
class Claim:
    """A NodeClaim opened in this batch: its pods and the instance types still possible."""

    pool: NodePoolModel
    options: list[NodeGroup]
    pods: list[tuple[str, Pod]] = field(default_factory=list)  # (workload key, pod)
    demand: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Launched:
    group: NodeGroup
    node: Node
    placement: Mapping[str, str]
    trigger: str
    reservation: str | None


def node_pools(cluster: Cluster) -> tuple[NodePoolModel, ...]:
    """Karpenter's NodePools from the cluster's groups, highest weight first, then name."""
    pools: dict[str, list[NodeGroup]] = {}
    weights: dict[str, int] = {}
    for group in sorted(cluster.node_groups, key=lambda g: g.name):
        ref = group.autoscaler
        if ref is not None and ref.kind != KARPENTER:
            continue  # grown by another autoscaler: not Karpenter's to launch
        name = ref.name if ref is not None else group.name
        pools.setdefault(name, []).append(group)
        weight = ref.weight if ref is not None and ref.weight is not None else 0
        weights[name] = max(weights.get(name, 0), weight)
    return tuple(
        NodePoolModel(name, weights[name], tuple(types))
        for name, types in sorted(pools.items(), key=lambda item: (-weights[item[0]], item[0]))
    )


def pod_demand(pod: Pod) -> dict[str, int]:
    """What ``resources.Fits`` compares: cpu, memory, one pod slot, GPUs, extended."""
    requests = pod.requests
    demand = {CPU: requests.cpu_milli, MEMORY: requests.memory_bytes, PODS: max(1, requests.pods)}
    if pod.gpu is not None:
        demand[GPUS] = pod.gpu.count
    demand.update(requests.extended)
    return demand


def allocatable(node: Node) -> dict[str, int]:
    counts = {
        CPU: node.allocatable.cpu_milli,
        MEMORY: node.allocatable.memory_bytes,
        PODS: node.allocatable.pods,
        GPUS: advertised_gpus(node),
    }
    counts.update(node.allocatable.extended)
    return counts


def fits(node: Node, demand: Mapping[str, int]) -> bool:
    capacity = allocatable(node)
    return all(amount <= 0 or capacity.get(k, 0) >= amount for k, amount in demand.items())


def admits(node: Node, pod: Pod) -> bool:
    """Requirements (nodeSelector, required node affinity) and taints, as
    ``NodeClaim.Add`` checks them against the claim's template."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    if pod.affinity and not any(term.matches(labels) for term in pod.affinity):
        return False
    return all(
        taint.effect == "PreferNoSchedule" or any(t.tolerates(taint) for t in pod.tolerations)
        for taint in node.taints
    )


def _added(demand: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    total = dict(demand)
    for key, amount in more.items():
        total[key] = total.get(key, 0) + amount
    return total


class KarpenterPlanner:
    def __init__(self, cluster: Cluster, state: ClusterState, at: datetime, policy: str) -> None:
        self.cluster = cluster
        self.state = state
        self.at = at
        self.policy = policy
        self.pools = node_pools(cluster)
        self.claims: list[Claim] = []
        self.added: dict[str, int] = {}  # group → nodes launched
        # group → claims that may become it: a new claim counts against every option's
        # limit (``subtractMax`` on the NodePool's remaining resources)
        self.charged: dict[str, int] = {}
        self.reasons: dict[str, list[str]] = {}
        self.needs_new: dict[str, bool] = {}
        self.held: dict[str, Hold] = {}
        self.preempts: dict[str, tuple[str, ...]] = {}  # waiting for preemption: ignored
        self.templates = {
            g.name: new_node(g, {}, f"{g.name}-template") for g in cluster.node_groups
        }

    def queue(self, pending: Sequence[Workload]) -> list[tuple[str, Pod]]:
        pods = []
        for workload in pending:
            self.needs_new[workload.key] = False
            self.reasons[workload.key] = []
            hold = held(workload, self.cluster.topology, len(self.state.node_names()))
            if hold is not None:
                self.held[workload.key] = hold
                continue
            pods += [(workload.key, pod) for pod in workload.pods]
        # byCPUAndMemoryDescending: CPU, largest first; then creation time; then name (UID)
        return sorted(
            pods, key=lambda item: (-item[1].requests.cpu_milli, item[1].arrival, item[1].key)
        )

    def decide(self, pending: Sequence[Workload], nominated: Nominated) -> None:
        """``nominated``: the workloads kube-scheduler places by preemption, ignored
        (``IsProvisionable``: not ``IsPreempting``). The simulation never preempts."""
        options = options_for(self.policy, self.at, mix=workload_mix(pending))
        placer = Placer(self.cluster, self.state, replace(options, preemption=False))
        queue = self.queue(pending)
        for workload in pending:
            outcome = nominated.get(workload.key)
            if outcome is not None and workload.key not in self.held:
                self.preempts[workload.key] = outcome.preempted
        for key, pod in queue:
            if key in self.preempts:
                continue
            if pod.claims:
                self.needs_new[key] = True
                self.reasons[key].append(
                    f"pod {pod.name}: DRA resource claims: Karpenter does not provision for it "
                    "(IgnoreDRARequests, on by default)"
                )
                continue
            if placer.place_one(without_topology(pod)).placed:
                continue
            self.needs_new[key] = True
            if not self.join_claim(key, pod) and not self.open_claim(key, pod):
                self.reasons[key].append(
                    f"pod {pod.name}: no NodePool has an instance type that admits it "
                    "within its limits"
                )

    def join_claim(self, key: str, pod: Pod) -> bool:
        """``NodeClaim.Add`` on the claims of this batch, fewest pods first (stable)."""
        demand = pod_demand(pod)
        for claim in sorted(self.claims, key=lambda c: len(c.pods)):
            total = _added(claim.demand, demand)
            options = [
                g
                for g in claim.options
                if admits(self.templates[g.name], pod) and fits(self.templates[g.name], total)
            ]
            if options:
                claim.options, claim.demand = options, total
                claim.pods.append((key, pod))
                return True
        return False

    def open_claim(self, key: str, pod: Pod) -> bool:
        """A new NodeClaim from the first NodePool (weight order) with a type for the pod."""
        demand = pod_demand(pod)
        for pool in self.pools:
            options = [
                g
                for g in pool.types
                if self.room(g) > 0
                and admits(self.templates[g.name], pod)
                and fits(self.templates[g.name], demand)
            ]
            if options:
                self.claims.append(Claim(pool, options, [(key, pod)], demand))
                for group in options:
                    self.charged[group.name] = self.charged.get(group.name, 0) + 1
                return True
        return False

    def room(self, group: NodeGroup) -> int:
        return group.max_size - group.current_size - self.charged.get(group.name, 0)

    def launch(self) -> list[Launched]:
        """Each claim launches its cheapest option; a reserved offering costs nothing."""
        reserved = self.reserved_left()
        taken = set(self.state.node_names())
        launched: list[Launched] = []
        for claim in self.claims:

            def price(group: NodeGroup) -> tuple[float, str]:
                free = any(left > 0 for _, left in reserved.get(group.name, []))
                return (0.0 if free else group.price_per_node_hour, group.name)

            group = min(claim.options, key=price)
            reservation = None
            for index, (name, left) in enumerate(reserved.get(group.name, [])):
                if left > 0:
                    reserved[group.name][index] = (name, left - 1)
                    reservation = name
                    break
            self.added[group.name] = self.added.get(group.name, 0) + 1
            placement = self.placement(group, claim, launched)
            base = f"{group.name}-karpenter-{len(taken)}"
            node = new_node(group, placement, unique_name(base, taken))
            launched.append(Launched(group, node, placement, claim.pods[0][0], reservation))
        return launched

    def reserved_left(self) -> dict[str, list[tuple[str, int]]]:
        """Capacity-reservation nodes not started, per group (name order): Karpenter's
        reserved offerings, open to any pod its NodePool admits."""
        left: dict[str, list[tuple[str, int]]] = {}
        for reservation in sorted(self.cluster.reservations, key=lambda r: r.name):
            capacity = reservation.node_group
            if capacity is None or not reservation.active_at(self.at) or capacity.count < 1:
                continue
            left.setdefault(capacity.node_group, []).append((reservation.name, capacity.count))
        return left

    def placement(
        self, group: NodeGroup, claim: Claim, launched: list[Launched]
    ) -> Mapping[str, str]:
        """The group's first placement with room whose labels every pod on the claim admits."""
        used = [dict(n.placement) for n in launched if n.group is group]
        for placement in group.placements:
            count = sum(1 for labels in used if labels == dict(placement.labels))
            if count >= placement.max_new_nodes:
                continue
            probe = new_node(group, placement.labels, "probe")
            if all(admits(probe, pod) for _, pod in claim.pods):
                return placement.labels
        return {}


def karpenter_scale_up(
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    at: datetime,
    policy: str = "default",
    nominated: Nominated | None = None,
) -> ScaleUpPlan:
    """Provision like Karpenter, then let the real scheduler judge the result
    (``nominated`` as for ``cluster_autoscaler.naive_scale_up``)."""
    options = options_for(policy, at, mix=workload_mix(pending))
    if nominated is None:
        nominated = nominations(cluster, pending, state, options)
    in_flight = in_flight_nodes(cluster, state)
    working = state.copy()
    for node in in_flight:
        working.add_node(node)
    planner = KarpenterPlanner(cluster, working, at, policy)
    planner.decide(pending, nominated)
    launched = planner.launch()
    after = state.copy()
    for node in (*in_flight, *(item.node for item in launched)):
        after.add_node(node)
    result = place(cluster, pending, state=after, options=options, diagnose=False)
    placed = {o.workload: o.placed for o in result.outcomes}
    bound = {b.node for o in result.outcomes if o.placed for b in o.bindings}
    stranded = {item.node.name: _stranded(item, result.state, bound) for item in launched}
    outcomes = {
        w.key: _workload_plan(w, planner, launched, placed.get(w.key, False), stranded)
        for w in pending
    }
    return ScaleUpPlan(
        mode=NAIVE,
        additions=_additions(launched),
        outcomes=outcomes,
        cost_per_hour=costs.round_money(sum(_price(item) for item in launched)),
        stranded_gpus=sum(gpus for gpus, _ in stranded.values()),
        stranded_per_hour=costs.round_money(sum(cost for _, cost in stranded.values())),
    )


def in_flight_nodes(cluster: Cluster, state: ClusterState) -> tuple[Node, ...]:
    """Nodes of in-flight NodeClaims (asked for, not registered: discovery's target size
    of a NodePool's group): Karpenter's cluster state holds them as nodes, so its
    scheduler tries them before any new NodeClaim (``scheduling/existingnode.go``)."""
    groups = [g for g in cluster.node_groups if g.autoscaler and g.autoscaler.kind == "karpenter"]
    _, upcoming = upcoming_nodes(cluster, groups, set(state.node_names()))
    return tuple(p.node for p in upcoming)


def _price(item: Launched) -> float:
    return 0.0 if item.reservation is not None else item.group.price_per_node_hour


def _stranded(item: Launched, state: ClusterState, bound: set[str]) -> tuple[int, float]:
    node = item.node
    unused = sum(1 for cell in state.gpu_cells(node.name) if cell.allocated_milli == 0)
    cost = costs.stranded_cost_per_hour(_price(item), node.gpu_count, unused, node.name in bound)
    return unused, cost


def _workload_plan(
    workload: Workload,
    planner: KarpenterPlanner,
    launched: list[Launched],
    schedulable_after: bool,
    stranded: Mapping[str, tuple[int, float]],
) -> WorkloadPlan:
    hold = planner.held.get(workload.key)
    if hold is not None:
        return WorkloadPlan(workload.key, hold.verdict, reasons=hold.reasons)
    preempts = planner.preempts.get(workload.key)
    if preempts is not None:
        return WorkloadPlan(
            workload.key,
            PREEMPTS,
            reasons=(PREEMPTING_IGNORED,),
            schedulable_after=schedulable_after,
            preempts=preempts,
        )
    mine = [item for item in launched if item.trigger == workload.key]
    add_nodes: dict[str, int] = {}
    for item in mine:
        add_nodes[item.group.name] = add_nodes.get(item.group.name, 0) + 1
    reasons = planner.reasons.get(workload.key, []) + beyond_catalogue(workload, mine)
    if not planner.needs_new.get(workload.key):
        verdict = RUNS_NOW
    else:
        verdict = BLOCKED if reasons and not mine else SCALE_UP
    return WorkloadPlan(
        workload=workload.key,
        verdict=verdict,
        add_nodes=add_nodes,
        reservations=tuple(sorted({i.reservation for i in mine if i.reservation})),
        reasons=tuple(reasons),
        schedulable_after=schedulable_after,
        stranded_gpus=sum(stranded[item.node.name][0] for item in mine),
    )


def beyond_catalogue(workload: Workload, mine: list[Launched]) -> list[str]:
    """Said on a workload without GPUs that the profile launches catalogue (GPU) types
    for, where the NodePool also allows general-purpose types (c, m, r) the catalogue
    lacks: Karpenter would launch one of those if cheaper, the model cannot."""
    if any(p.gpu_count for p in workload.pods):
        return []
    said = []
    for item in mine:
        note = next((n for n in item.group.notes if n.startswith(BEYOND_CATALOGUE)), None)
        if note is not None:
            pool = item.group.autoscaler.name if item.group.autoscaler else item.group.name
            said.append(
                f"NodePool {pool}: {note}; the type planned here ({item.group.name}) is "
                "from the catalogue's GPU types only, not necessarily the one Karpenter "
                "launches"
            )
    return list(dict.fromkeys(said))


def _additions(launched: list[Launched]) -> tuple[NodeAddition, ...]:
    """Launched nodes grouped by (group, domain, trigger, reservation), in launch order."""
    grouped: dict[tuple[str, str, str, str | None], list[Launched]] = {}
    for item in launched:
        key = (
            item.group.name,
            repr(sorted(item.placement.items())),
            item.trigger,
            item.reservation,
        )
        grouped.setdefault(key, []).append(item)
    return tuple(
        NodeAddition(
            node_group=group_name,
            count=len(items),
            placement=dict(items[0].placement),
            node_names=tuple(i.node.name for i in items),
            workloads=(trigger,),
            cost_per_hour=costs.round_money(sum(_price(i) for i in items)),
            reservation=reservation,
        )
        for (group_name, _, trigger, reservation), items in grouped.items()
    )
