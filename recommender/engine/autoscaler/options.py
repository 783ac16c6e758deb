"""Where new nodes could come from, and the cheapest way to run a workload with them.

A ``Slot`` is one node group's placement domain (optionally a reservation's
paid, unprovisioned capacity); an ``Option`` is new nodes from one or more
slots under which the whole workload runs, found by asking the SAME
``place_one`` as the scheduler simulation.

The search is bounded: per (group, placement domain) one probe at the largest
count the domain allows, then a binary search for the smallest count that
works; options that cannot beat the best price so far are never probed::

    purchase slots, cheapest node first ──► GPU-arithmetic lower bound
    ──► gallop up (low, 2·low, … room) ──► binary search down ──► Option

``OptionSearch`` carries what the search reads and the joint plan writes (the
state, slots used, names taken); ``joint.JointPlanner`` extends it with the
per-workload decisions, ``mixed`` and ``explain`` read it.

Pure: no Django, no I/O, no clock (``at`` is passed in).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from recommender.engine import costs
from recommender.engine.autoscaler.groups import upcoming_nodes
from recommender.engine.autoscaler.plan import (
    NodeAddition,
    lone_node_rejection,
    new_node,
    options_for,
    pod_shape,
    unique_name,
)
from recommender.engine.scheduler.placement import (
    PlacementOptions,
    WorkloadOutcome,
    nodes_matching,
    place_one,
)
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload, pod_gpu_milli
from reservations.idle import reserved_nodes
from topology.model.hardware import (
    WHOLE_GPU_MILLI,
    Cluster,
    Node,
    NodeGroup,
    NodePlacement,
    Pod,
    Reservation,
    Taint,
)

RESERVATION_TAINT_KEY = "capacityweb.io/reservation"


@dataclass(frozen=True, slots=True)
class Slot:
    """Where an option's nodes come from: a group's placement domain (and whose paid capacity)."""

    group: NodeGroup
    index: int
    placement: NodePlacement
    order: int  # search order: the last tie-break, so the result is deterministic
    reservation: str | None = None


@dataclass(frozen=True, slots=True)
class Option:
    """One way to run a workload with new nodes: ``better`` says which wins.

    ``parts``: how many new nodes from which slot, usually one slot; several
    when no single slot can host the whole workload (``mixed``).
    ``nodes`` holds them part by part. ``waste``: least-waste's score of the new
    nodes (``new_nodes_waste``), what orders options whose price is unknown.
    """

    cost_per_hour: float
    parts: tuple[tuple[Slot, int], ...]
    nodes: tuple[Node, ...]
    state: ClusterState
    outcome: WorkloadOutcome
    waste: float = 0.0

    @property
    def price_known(self) -> bool:
        """False when a part buys nodes of a group without a known price (paid reserved
        capacity is known: it costs nothing more)."""
        return all(slot_priced(slot) for slot, _ in self.parts)

    @property
    def count(self) -> int:
        return sum(count for _, count in self.parts)

    @property
    def slot(self) -> Slot:
        return self.parts[0][0]


class OptionSearch:
    """The joint plan's ledger (state, slots used, names taken, reservations) and the
    search for options over it; ``joint.JointPlanner`` decides with it."""

    def __init__(self, cluster: Cluster, state: ClusterState, at: datetime, policy: str) -> None:
        self.cluster = cluster
        self.state = state
        self.at = at
        self.policy = policy
        self.taken_names = set(state.node_names())
        self.groups = tuple(sorted(cluster.node_groups, key=lambda g: g.name))
        # nodes a group is already adding (target size minus registered, GPU-unready
        # members) join the state, as in cluster-autoscaler's simulation; requested ones
        # count towards the group's size, so its room is max size minus target size
        requested, upcoming = upcoming_nodes(cluster, self.groups, self.taken_names)
        state.add_nodes(p.node for p in upcoming)
        self.upcoming: dict[str, str] = {p.node.name: p.group.name for p in upcoming}
        self.added_per_group: dict[str, int] = dict(requested)
        self.added_per_slot: dict[tuple[str, int], int] = {}
        self.reservation_nodes_used: dict[str, int] = {}
        self.additions: list[NodeAddition] = []
        self.active = tuple(
            r for r in sorted(cluster.reservations, key=lambda r: r.name) if r.active_at(at)
        )
        self.reserved = {
            r.name: tuple(n.name for n in reserved_nodes(cluster, r)) for r in self.active
        }
        self.provisioned: dict[str, list[str]] = {}  # reservation → nodes provisioned for it
        self.paid_capacity: dict[str, list[Reservation]] = {}  # group → its paid capacity
        for r in self.active:
            if r.node_group is not None:
                self.paid_capacity.setdefault(r.node_group.node_group, []).append(r)
        self.compat_cache: dict[tuple[str, str], str | None] = {}
        self.restrict_probes = True
        self.candidates_for: str | None = None
        self.candidates: list[str] = []
        self.mix: tuple[Pod, ...] = ()
        # some pod repels others from a node's domains: every placement may then differ
        self.any_anti_affinity = any(p.pod_terms.anti_affinity for p in cluster.pods)

    # -- reservations

    def owned(self, namespace: str) -> tuple[Reservation, ...]:
        return tuple(r for r in self.active if r.may_use(namespace))

    def grants(self, namespace: str) -> dict[str, frozenset[str]]:
        names = [n for r in self.owned(namespace) for n in self.reserved[r.name]]
        names += [n for r in self.owned(namespace) for n in self.provisioned.get(r.name, [])]
        return {namespace: frozenset(names)} if names else {}

    def options(self, grants: Mapping[str, frozenset[str]]) -> PlacementOptions:
        return options_for(self.policy, self.at, grants, self.mix)

    # -- node-group options

    def room(self, group: NodeGroup, index: int, placement: NodePlacement) -> int:
        group_room = group.max_size - group.current_size - self.added_per_group.get(group.name, 0)
        slot_room = placement.max_new_nodes - self.added_per_slot.get((group.name, index), 0)
        return max(0, min(group_room, slot_room))

    def purchase_room(
        self, group: NodeGroup, index: int, placement: NodePlacement, namespace: str
    ) -> int:
        """Room for nodes bought by ``namespace``: the group's room less the paid,
        unprovisioned nodes of reservations it does not own. Those count against the
        group's max size when their owners start them, so buying into them would
        leave the paying team blocked while its reservation is billed idle."""
        group_room = group.max_size - group.current_size - self.added_per_group.get(group.name, 0)
        slot_room = placement.max_new_nodes - self.added_per_slot.get((group.name, index), 0)
        return max(0, min(group_room - self.held_for_others(group, namespace), slot_room))

    def held_for_others(self, group: NodeGroup, namespace: str) -> int:
        """Paid, not yet provisioned nodes of ``group`` reserved for other namespaces."""
        return sum(
            max(0, r.node_group.count - self.reservation_nodes_used.get(r.name, 0))
            for r in self.paid_capacity.get(group.name, ())
            if r.node_group is not None and not r.may_use(namespace)
        )

    def placements(self, group: NodeGroup) -> tuple[NodePlacement, ...]:
        """Where a group's new nodes may land; a group without any lands with no domain labels."""
        if group.placements:
            return group.placements
        return (NodePlacement(labels={}, max_new_nodes=group.max_size),)

    def compatible(self, group: NodeGroup, workload: Workload) -> str | None:
        """None when every pod of the workload fits an empty template node, else why not.

        The template is tried bare, then in each of the group's domains: a pod that
        needs a zone (a zonal volume, a selector) fits only a node landing there."""
        for pod in workload.pods:
            key = (group.name, pod_shape(pod))
            if key not in self.compat_cache:
                self.compat_cache[key] = self.template_rejection(group, pod)
            if (reason := self.compat_cache[key]) is not None:
                return f"{group.name}: {reason}"
        return None

    def template_rejection(self, group: NodeGroup, pod: Pod) -> str | None:
        domains = dict.fromkeys(
            [(), *(tuple(sorted(p.labels.items())) for p in self.placements(group))]
        )
        first_reason = None
        for labels in domains:
            probe = new_node(group, dict(labels), f"{group.name}-template")
            reason = lone_node_rejection(self.cluster, probe, pod, self.policy, self.at)
            if reason is None:
                return None
            first_reason = first_reason or reason
        return first_reason

    def cheapest_option(self, workload: Workload) -> Option | None:
        """Cheapest (group, domain, count) under which the whole workload runs.

        Groups are tried cheapest node first. GPU arithmetic bounds the count
        from below (GPUs still missing after the domain's free ones, over the
        template's GPUs per node); a slot whose bound cannot fit in its room,
        or whose bound already costs no less than the best option, is never
        probed. Without a required level every slot is alike, so only the
        first slot with room is probed.
        """
        best: Option | None = None
        grants = self.grants(workload.namespace)
        free = self.free_milli_by_domain(workload)
        searched: set[str] = set()
        for slot, room in self.purchase_slots(workload):
            group = slot.group
            if group.name in searched and self.slots_alike(workload):
                continue  # without a required level, a group's slots are alike
            low = self.fewest_nodes(workload, group, slot.placement, free)
            if room < low or (best and not may_beat(best, slot, low)):
                continue
            option = self.search(workload, slot, room, grants, low, best)
            if option and (best is None or better(option, best)):
                best = option
            searched.add(group.name)
        return best

    def slots_alike(self, workload: Workload) -> bool:
        """Whether every placement of a group serves the workload alike: no required
        level, and no pod whose verdict depends on the pods in a node's domains
        (inter-pod terms of its own, or any pod's required anti-affinity)."""
        if workload.required_topology is not None:
            return False
        return not self.any_anti_affinity and not any(p.pod_terms for p in workload.pods)

    def purchase_slots(self, workload: Workload) -> Iterator[tuple[Slot, int]]:
        """Where new nodes can be bought for the workload, priced groups first (an unknown
        price is not 0), cheapest node first, then group name, then placement order:
        each slot with its room for the workload."""
        order = 0
        ranked = sorted(
            self.groups, key=lambda g: (not g.price_known, g.price_per_node_hour, g.name)
        )
        for group in ranked:
            if self.compatible(group, workload) is not None:
                continue
            for index, placement in enumerate(self.placements(group)):
                order += 1
                if not self.lands_in_a_domain(workload, group, placement):
                    continue
                if not labels_admit_any(new_node(group, placement.labels, "probe"), workload):
                    continue  # no pod may land in this domain (selector, volume zone)
                room = min(
                    self.purchase_room(group, index, placement, workload.namespace),
                    self.most_nodes(workload, group),
                )
                yield Slot(group, index, placement, order), room

    def lands_in_a_domain(
        self, workload: Workload, group: NodeGroup, placement: NodePlacement
    ) -> bool:
        """New nodes with no label at the required level are in no domain: useless to it."""
        key = workload.required_topology
        return (
            key is None or (placement.labels.get(key) or group.template.labels.get(key)) is not None
        )

    def most_nodes(self, workload: Workload, group: NodeGroup) -> int:
        """Upper bound: enough new nodes to host every member on new nodes alone."""
        per_pod = uniform_whole_gpus(workload)
        if per_pod and group.template.gpu_count >= per_pod:
            return -(-len(workload.pods) // (group.template.gpu_count // per_pod))
        return len(workload.pods)

    def domain_key(self, workload: Workload) -> str | None:
        return workload.required_topology

    def free_milli_by_domain(self, workload: Workload) -> dict[str | None, list[int]]:
        """Free whole GPUs and free GPU milli of candidate nodes per domain of the
        required level (None: the whole cluster): ``[free milli, members that fit]``."""
        key = self.domain_key(workload)
        per_pod = uniform_whole_gpus(workload)
        free: dict[str | None, list[int]] = {}
        for name in self.candidate_names(workload):
            domain = self.state.node(name).labels.get(key) if key else None
            entry = free.setdefault(domain, [0, 0])
            entry[0] += self.state.alloc(name).free_gpu_milli
            if per_pod:
                entry[1] += self.state.free_gpus(name) // per_pod
        return free

    def fewest_nodes(
        self,
        workload: Workload,
        group: NodeGroup,
        placement: NodePlacement,
        free: Mapping[str | None, list[int]],
    ) -> int:
        """Lower bound on new nodes from GPU arithmetic.

        Members of g whole GPUs each: those the domain's free GPUs cannot take
        (node by node, ⌊free/g⌋), over ⌊template GPUs/g⌋ per new node. Other
        workloads: GPU milli still missing over the template's GPU milli.
        """
        key = self.domain_key(workload)
        domain = (placement.labels.get(key) or group.template.labels.get(key)) if key else None
        free_milli, members_fitting = free.get(domain, [0, 0])
        per_pod = uniform_whole_gpus(workload)
        if per_pod:
            per_node = group.template.gpu_count // per_pod
            missing = workload.min_member - members_fitting
        else:
            per_node = group.template.gpu_count * WHOLE_GPU_MILLI
            missing = workload.floor_gpu_milli - free_milli
        if missing <= 0 or per_node <= 0:
            return 1
        return max(1, -(-missing // per_node))

    def cheapest_reserved_option(self, workload: Workload) -> Option | None:
        """Paid-but-unprovisioned reserved nodes the owner may start, at no extra cost."""
        best: Option | None = None
        groups = {g.name: g for g in self.groups}
        for order, reservation in enumerate(self.owned(workload.namespace)):
            capacity = reservation.node_group
            group = groups.get(capacity.node_group) if capacity else None
            if capacity is None or group is None:
                continue
            left = capacity.count - self.reservation_nodes_used.get(reservation.name, 0)
            for index, placement in enumerate(self.placements(group)):
                room = min(left, self.room(group, index, placement))
                if room < 1:
                    continue
                slot = Slot(group, index, placement, order, reservation.name)
                option = self.search(workload, slot, room, self.grants(workload.namespace))
                if option and (best is None or better(option, best)):
                    best = option
        return best

    def search(
        self,
        workload: Workload,
        slot: Slot,
        most: int,
        grants: Mapping[str, frozenset[str]],
        low: int = 1,
        best: Option | None = None,
    ) -> Option | None:
        """Smallest count in [low, most] under which the whole workload runs (None if none).

        Galloping up from ``low`` (low, 2·low, 4·low … most), then a binary
        search down to the smallest count that works: more nodes in a domain
        never make a workload fit worse. Failed probes are cheap, successful
        ones bind a whole gang, so the search ascends. Counts that cannot
        beat ``best`` are not probed.
        """
        failed, count = low - 1, low
        found: Option | None = None
        while found is None:
            if best is not None and not may_beat(best, slot, count):
                return None
            found = self.probe(workload, slot, count, grants)
            if found is None:
                if count >= most:
                    return None
                failed, count = count, min(most, count * 2)
        while failed + 1 < found.count:
            middle = (failed + found.count) // 2
            trial = self.probe(workload, slot, middle, grants)
            if trial is None:
                failed = middle
            else:
                found = trial
        return found

    def probe(
        self, workload: Workload, slot: Slot, count: int, grants: Mapping[str, frozenset[str]]
    ) -> Option | None:
        """Place the workload on the slot's candidate nodes plus ``count`` new ones."""
        return self.probe_parts(workload, ((slot, count),), grants)

    def probe_parts(
        self,
        workload: Workload,
        parts: tuple[tuple[Slot, int], ...],
        grants: Mapping[str, frozenset[str]],
    ) -> Option | None:
        """Place the workload on candidate nodes plus the parts' new nodes.

        The probe state holds only existing nodes that could host a member
        (see ``candidate_names``): the filters would reject the others anyway,
        and a probe then costs the candidates, not the whole cluster. The
        chosen option is confirmed on the full state in ``take``. Every part
        lands in the first part's domain of the required level.
        """
        state = self.probe_state(workload, parts[0][0])
        taken = set(self.taken_names)
        nodes = tuple(
            self.fresh_node(slot.group, slot.placement, taken, slot.reservation)
            for slot, count in parts
            for _ in range(count)
        )
        for node in nodes:
            state.add_node(node)
        grants = _with_paid_nodes(grants, workload, nodes)
        outcome = place_one(self.cluster, workload, state, self.options(grants), diagnose=False)
        if not outcome.placed:
            return None
        cost = sum(part_cost(slot, count) for slot, count in parts)
        waste = new_nodes_waste(workload, nodes, outcome)
        return Option(costs.round_money(cost), parts, nodes, state, outcome, waste)

    def probe_state(self, workload: Workload, slot: Slot) -> ClusterState:
        if not self.restrict_probes:
            return self.state.copy()
        key = workload.required_topology
        domain = (
            (slot.placement.labels.get(key) or slot.group.template.labels.get(key)) if key else None
        )
        names = [
            n
            for n in self.candidate_names(workload)
            if key is None or self.state.node(n).labels.get(key) == domain
        ]
        return self.state.subset(names)  # owns nothing: writes clone

    def candidate_names(self, workload: Workload) -> list[str]:
        """Existing nodes that might host a member: the pods' common nodeSelector matches
        and enough GPU is free for the smallest member (cached per workload)."""
        if self.candidates_for == workload.key:
            return self.candidates
        least_milli = min(pod_gpu_milli(p) for p in workload.pods)
        names = nodes_matching(self.cluster, self.state, workload.common_selector)
        if least_milli > 0:
            alloc = self.state.alloc
            names = [n for n in names if alloc(n).free_gpu_milli >= least_milli]
        self.candidates_for, self.candidates = workload.key, names
        return names

    def confirmed(self, workload: Workload, option: Option) -> Option | None:
        """The option replayed on the full state (what the plan carries forward)."""
        state = self.state.copy()
        for node in option.nodes:
            state.add_node(node)
        grants = _with_paid_nodes(self.grants(workload.namespace), workload, option.nodes)
        outcome = place_one(self.cluster, workload, state, self.options(grants), diagnose=False)
        if not outcome.placed:
            return None
        return replace(option, state=state, outcome=outcome)

    def fresh_node(
        self, group: NodeGroup, placement: NodePlacement, taken: set[str], reservation: str | None
    ) -> Node:
        base = f"{group.name}-new" if reservation is None else f"{group.name}-{reservation}"
        node = new_node(group, placement.labels, unique_name(f"{base}-{len(taken)}", taken))
        if reservation is None:
            return node
        taint = Taint(RESERVATION_TAINT_KEY, reservation, "NoSchedule")
        return replace(node, taints=(*node.taints, taint))


def _with_paid_nodes(
    grants: Mapping[str, frozenset[str]], workload: Workload, nodes: Sequence[Node]
) -> Mapping[str, frozenset[str]]:
    """The grants plus new nodes of the workload's reservations (tainted for it) it may use."""
    paid = {n.name for n in nodes if any(t.key == RESERVATION_TAINT_KEY for t in n.taints)}
    if not paid:
        return grants
    mine = grants.get(workload.namespace, frozenset())
    return {**grants, workload.namespace: mine | paid}


def part_cost(slot: Slot, count: int) -> float:
    """New nodes of one slot per hour; paid reserved capacity costs nothing more."""
    if slot.reservation is not None:
        return 0.0
    return costs.nodes_cost_per_hour(count, slot.group.price_per_node_hour)


def slot_priced(slot: Slot) -> bool:
    return slot.reservation is not None or slot.group.price_known


def better(option: Option, best: Option) -> bool:
    return option_rank(option) < option_rank(best)


def option_rank(option: Option) -> tuple[bool, float, int, int]:
    """Priced options first, cheapest first: cluster-autoscaler's price expander skips an
    option whose node price it cannot get (``expander/price/price.go`` ``BestOption``:
    "Failed to calculate node price ... continue"), so an unknown price never wins on
    price. Options without a known price are ordered as the default expander orders any
    option, least-waste (``expander/waste/waste.go``); then fewest nodes, then the
    search order (group name, placement)."""
    if option.price_known:
        return (False, option.cost_per_hour, option.count, option.slot.order)
    return (True, option.waste, option.count, option.slot.order)


def may_beat(best: Option, slot: Slot, count: int) -> bool:
    """Whether ``count`` new nodes of ``slot`` could rank before ``best`` (bounds only)."""
    if not best.price_known:
        return True  # a priced slot beats it, an unpriced one may waste less
    if not slot_priced(slot):
        return False
    price = 0.0 if slot.reservation else slot.group.price_per_node_hour
    return price <= 0 or count * price < best.cost_per_hour


def new_nodes_waste(workload: Workload, nodes: Sequence[Node], outcome: WorkloadOutcome) -> float:
    """``waste.go`` over the new nodes: (allocatable - requested) / allocatable for CPU
    plus the same for memory, the requests being those of the workload's pods bound to
    the new nodes (allocatable, not capacity, as ``expander.waste_score``)."""
    names = {node.name for node in nodes}
    pods = {pod.key: pod for pod in workload.pods}
    bound = [pods[b.pod] for b in outcome.bindings if b.node in names and b.pod in pods]
    score = 0.0
    for available, requested in (
        (sum(n.allocatable.cpu_milli for n in nodes), sum(p.requests.cpu_milli for p in bound)),
        (
            sum(n.allocatable.memory_bytes for n in nodes),
            sum(p.requests.memory_bytes for p in bound),
        ),
    ):
        if available > 0:
            score += (available - requested) / available
    return score


def uniform_whole_gpus(workload: Workload) -> int:
    """g when every member asks for exactly g whole device-plugin GPUs and nothing else
    GPU-like; 0 otherwise (then only milli arithmetic applies). Also 0 where a GPU
    asked may be a counted unit smaller than a physical GPU (a time-slicing replica,
    a MIG-single instance): per-GPU member arithmetic would then overcount."""
    if workload.least_gpus < workload.gpus:
        return 0
    counts = {
        p.gpu.count if p.gpu and not p.gpu.is_share and not p.claims else 0 for p in workload.pods
    }
    return counts.pop() if len(counts) == 1 else 0


def labels_admit_any(node: Node, workload: Workload) -> bool:
    """Does some pod's nodeSelector and required node affinity admit the node's labels?"""
    labels = node.labels
    return any(
        all(labels.get(k) == v for k, v in pod.node_selector.items())
        and (not pod.affinity or any(term.matches(labels) for term in pod.affinity))
        for pod in workload.pods
    )
