"""The autoscaler simulation: what would be added, naive and joint.

Two modes over the same model and the same scheduler simulation:

- ``naive`` is cluster-autoscaler without ProvisioningRequest. Pod by pod,
  it asks "does a template's allocatable *count* cover this pod?", picks a
  group with the least-waste expander, and never looks at gangs, GPU models,
  partitions, shares, reservations or where the new node lands. Only after
  deciding do we ask the real scheduler what actually runs on the result:
  whatever does not, and every added GPU nobody uses, is stranded.
- ``joint`` asks the scheduler first. Per workload, in priority order::

      existing nodes ──► idle owned reservations ──► paid, unprovisioned
      reserved nodes ──► cheapest node-group option in a concrete domain
      ──► blocked, with the reason

  Every step is a call to the SAME ``place_one``; the state is carried
  forward so the second gang sees what the first one took.

The search is bounded: per (group, placement domain) one probe at the largest
count the domain allows, then a binary search for the smallest count that
works; options that cannot beat the best price so far are never probed.

Pure: no Django, no I/O, no clock (``at`` is passed in).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from recommender.engine import costs
from recommender.engine.admission import held
from recommender.engine.placement import (
    PlacementOptions,
    WorkloadOutcome,
    nodes_matching,
    place_one,
)
from recommender.engine.state import ClusterState
from recommender.engine.workloads import Workload, _pod_gpu_milli, pod_workload
from reservations.idle import reserved_nodes
from topology.hardware import (
    HOSTNAME_LABEL,
    WHOLE_GPU_MILLI,
    Cluster,
    Node,
    NodeGroup,
    NodePlacement,
    Pod,
    Reservation,
    Taint,
)

NAIVE = "naive"
JOINT = "joint"
RESERVATION_TAINT_KEY = "capacityweb.io/reservation"

RUNS_NOW = "runs_now"
USES_RESERVATION = "uses_reservation"
RUNS_AFTER_SCALE_UP = "runs_after_scale_up"
BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class NodeAddition:
    """New nodes of one group in one placement domain, bought for some workloads.

    ``reservation`` names the reservation whose paid capacity these nodes
    provision (their cost is then already paid: ``cost_per_hour`` 0).
    """

    node_group: str
    count: int
    placement: Mapping[str, str]
    node_names: tuple[str, ...]
    workloads: tuple[str, ...]
    cost_per_hour: float
    reservation: str | None = None


@dataclass(frozen=True, slots=True)
class WorkloadPlan:
    """One workload's outcome under one mode."""

    workload: str
    verdict: str
    add_nodes: Mapping[str, int] = field(default_factory=dict)
    reservations: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    schedulable_after: bool = False
    stranded_gpus: int = 0
    changes: tuple[str, ...] = ()  # what to apply to the workload (tolerations, selectors)


@dataclass(frozen=True, slots=True)
class ScaleUpPlan:
    mode: str
    additions: tuple[NodeAddition, ...]
    outcomes: Mapping[str, WorkloadPlan]
    cost_per_hour: float
    stranded_gpus: int = 0
    stranded_per_hour: float = 0.0


def scale_up(
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    mode: str,
    at: datetime,
    policy: str = "default",
) -> ScaleUpPlan:
    """What ``mode`` would add for ``pending``; never mutates ``state``."""
    if mode == NAIVE:
        from recommender.engine.scaleup_naive import naive_scale_up

        return naive_scale_up(cluster, pending, state=state, at=at, policy=policy)
    if mode == JOINT:
        return JointPlanner(cluster, state.copy(), at, policy).plan(pending)
    raise ValueError(f"unknown scale-up mode {mode!r}")


# --- shared helpers ---------------------------------------------------------------


def new_node(group: NodeGroup, placement: Mapping[str, str], name: str) -> Node:
    """A template node made concrete: its name, its domain labels, its group and price."""
    labels = {**group.template.labels, **placement, HOSTNAME_LABEL: name}
    return replace(
        group.template,
        name=name,
        labels=labels,
        node_group=group.name,
        price_per_node_hour=group.price_per_node_hour,
    )


def unique_name(base: str, taken: set[str]) -> str:
    """``base`` or ``base-2``, ``base-3``…: never collides with an existing node."""
    name, suffix = base, 1
    while name in taken:
        suffix += 1
        name = f"{base}-{suffix}"
    taken.add(name)
    return name


def options_for(
    policy: str,
    at: datetime,
    grants: Mapping[str, frozenset[str]] | None = None,
    mix: tuple[Pod, ...] = (),
) -> PlacementOptions:
    """``mix``: the pods FGD expects (the evaluation's pending pods), one for every call."""
    return PlacementOptions(
        policy=policy, reservation_grants=dict(grants or {}), at=at, workload_mix=mix
    )


def workload_mix(pending: Sequence[Workload]) -> tuple[Pod, ...]:
    """The pending pods, in order: the expected workload every pass scores against."""
    return tuple(p for w in pending for p in w.pods)


def without_topology(pod: Pod) -> Workload:
    """A pod as a lone workload, topology and gang ignored (how a pod-by-pod autoscaler sees it)."""
    return replace(pod_workload(pod), required_topology=None, preferred_topology=None)


def gpus_text(gpu_milli: int) -> str:
    """GPU counts for humans: whole where whole (16), else to a tenth (2.5)."""
    if gpu_milli % WHOLE_GPU_MILLI == 0:
        return str(gpu_milli // WHOLE_GPU_MILLI)
    return f"{gpu_milli / WHOLE_GPU_MILLI:.1f}"


def workload_gpu_milli(workload: Workload) -> int:
    return round(workload.gpus * WHOLE_GPU_MILLI)


def lone_node_rejection(
    cluster: Cluster, node: Node, pod: Pod, policy: str, at: datetime
) -> str | None:
    """Why the real scheduler would refuse ``pod`` on an empty ``node`` (None: it fits).

    This is how a template is judged: not by counts but by the same filters
    that will judge the real node, on a one-node state (of a one-node cluster
    with the same topology and device classes; no reservations, as a new node
    is never a reserved one).
    """
    alone = replace(cluster, nodes=(node,), pods=(), gangs=(), reservations=())
    state = ClusterState.from_cluster(alone)
    outcome = place_one(alone, without_topology(pod), state, options_for(policy, at))
    if outcome.placed:
        return None
    return outcome.diagnosis.summary if outcome.diagnosis else "does not fit"


def _labels_admit_any(node: Node, workload: Workload) -> bool:
    """Does some pod's nodeSelector and required node affinity admit the node's labels?"""
    labels = node.labels
    return any(
        all(labels.get(k) == v for k, v in pod.node_selector.items())
        and (not pod.affinity or any(term.matches(labels) for term in pod.affinity))
        for pod in workload.pods
    )


def pod_shape(pod: Pod) -> str:
    """A key equal for pods the scheduler cannot tell apart (names aside)."""
    return repr(
        (
            pod.namespace,
            pod.requests,
            pod.gpu,
            pod.claims,
            sorted(pod.node_selector.items()),
            pod.affinity,
            pod.tolerations,
        )
    )


# --- joint ---------------------------------------------------------------------------


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
    """One way to run a workload with new nodes: cheapest wins, then fewest nodes, then order.

    ``parts``: how many new nodes from which slot, usually one slot; several
    when no single slot can host the whole workload (``scaleup_mixed``).
    ``nodes`` holds them part by part.
    """

    cost_per_hour: float
    parts: tuple[tuple[Slot, int], ...]
    nodes: tuple[Node, ...]
    state: ClusterState
    outcome: WorkloadOutcome

    @property
    def count(self) -> int:
        return sum(count for _, count in self.parts)

    @property
    def slot(self) -> Slot:
        return self.parts[0][0]


class JointPlanner:
    """Carries the state, the slots used and the names taken across workloads."""

    def __init__(self, cluster: Cluster, state: ClusterState, at: datetime, policy: str) -> None:
        self.cluster = cluster
        self.state = state
        self.at = at
        self.policy = policy
        self.taken_names = set(state.node_names())
        self.added_per_group: dict[str, int] = {}
        self.added_per_slot: dict[tuple[str, int], int] = {}
        self.reservation_nodes_used: dict[str, int] = {}
        self.additions: list[NodeAddition] = []
        self.groups = tuple(sorted(cluster.node_groups, key=lambda g: g.name))
        self.active = tuple(
            r for r in sorted(cluster.reservations, key=lambda r: r.name) if r.active_at(at)
        )
        self.reserved = {
            r.name: tuple(n.name for n in reserved_nodes(cluster, r)) for r in self.active
        }
        self.provisioned: dict[str, list[str]] = {}  # reservation → nodes provisioned for it
        self.compat_cache: dict[tuple[str, str], str | None] = {}
        self.restrict_probes = True
        self.candidates_for: str | None = None
        self.candidates: list[str] = []
        self.mix: tuple[Pod, ...] = ()

    def plan(self, pending: Sequence[Workload]) -> ScaleUpPlan:
        self.mix = workload_mix(pending)
        outcomes = {w.key: self.plan_one(w) for w in pending}
        total = costs.round_money(sum(a.cost_per_hour for a in self.additions))
        return ScaleUpPlan(JOINT, tuple(self.additions), outcomes, total)

    def plan_one(self, workload: Workload) -> WorkloadPlan:
        hold = held(workload, self.cluster.topology, len(self.state.node_names()))
        if hold is not None:
            return WorkloadPlan(workload.key, hold.verdict, reasons=hold.reasons)
        outcome = place_one(self.cluster, workload, self.state, self.options({}), diagnose=False)
        if outcome.placed:
            riding = self.ride_additions(workload, outcome)
            if riding:
                return self.riding_plan(workload, outcome, riding)
            return self.placed_plan(workload, outcome, RUNS_NOW, ())
        grants = self.grants(workload.namespace)
        if grants:
            outcome = place_one(
                self.cluster, workload, self.state, self.options(grants), diagnose=False
            )
            if outcome.placed:
                return self.placed_plan(workload, outcome, USES_RESERVATION, ())
        option = self.best_option(workload)
        if option is None:
            return WorkloadPlan(workload.key, BLOCKED, reasons=self.blocked_reasons(workload))
        return self.take(workload, option)

    def best_option(self, workload: Workload) -> Option | None:
        """Reserved capacity first, then the cheapest purchase; confirmed on the full state.

        Should the full state disagree with the probe (a greedy choice among
        more nodes), the search is repeated on full-state probes.
        """
        self.candidates_for = None
        for restrict in (True, False):
            self.restrict_probes = restrict
            option = (
                self.cheapest_reserved_option(workload)
                or self.cheapest_option(workload)
                or self.mixed_option(workload)
            )
            if option is None:
                return None
            if (confirmed := self.confirmed(workload, option)) is not None:
                return confirmed
        return None

    # -- reservations

    def owned(self, namespace: str) -> tuple[Reservation, ...]:
        return tuple(r for r in self.active if r.may_use(namespace))

    def grants(self, namespace: str) -> dict[str, frozenset[str]]:
        names = [n for r in self.owned(namespace) for n in self.reserved[r.name]]
        names += [n for r in self.owned(namespace) for n in self.provisioned.get(r.name, [])]
        return {namespace: frozenset(names)} if names else {}

    def options(self, grants: Mapping[str, frozenset[str]]) -> PlacementOptions:
        return options_for(self.policy, self.at, grants, self.mix)

    def used_reservations(self, outcome: WorkloadOutcome) -> tuple[str, ...]:
        bound = {b.node for b in outcome.bindings}
        return tuple(
            r.name
            for r in self.active
            if bound & {*self.reserved[r.name], *self.provisioned.get(r.name, [])}
        )

    def changes(self, workload: Workload, outcome: WorkloadOutcome) -> tuple[str, ...]:
        """What the pods must carry to land where the plan puts them (tolerations, selectors)."""
        changes: set[str] = set()
        pods = {p.key: p for p in workload.pods}
        for binding in outcome.bindings:
            pod = pods.get(binding.pod)
            node = self.state.node(binding.node)
            for taint in node.taints:
                if pod is not None and not _tolerated(pod, taint):
                    changes.add(f"add toleration {_taint_text(taint)}")
        for name in self.used_reservations(outcome):
            reservation = next(r for r in self.active if r.name == name)
            if reservation.node_selector:
                selector = ",".join(
                    f"{k}={v}" for k, v in sorted(reservation.node_selector.items())
                )
                changes.add(f"add nodeSelector {selector}")
        return tuple(sorted(changes))

    def ride_additions(self, workload: Workload, outcome: WorkloadOutcome) -> list[NodeAddition]:
        """The additions (bought for earlier workloads) this workload's pods land on.

        State carries forward, so a later workload may fit in room left on nodes
        the plan adds for an earlier one: it does not run now, it runs once those
        nodes exist, and the addition then serves it too.
        """
        bound = {b.node for b in outcome.bindings}
        riding = []
        for index, addition in enumerate(self.additions):
            if bound & set(addition.node_names):
                addition = replace(addition, workloads=(*addition.workloads, workload.key))
                self.additions[index] = addition
                riding.append(addition)
        return riding

    def riding_plan(
        self, workload: Workload, outcome: WorkloadOutcome, riding: list[NodeAddition]
    ) -> WorkloadPlan:
        paid = any(a.reservation is not None for a in riding)
        verdict = USES_RESERVATION if paid else RUNS_AFTER_SCALE_UP
        reasons = tuple(
            f"fits on the {a.node_group} node(s) added for {a.workloads[0]}" for a in riding
        )
        return self.placed_plan(workload, outcome, verdict, reasons)

    def placed_plan(
        self, workload: Workload, outcome: WorkloadOutcome, verdict: str, reasons: tuple[str, ...]
    ) -> WorkloadPlan:
        used = self.used_reservations(outcome)
        if verdict == RUNS_NOW:
            changes: tuple[str, ...] = ()
        else:
            changes = self.changes(workload, outcome)
            reasons = (*reasons, *(f"reuse idle reservation {name}" for name in used), *changes)
        return WorkloadPlan(
            workload.key,
            verdict,
            reservations=used,
            reasons=reasons,
            schedulable_after=True,
            changes=changes,
        )

    # -- node-group options

    def room(self, group: NodeGroup, index: int, placement: NodePlacement) -> int:
        group_room = group.max_size - group.current_size - self.added_per_group.get(group.name, 0)
        slot_room = placement.max_new_nodes - self.added_per_slot.get((group.name, index), 0)
        return max(0, min(group_room, slot_room))

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
            if workload.required_topology is None and group.name in searched:
                continue  # without a required level, a group's slots are alike
            low = self.fewest_nodes(workload, group, slot.placement, free)
            if room < low or (best and low * group.price_per_node_hour >= best.cost_per_hour):
                continue
            option = self.search(workload, slot, room, grants, low, best)
            if option and (best is None or _better(option, best)):
                best = option
            searched.add(group.name)
        return best

    def purchase_slots(self, workload: Workload) -> Iterator[tuple[Slot, int]]:
        """Where new nodes can be bought for the workload, cheapest node first (then
        group name, then placement order): each slot with its room for the workload."""
        order = 0
        for group in sorted(self.groups, key=lambda g: (g.price_per_node_hour, g.name)):
            if self.compatible(group, workload) is not None:
                continue
            for index, placement in enumerate(self.placements(group)):
                order += 1
                if not self.lands_in_a_domain(workload, group, placement):
                    continue
                if not _labels_admit_any(new_node(group, placement.labels, "probe"), workload):
                    continue  # no pod may land in this domain (selector, volume zone)
                room = min(self.room(group, index, placement), self.most_nodes(workload, group))
                yield Slot(group, index, placement, order), room

    def mixed_option(self, workload: Workload) -> Option | None:
        from recommender.engine.scaleup_mixed import mixed_option

        return mixed_option(self, workload)

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
        per_pod = _uniform_whole_gpus(workload)
        if per_pod and group.template.gpu_count >= per_pod:
            return -(-len(workload.pods) // (group.template.gpu_count // per_pod))
        return len(workload.pods)

    def domain_key(self, workload: Workload) -> str | None:
        return workload.required_topology

    def free_milli_by_domain(self, workload: Workload) -> dict[str | None, list[int]]:
        """Free whole GPUs and free GPU milli of candidate nodes per domain of the
        required level (None: the whole cluster): ``[free milli, members that fit]``."""
        key = self.domain_key(workload)
        per_pod = _uniform_whole_gpus(workload)
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
        per_pod = _uniform_whole_gpus(workload)
        if per_pod:
            per_node = group.template.gpu_count // per_pod
            missing = workload.min_member - members_fitting
        else:
            per_node = group.template.gpu_count * WHOLE_GPU_MILLI
            missing = workload_gpu_milli(workload) - free_milli
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
                if option and (best is None or _better(option, best)):
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
        price = 0.0 if slot.reservation else slot.group.price_per_node_hour
        failed, count = low - 1, low
        found: Option | None = None
        while found is None:
            if best is not None and price > 0 and count * price >= best.cost_per_hour:
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
        cost = sum(_part_cost(slot, count) for slot, count in parts)
        return Option(costs.round_money(cost), parts, nodes, state, outcome)

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
        least_milli = min(_pod_gpu_milli(p) for p in workload.pods)
        names = nodes_matching(self.cluster, self.state, _common_selector(workload))
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

    def take(self, workload: Workload, option: Option) -> WorkloadPlan:
        self.state = option.state
        self.taken_names.update(n.name for n in option.nodes)
        start = 0
        for slot, count in option.parts:
            names = tuple(n.name for n in option.nodes[start : start + count])
            start += count
            group = slot.group.name
            self.added_per_group[group] = self.added_per_group.get(group, 0) + count
            key = (group, slot.index)
            self.added_per_slot[key] = self.added_per_slot.get(key, 0) + count
            if slot.reservation is not None:
                used = self.reservation_nodes_used.get(slot.reservation, 0)
                self.reservation_nodes_used[slot.reservation] = used + count
                self.provisioned.setdefault(slot.reservation, []).extend(names)
            self.additions.append(
                NodeAddition(
                    group,
                    count,
                    dict(slot.placement.labels),
                    names,
                    (workload.key,),
                    _part_cost(slot, count),
                    slot.reservation,
                )
            )
        return self.option_plan(workload, option)

    def option_plan(self, workload: Workload, option: Option) -> WorkloadPlan:
        used = self.used_reservations(option.outcome)
        reasons = []
        add_nodes: dict[str, int] = {}
        for slot, count in option.parts:
            where = _placement_text(slot.placement.labels)
            add_nodes[slot.group.name] = add_nodes.get(slot.group.name, 0) + count
            if slot.reservation is not None:
                reasons.append(
                    f"provision {count} paid node(s) of reservation {slot.reservation} "
                    f"in group {slot.group.name}{where} (no extra cost)"
                )
            else:
                reasons.append(
                    f"add {count} node(s) of group {slot.group.name}{where} "
                    f"for {_part_cost(slot, count):g}/h"
                )
        paid = all(slot.reservation is not None for slot, _ in option.parts)
        changes = self.changes(workload, option.outcome)
        return WorkloadPlan(
            workload.key,
            USES_RESERVATION if paid else RUNS_AFTER_SCALE_UP,
            add_nodes=add_nodes,
            reservations=used,
            reasons=(*reasons, *changes),
            schedulable_after=True,
            changes=changes,
        )

    # -- blocked

    def blocked_reasons(self, workload: Workload) -> tuple[str, ...]:
        from recommender.engine.scaleup_blocked import blocked_reasons

        return blocked_reasons(self, workload)


def _with_paid_nodes(
    grants: Mapping[str, frozenset[str]], workload: Workload, nodes: Sequence[Node]
) -> Mapping[str, frozenset[str]]:
    """The grants plus new nodes of the workload's reservations (tainted for it) it may use."""
    paid = {n.name for n in nodes if any(t.key == RESERVATION_TAINT_KEY for t in n.taints)}
    if not paid:
        return grants
    mine = grants.get(workload.namespace, frozenset())
    return {**grants, workload.namespace: mine | paid}


def _part_cost(slot: Slot, count: int) -> float:
    """New nodes of one slot per hour; paid reserved capacity costs nothing more."""
    if slot.reservation is not None:
        return 0.0
    return costs.nodes_cost_per_hour(count, slot.group.price_per_node_hour)


def _better(option: Option, best: Option) -> bool:
    return (option.cost_per_hour, option.count, option.slot.order) < (
        best.cost_per_hour,
        best.count,
        best.slot.order,
    )


def _uniform_whole_gpus(workload: Workload) -> int:
    """g when every member asks for exactly g whole device-plugin GPUs and nothing else
    GPU-like; 0 otherwise (then only milli arithmetic applies)."""
    counts = {
        p.gpu.count if p.gpu and not p.gpu.is_share and not p.claims else 0 for p in workload.pods
    }
    return counts.pop() if len(counts) == 1 else 0


def _common_selector(workload: Workload) -> dict[str, str]:
    """nodeSelector entries every member carries (a node lacking one hosts no member)."""
    first, *rest = workload.pods
    return {
        k: v
        for k, v in first.node_selector.items()
        if all(p.node_selector.get(k) == v for p in rest)
    }


def _tolerated(pod: Pod, taint: Taint) -> bool:
    if taint.effect == "PreferNoSchedule":
        return True
    return any(t.tolerates(taint) for t in pod.tolerations)


def _taint_text(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def _placement_text(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return " in " + ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
