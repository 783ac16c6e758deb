"""The naive autoscaler: cluster-autoscaler as its code scales up.

The model follows ``core/static_autoscaler.go`` ``RunOnce`` and
``core/scaleup/orchestrator/orchestrator.go`` ``ScaleUp`` (see
``NaivePlanner``): gated and expendable pods (priority below
``--expendable-pods-priority-cutoff``, default -10:
``core/podlistprocessor/filter_out_expendable.go``) trigger nothing;
filter-out-schedulable packs pods, highest priority first and one by one (a
gang is just its pods), onto existing and upcoming nodes with the scheduler's
own filters; what is left gets whole options per node group (template from a
live member, binpacking estimator: ``estimator``), the expander chain picks
one (``expander``), and the loop repeats with those nodes upcoming. A new node
lands in the group's FIRST placement domain that still has a slot, then the
next (the autoscaler cannot choose where the cloud puts it), or with no domain
labels at all.

Then the real scheduler runs on the cluster with those nodes: pods that still
do not run, and GPUs on the added nodes that nobody uses, are stranded.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from recommender.engine import costs
from recommender.engine.autoscaler.estimator import Estimate, estimate
from recommender.engine.autoscaler.expander import DEFAULT_EXPANDERS, Option, best_option
from recommender.engine.autoscaler.nodegroupset import balance, similar
from recommender.engine.autoscaler.plan import (
    BLOCKED,
    NAIVE,
    RUNS_NOW,
    NodeAddition,
    ScaleUpPlan,
    WorkloadPlan,
    lone_node_rejection,
    new_node,
    options_for,
    placement_text,
    pod_shape,
    unique_name,
    without_topology,
    workload_mix,
)
from recommender.engine.autoscaler.provisioning import provision
from recommender.engine.scheduler import interpod
from recommender.engine.scheduler.admission import Hold, held
from recommender.engine.scheduler.demand import advertised_gpus
from recommender.engine.scheduler.placement import Placer, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.hardware import GPU_RESOURCE, HOSTNAME_LABEL, Cluster, Node, NodeGroup, Pod

SCALE_UP = "scale_up"
# cluster-autoscaler's --expendable-pods-priority-cutoff default (config/flags/flags.go)
EXPENDABLE_PODS_PRIORITY_CUTOFF = -10
# RunOnce loops the model runs at most (upstream loops every --scan-interval for ever)
LOOP_LIMIT = 50


@dataclass(slots=True)
class PlannedNode:
    """A node cluster-autoscaler asked for (or counts as upcoming)."""

    group: NodeGroup
    node: Node
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


@dataclass(frozen=True, slots=True)
class CaSettings:
    """The cluster-autoscaler flags the model reads (defaults as upstream's flags.go)."""

    version: str = "1.36"
    expanders: tuple[str, ...] = DEFAULT_EXPANDERS  # --expander=a,b
    max_nodes_total: int = 0  # --max-nodes-total (0: no limit)
    # --cores-total / --memory-total maxima (0: no limit; upstream's defaults, 320000
    # cores and 6400000 GiB, bind no cluster the model sees) and --gpu-total per GPU type
    max_cores_total: int = 0
    max_memory_total_bytes: int = 0
    max_gpus_total: Mapping[str, int] = field(default_factory=dict)
    balance_similar_node_groups: bool = False  # --balance-similar-node-groups
    balancing_ignore_labels: tuple[str, ...] = ()  # --balancing-ignore-label
    priorities: Mapping[int, tuple[str, ...]] = field(default_factory=dict)  # priority expander
    seed: int = 0  # the random expander's seed: the same evaluation, the same choice
    loops: int = LOOP_LIMIT


class NaivePlanner:
    """cluster-autoscaler's scale-up, loop after loop (``core/static_autoscaler.go`` ``RunOnce``).

    Each loop: filter-out-schedulable packs the pending pods, highest priority
    first, onto existing and upcoming nodes with the scheduler's filters
    (``core/podlistprocessor/filter_out_schedulable.go``); for what is left,
    each node group gives an option (its template, the pods the template
    accepts, the binpacking estimator's node count capped by max size and
    ``--max-nodes-total``: ``core/scaleup/orchestrator/orchestrator.go``
    ``ScaleUp``, ``ComputeExpansionOption``, ``GetCappedNewNodeCount``); the
    expander chain picks ONE option and its nodes become upcoming nodes
    (``clusterstate/clusterstate.go`` ``GetUpcomingNodes``) for the next loop.
    Loops run until no pod is left or no option helps (at most ``loops``).
    """

    def __init__(
        self,
        cluster: Cluster,
        state: ClusterState,
        at: datetime,
        policy: str,
        mix: tuple[Pod, ...],
        settings: CaSettings,
    ) -> None:
        self.cluster = cluster
        self.state = state
        self.at = at
        self.policy = policy
        self.settings = settings
        self.rng = random.Random(settings.seed)
        self.groups = tuple(sorted(cluster.node_groups, key=lambda g: g.name))
        self.taken = set(state.node_names())
        self.added: dict[str, int] = {}
        self.added_per_slot: dict[tuple[str, int], int] = {}
        self.ledger = NaiveLedger()
        # shapes that found no node in this loop: nodes only fill up until the next buy
        self.no_room: set[str] = set()
        self.labels_matter = any(p.pod_terms for p in cluster.pods)
        # a pod without terms of its own is refused only by anti-affinity terms selecting it
        self.anti_terms = tuple(
            dict.fromkeys(t for p in cluster.pods for t in p.pod_terms.anti_affinity)
        )
        self.selected: dict[tuple[object, ...], bool] = {}
        self.around: list[tuple[Node, tuple[Pod, ...]]] = []  # existing + upcoming, per loop
        self.accepts: dict[tuple[object, ...], str | None] = {}  # (template, shape) → refusal
        self.templates: dict[tuple[object, ...], Node] = {}
        self._usage: tuple[int, dict[str, int]] | None = None  # (nodes counted, totals)
        self.options = options_for(policy, at, mix=mix)
        self.upcoming = self._upcoming_nodes()
        self.placer = self._new_placer()

    def refresh(self) -> None:
        """After nodes were added: new room everywhere, and a placer that sees them."""
        self.no_room.clear()
        self.placer = self._new_placer()

    def restore(self, saved: ClusterState) -> None:
        """Back to a copy taken before (what a request booked and then gave up)."""
        self.state = saved
        self.refresh()

    def estimate_for(self, template: Node, pods: Sequence[Pod], limit: int) -> Estimate:
        return estimate(
            self.cluster,
            template,
            pods,
            limit=limit,
            policy=self.policy,
            at=self.at,
            admit=self._admit if self.labels_matter else None,
            inter_pod=self._inter_pod,
            mix=self.options.workload_mix,
        )

    def _new_placer(self) -> Placer:
        """A placer on the state as it is now (one made before a node was added does not
        see that node's layout)."""
        return Placer(self.cluster, self.state, self.options, diagnose=False)

    def decide(self, pending: Sequence[Workload]) -> NaiveLedger:
        candidates: list[tuple[Workload, Pod]] = []
        requests: dict[tuple[str, str, str], list[tuple[Workload, Pod]]] = {}
        for workload in pending:
            self.ledger.needs_new[workload.key] = False
            self.ledger.reasons[workload.key] = []
            hold = held(workload, self.cluster.topology, len(self.taken))
            if hold is not None:  # gated: CA skips it; unsupported: no guess either way
                self.ledger.held[workload.key] = hold
                continue
            for pod in workload.pods:
                if pod.priority < EXPENDABLE_PODS_PRIORITY_CUTOFF:
                    self._expendable(workload, pod)
                elif pod.provisioning_request is not None:
                    request = (pod.namespace, *pod.provisioning_request)
                    requests.setdefault(request, []).append((workload, pod))
                else:
                    candidates.append((workload, pod))
        # filter_out_schedulable.go: the pods sorted by priority, highest first (stable)
        left = sorted(candidates, key=lambda c: -c[1].priority)
        left = self.filter_out_schedulable(left, first=True)
        for (_, name, klass), pods in requests.items():  # one request per loop
            provision(self, name, klass, pods)
        for _ in range(self.settings.loops):
            if not left:
                break
            chosen = self._best_option(left)
            if chosen is None:
                break
            self.buy(*chosen)
            self.refresh()
            left = self.filter_out_schedulable(left, first=False)
        for workload, pod in left:
            self.ledger.needs_new[workload.key] = True
            self.ledger.reasons[workload.key].append(self._why_not(pod))
        return self.ledger

    def _expendable(self, workload: Workload, pod: Pod) -> None:
        self.ledger.needs_new[workload.key] = True
        self.ledger.reasons[workload.key].append(
            f"pod {pod.name}: expendable (priority {pod.priority} is below "
            f"--expendable-pods-priority-cutoff {EXPENDABLE_PODS_PRIORITY_CUTOFF}): "
            "cluster-autoscaler never scales up for it"
        )

    def _shape(self, pod: Pod) -> str:
        shape = pod_shape(pod)
        if self.labels_matter:  # inter-pod terms: pods of one shape differ by their labels
            shape = repr((shape, pod.pod_terms, sorted(pod.labels.items())))
        return shape

    def filter_out_schedulable(
        self, pods: list[tuple[Workload, Pod]], *, first: bool, mark: bool = True
    ) -> list[tuple[Workload, Pod]]:
        """The pods that still fit no existing or upcoming node (those that fit are bound).
        ``first``: only existing nodes so far; ``mark=False``: fitting pods are not marked
        as needing new nodes (the caller decides)."""
        left = []
        for workload, pod in pods:
            shape = self._shape(pod)
            if shape not in self.no_room:
                if self.placer.place_one(without_topology(pod)).placed:
                    if not first and mark:  # it runs on nodes that do not exist yet
                        self.ledger.needs_new[workload.key] = True
                    continue
                if not pod.pod_terms.affinity:  # required pod affinity may be met later
                    self.no_room.add(shape)
            left.append((workload, pod))
        return left

    def room(self, group: NodeGroup) -> int:
        """How many more nodes the group may get: max size, then --max-nodes-total
        (``orchestrator.go`` ``GetCappedNewNodeCount``), then the cluster-wide resource
        limits (``core/scaleup/resource/manager.go`` ``ResourcesLeft``, ``ApplyLimits``:
        --cores-total, --memory-total, --gpu-total per GPU type)."""
        room = group.max_size - group.current_size - self.added.get(group.name, 0)
        if self.settings.max_nodes_total > 0:
            room = min(room, self.settings.max_nodes_total - len(self.taken))
        return min(room, self._resources_left(self.template(group)))

    def _resources_left(self, template: Node) -> int:
        """Nodes like ``template`` the cluster-wide limits still allow."""
        settings = self.settings
        room = len(self.taken) + 10**9
        limits = (settings.max_cores_total, settings.max_memory_total_bytes)
        if not any(limits) and not settings.max_gpus_total:
            return room
        used = self._used()
        per_node = _limited(template)
        for key, limit in (
            ("cpu", settings.max_cores_total * 1000 if settings.max_cores_total else 0),
            ("memory", settings.max_memory_total_bytes),
            *((f"gpu:{model}", count) for model, count in settings.max_gpus_total.items()),
        ):
            if limit and per_node.get(key, 0) > 0:
                room = min(room, (limit - used.get(key, 0)) // per_node[key])
        return room

    def _full(self, group: NodeGroup) -> str:
        if group.current_size + self.added.get(group.name, 0) >= group.max_size:
            return f"max size {group.max_size} reached for node group {group.name}"
        if self.settings.max_nodes_total and len(self.taken) >= self.settings.max_nodes_total:
            return f"--max-nodes-total {self.settings.max_nodes_total} reached"
        return f"a cluster-wide resource limit leaves no room for a node of group {group.name}"

    def _used(self) -> dict[str, int]:
        """What the nodes counted against the limits hold (existing, upcoming, bought)."""
        if self._usage is None or self._usage[0] != len(self.taken):
            totals: dict[str, int] = {}
            for name in self.state.node_names():
                for key, amount in _limited(self.state.node(name)).items():
                    totals[key] = totals.get(key, 0) + amount
            self._usage = (len(self.taken), totals)
        return self._usage[1]

    def _best_option(
        self, left: list[tuple[Workload, Pod]]
    ) -> tuple[Option, Estimate, dict[str, Workload]] | None:
        owners = {pod.key: workload for workload, pod in left}
        if self.labels_matter:
            self.around = [
                (self.state.node(n), self.state.alloc(n).placed) for n in self.state.node_names()
            ]
        options: list[Option] = []
        estimates: dict[str, Estimate] = {}
        for group in self.groups:
            room = self.room(group)
            if room <= 0:
                continue
            template = self.template(group)
            accepted = [p for _, p in left if self.refusal(group, template, p) is None]
            if not accepted:
                continue
            found = self.estimate_for(template, accepted, room)
            if found.node_count:
                options.append(Option(group, found.node_count, found.pods, template))
                estimates[group.name] = found
        chosen = best_option(options, self.settings.expanders, self.rng, self.settings.priorities)
        if chosen is None:
            return None
        return chosen, estimates[chosen.group.name], owners

    def refusal(self, group: NodeGroup, template: Node, pod: Pod) -> str | None:
        """Why the scheduler's filters refuse the pod on an empty template node (None: fits)."""
        key = (group.name, template.labels.get(HOSTNAME_LABEL), pod_shape(pod))
        if key not in self.accepts:
            self.accepts[key] = lone_node_rejection(
                self.cluster, template, pod, self.policy, self.at
            )
        return self.accepts[key]

    def _inter_pod(self, pod: Pod) -> bool:
        """Whether the pods around may refuse this pod (its own terms, or another's
        anti-affinity term selecting it)."""
        if pod.pod_terms:
            return True
        key = (pod.namespace, tuple(sorted(pod.labels.items())))
        found = self.selected.get(key)
        if found is None:
            namespace_labels = self.cluster.namespace_labels.get(pod.namespace, {})
            found = self.selected[key] = any(
                t.matches(pod.namespace, pod.labels, namespace_labels) for t in self.anti_terms
            )
        return found

    def _admit(self, pod: Pod, node: Node, pods: list[Pod]) -> bool:
        """InterPodAffinity and PodTopologySpread on an estimate node among the nodes
        around (existing, upcoming, and this estimate's node with its pods)."""
        around = [*self.around, (node, tuple(pods))]
        return interpod.fits(pod, node, around, self.cluster.namespace_labels)

    def _why_not(self, pod: Pod) -> str:
        refusals, full = [], []
        for group in self.groups:
            template = self.template(group)
            refusal = self.refusal(group, template, pod)
            if refusal is not None and pod.claims and self._no_dra_from_zero(group):
                refusals.append(
                    f"{group.name}: {refusal} (the group has no ready node and its provider "
                    "does not template DRA devices for an empty group: draScaleFromZero false)"
                )
            elif refusal is not None:
                refusals.append(f"{group.name}: {refusal}")
            elif self.room(group) <= 0:
                full.append(self._full(group))
            else:
                full.append(_pods_refuse(group, self.first_domain(group)))
        if full:
            return f"pod {pod.name}: " + "; ".join(full)
        if not refusals:
            return f"pod {pod.name}: no node group"
        return f"pod {pod.name}: no node group template accepts it (" + "; ".join(refusals) + ")"

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

    def template(self, group: NodeGroup) -> Node:
        """The group's next node as cluster-autoscaler sees it, kept per domain.

        ``processors/nodeinfosprovider/mixed_nodeinfos_processor.go``
        ``Process``: a ready, schedulable live member of the group, sanitized
        (``simulator/node_info_utils.go`` ``SanitizedTemplateNodeInfoFromNodeInfo``:
        new name, hostname label replaced); else the group's template. The
        member's DaemonSet pods are not carried over (the snapshot does not
        tell DaemonSet pods apart: partly).
        """
        domain = self.first_domain(group)
        key = (group.name, tuple(sorted(domain.items())))
        found = self.templates.get(key)
        if found is None:
            found = self.templates[key] = self.make_node(group, domain, f"{group.name}-template")
        return found

    def _no_dra_from_zero(self, group: NodeGroup) -> bool:
        return not group.dra_scale_from_zero and self.live_member(group) is None

    def live_member(self, group: NodeGroup) -> Node | None:
        for node in self.cluster.nodes:
            if (
                node.node_group == group.name
                and node.ready
                and not node.unschedulable
                and not _gpus_unready(node, group)
            ):
                return node
        return None

    def make_node(self, group: NodeGroup, domain: Mapping[str, str], name: str) -> Node:
        member = self.live_member(group)
        if member is None:
            node = new_node(group, domain, name)
            if group.dra_scale_from_zero:
                return node
            # docs/dra_support.md: without the provider's support, the template of an
            # empty group (NodeGroup.TemplateNodeInfo) has no ResourceSlices
            devices = tuple(d for d in node.devices if d.driver == GPU_RESOURCE)
            return replace(node, devices=devices, counter_sets=())
        labels = {**member.labels, **domain, HOSTNAME_LABEL: name}
        return replace(
            member,
            name=name,
            labels=labels,
            node_group=group.name,
            price_per_node_hour=group.price_per_node_hour,
        )

    def _upcoming_nodes(self) -> list[PlannedNode]:
        """Nodes CA counts as coming (``clusterstate.go`` ``GetUpcomingNodes``: target size
        minus registered; ``processors/customresources/gpu_processor.go``
        ``FilterOutNodesWithUnreadyResources``: a GPU node whose device plugin has not
        advertised its GPUs yet): template copies in the simulation, never bought twice."""
        upcoming = []
        for group in self.groups:
            target = group.autoscaler.target_size if group.autoscaler else None
            missing = max(0, (target or 0) - group.current_size)
            unready = [n for n in self.cluster.nodes if n.node_group == group.name]
            missing += sum(1 for n in unready if _gpus_unready(n, group))
            for _ in range(missing):
                name = unique_name(f"{group.name}-upcoming-{len(self.taken)}", self.taken)
                upcoming.append(PlannedNode(group, new_node(group, {}, name), "", {}))
        self.state.add_nodes(p.node for p in upcoming)
        return upcoming

    def buy(self, option: Option, found: Estimate, owners: Mapping[str, Workload]) -> None:
        """The option's nodes (``orchestrator.go`` ``ScaleUp``: ``ExecuteScaleUps``), spread
        over similar groups with ``--balance-similar-node-groups``."""
        bought: list[Node] = []
        slots = iter(found.nodes)
        for group, count in self._spread(option):
            for _, pods in itertools.islice(slots, count):
                name = unique_name(f"{group.name}-naive-{len(self.taken)}", self.taken)
                domain = self.first_domain(group)
                self.count_slot(group, domain)
                node = self.make_node(group, domain, name)
                trigger = owners[pods[0].key].key
                self.ledger.planned.append(PlannedNode(group, node, trigger, domain, list(pods)))
                bought.append(node)
                self.added[group.name] = self.added.get(group.name, 0) + 1
        self.state.add_nodes(bought)

    def _spread(self, option: Option) -> list[tuple[NodeGroup, int]]:
        """Nodes per group: all to the option's group, or balanced over the groups similar
        to it that accept all its pods (``orchestrator.go`` ``ComputeSimilarNodeGroups``,
        ``balancing_processor.go`` ``BalanceScaleUpBetweenGroups``)."""
        best = option.group
        if not self.settings.balance_similar_node_groups:
            return [(best, option.node_count)]
        ignored = self.settings.balancing_ignore_labels
        members = [best] + [
            g
            for g in self.groups
            if g is not best
            and self.room(g) > 0
            and similar(option.template, self.template(g), ignored)
            and all(self.refusal(g, self.template(g), p) is None for p in option.pods)
        ]
        sizes = [(g.name, g.current_size + self.added.get(g.name, 0), g.max_size) for g in members]
        counts = balance(sizes, option.node_count)
        return [(g, counts[g.name]) for g in members if g.name in counts]


def _limited(node: Node) -> dict[str, int]:
    """What one node counts against the cluster-wide limits: cpu, memory, GPUs by type."""
    counts = {"cpu": node.allocatable.cpu_milli, "memory": node.allocatable.memory_bytes}
    for gpu in node.gpus:
        key = f"gpu:{gpu.model}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _pods_refuse(group: NodeGroup, domain: Mapping[str, str]) -> str:
    where = placement_text(domain)
    return f"pod affinity or topology spread refuses the next node of group {group.name}{where}"


def _gpus_unready(node: Node, group: NodeGroup) -> bool:
    """A member of a GPU group that advertises no GPU yet (its device plugin is not up)."""
    return advertised_gpus(group.template) > 0 and advertised_gpus(node) == 0 and not node.devices


def naive_scale_up(
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    at: datetime,
    policy: str = "default",
    settings: CaSettings = CaSettings(),  # noqa: B008 (frozen, shared safely)
) -> ScaleUpPlan:
    """Decide like cluster-autoscaler, then let the real scheduler judge the result
    (on the cluster with the upcoming nodes and the nodes CA bought)."""
    mix = workload_mix(pending)
    planner = NaivePlanner(cluster, state.copy(), at, policy, mix, settings)
    ledger = planner.decide(pending)
    after = state.copy()
    after.add_nodes(p.node for p in (*planner.upcoming, *ledger.planned))
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
    if not ledger.needs_new.get(workload.key):
        verdict = RUNS_NOW
    else:
        verdict = BLOCKED if reasons and not mine else SCALE_UP
    return WorkloadPlan(
        workload=workload.key,
        verdict=verdict,
        add_nodes=add_nodes,
        reasons=tuple(reasons),
        schedulable_after=schedulable_after,
        stranded_gpus=sum(stranded[p.node.name][0] for p in mine),
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
