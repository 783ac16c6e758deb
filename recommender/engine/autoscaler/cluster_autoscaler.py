"""The naive autoscaler: cluster-autoscaler as its code scales up.

The model follows ``core/static_autoscaler.go`` ``RunOnce`` and
``core/scaleup/orchestrator/orchestrator.go`` ``ScaleUp`` (see
``NaivePlanner``): gated and expendable pods (priority below
``--expendable-pods-priority-cutoff``, default -10, ``CaSettings``:
``core/podlistprocessor/filter_out_expendable.go``) trigger nothing, nor
pods the scheduler places by preempting lower-priority pods (they carry a
``nominatedNodeName``: left out and force-added onto that node, victims and all,
``nominated``); filter-out-schedulable packs pods, highest priority first and one by
one (a gang is just its pods), onto existing and upcoming nodes with the scheduler's
own filters (no PostFilter: CA never preempts), each on the first node that passes, not
the best-scored one (``FIRST_FIT``); what is left gets whole options
per node group (template from a live member, binpacking estimator: ``estimator``),
the expander chain picks one (``expander``), and the loop repeats with those
nodes upcoming. A new node lands in the group's FIRST placement domain that still
has a slot, then the next (the autoscaler cannot choose where the cloud puts it),
or with no domain labels at all.

DRA follows the release (``CaSettings.version``): 1.34 does not check claims at all
(its pods are seen without them: ``NaivePlanner.seen``), 1.35 never allocates a
device that consumes counters (KEP-4815 partitions; DRAPartitionableDevices off),
1.36 checks claims as the scheduler does.

Then the real scheduler runs on the cluster with those nodes: pods that still
do not run, and GPUs on the added nodes that nobody uses, are stranded.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from recommender.engine import costs
from recommender.engine.autoscaler.estimator import Estimate, estimate
from recommender.engine.autoscaler.expander import PRICE, Option, best_option
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.groups import GroupView
from recommender.engine.autoscaler.ledger import (
    NaiveLedger,
    PlannedNode,
    additions,
    node_stranded,
    workload_plan,
)
from recommender.engine.autoscaler.listers import listed_unschedulable
from recommender.engine.autoscaler.nodegroupset import balance, similar
from recommender.engine.autoscaler.nominated import Nominated, force_add, nominations
from recommender.engine.autoscaler.outcome_range import (
    CHOICES,
    OTHER_NODE,
    OTHER_TIE,
    REVERSED,
    SMALL_FIRST,
    VARIANTS,
    LastOfTies,
    OtherOutcome,
    TieRecorder,
    distinct_others,
    skipped,
)
from recommender.engine.autoscaler.plan import (
    NAIVE,
    ScaleUpPlan,
    lone_node_rejection,
    options_for,
    placement_text,
    pod_shape,
    unique_name,
    without_topology,
    workload_mix,
)
from recommender.engine.autoscaler.provisioning import (
    injected_pods,
    kueue_check_capacity,
    kueue_request,
    provision,
    request_of,
    requests_off,
    unanswered,
)
from recommender.engine.autoscaler.refusals import no_group_can_host, unmatched
from recommender.engine.autoscaler.young import young_pods_out
from recommender.engine.scheduler import interpod
from recommender.engine.scheduler.admission import held
from recommender.engine.scheduler.placement import Placer, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import HOSTNAME_LABEL, Cluster, Node, NodeGroup, Pod

# filter-out-schedulable's node choice: no Score phase, the first node whose filters pass,
# searching from the node after the last one found (``simulator/clustersnapshot/predicate/
# plugin_runner.go`` ``RunFiltersUntilPassingNode``). Upstream's node list is the snapshot's
# map order and --predicate-parallelism (4) nodes are checked at once, so which of the
# first nodes that pass wins varies between runs: this is one outcome of that range.
FIRST_FIT = "first-fit"
# 1.34: --enable-dynamic-resource-allocation false (default) leaves the scheduler's
# DynamicResources plugin off in its framework (kubernetes/autoscaler#8598); releases
# without that fix give the framework no DRA manager and panic on such pods
DRA_OFF_CAVEAT = (
    "cluster-autoscaler 1.34 does not check DRA resource claims "
    "(--enable-dynamic-resource-allocation defaults to false: its simulation runs without "
    "the DynamicResources plugin, kubernetes/autoscaler#8598); 1.34 builds without that "
    "fix panic on pending pods with resource claims instead"
)
# 1.35: the vendored scheduler's DRAPartitionableDevices gate is alpha, off by default
PARTITIONS_OFF = (
    "only devices that consume counters serve its claims there, and cluster-autoscaler "
    "1.35 never allocates them: the DRAPartitionableDevices feature gate of KEP-4815 is "
    "off by default before 1.36"
)


class NaivePlanner(GroupView):
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
        variant: frozenset[str] = frozenset(),
    ) -> None:
        """``variant``: ``outcome_range``'s other choices to make (none: the plan's own)."""
        self.cluster = cluster
        self.state = state
        self.at = at
        self.policy = policy
        self.settings = settings
        self.variant = variant
        self.rng: random.Random = (
            LastOfTies() if OTHER_TIE in variant else TieRecorder(settings.seed)
        )
        self.groups = tuple(sorted(cluster.node_groups, key=lambda g: g.name))
        self.taken = set(state.node_names())
        self.existing = frozenset(self.taken)  # registered nodes (not upcoming, not bought)
        self.added: dict[str, int] = {}
        self.added_per_slot: dict[tuple[str, int], int] = {}
        self.ledger = NaiveLedger()
        self.kueue_checks = kueue_check_capacity(cluster)  # pod key → Kueue check
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
        self.shapes: dict[str, str] = {}  # pod key → pod_shape (asked per group and loop)
        self.templates: dict[tuple[object, ...], Node] = {}
        self.member_templates: dict[str, Node] = {}
        self._usage: tuple[int, dict[str, int]] | None = None  # (nodes counted, totals)
        # CA's simulation runs the scheduler's filters, never its PostFilter (preemption)
        self.options = replace(
            options_for(policy, at, mix=mix, partitionable_devices=settings.partitionable_devices),
            preemption=False,
        )
        self.upcoming = self._upcoming_nodes()
        self.placer = self._new_placer()

    def refresh(self) -> None:
        """After nodes were added: new room everywhere, and a placer that sees them (its
        search goes on from where the last one stopped, as ``lastIndex`` does)."""
        self.no_room.clear()
        cursor = self.placer.cursor
        self.placer = self._new_placer()
        self.placer.cursor = cursor

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
            partitionable_devices=self.settings.partitionable_devices,
        )

    def _new_placer(self) -> Placer:
        """A placer on the state as it is now (one made before a node was added does not
        see that node's layout)."""
        fit = self.policy if OTHER_NODE in self.variant else FIRST_FIT
        return Placer(self.cluster, self.state, replace(self.options, policy=fit), diagnose=False)

    def decide(self, pending: Sequence[Workload], nominated: Nominated) -> NaiveLedger:
        """``nominated``: the workloads kube-scheduler places by preemption (``nominated``)."""
        candidates: list[tuple[Workload, Pod]] = []
        requests: dict[tuple[str, str, str], list[tuple[Workload, Pod]]] = {}
        for workload in map(listed_unschedulable, pending):
            self.ledger.needs_new[workload.key] = False
            self.ledger.reasons[workload.key] = []
            hold = held(workload, self.cluster.topology, len(self.taken))
            if hold is not None:  # gated: CA skips it; unsupported: no guess either way
                self.ledger.held[workload.key] = hold
                continue
            if not self.settings.dra_claims_checked and any(p.claims for p in workload.pods):
                self.ledger.notes[workload.key] = [DRA_OFF_CAVEAT]
            outcome = nominated.get(workload.key)
            if outcome is not None:  # waiting for preemption: left out, force-added
                self.ledger.preempts[workload.key] = outcome.preempted
                force_add(self.state, workload, outcome)
                continue
            for pod in map(self.seen, workload.pods):
                if pod.priority < self.settings.expendable_pods_priority_cutoff:
                    self._expendable(workload, pod)
                elif pod.key in self.kueue_checks:  # Kueue asks, with check-capacity
                    if self.settings.provisioning_requests:
                        request = kueue_request(pod, self.kueue_checks[pod.key])
                        requests.setdefault(request, []).append((workload, pod))
                    else:
                        unanswered(self.ledger, workload, self.kueue_checks[pod.key])
                elif pod.provisioning_request is not None and self.settings.provisioning_requests:
                    request = request_of(self.cluster, pod, pod.provisioning_request)
                    requests.setdefault(request, []).append((workload, pod))
                else:
                    requests_off(self.ledger, workload, pod)
                    candidates.append((workload, pod))
        # filter_out_schedulable.go: the pods sorted by priority, highest first (stable)
        if REVERSED in self.variant:
            candidates.reverse()
        if SMALL_FIRST in self.variant:
            candidates.sort(key=lambda c: _size(c[1]))
        left = sorted(candidates, key=lambda c: -c[1].priority)
        left = self.filter_out_schedulable(left)
        left = young_pods_out(self.ledger, left, self.settings, self.at)  # filterOutYoungPods
        for (namespace, name, klass), pods in requests.items():  # one request per loop
            provision(self, name, klass, pods, injected_pods(self.cluster, namespace, name))
        for _ in range(self.settings.loops):
            if not left:
                break
            chosen = self._best_option(left)
            if chosen is None:
                break
            self.buy(*chosen)
            self.refresh()
            left = self.filter_out_schedulable(left)
        for workload, pod in left:
            self.ledger.needs_new[workload.key] = True
            why = self._why_not(pod)
            self.ledger.reasons[workload.key].append(why)
            if PARTITIONS_OFF in why:  # the release, not the cluster, refuses it: said
                self.ledger.notes.setdefault(workload.key, []).append(why)
        return self.ledger

    def seen(self, pod: Pod) -> Pod:
        """The pod as the autoscaler's scheduler framework sees it: without its claims
        where the DynamicResources plugin is off (1.34)."""
        if pod.claims and not self.settings.dra_claims_checked:
            return replace(pod, claims=())
        return pod

    def _expendable(self, workload: Workload, pod: Pod) -> None:
        self.ledger.needs_new[workload.key] = True
        self.ledger.reasons[workload.key].append(
            f"pod {pod.name}: expendable (priority {pod.priority} is below "
            f"--expendable-pods-priority-cutoff {self.settings.expendable_pods_priority_cutoff}): "
            "cluster-autoscaler never scales up for it"
        )

    def _pod_shape(self, pod: Pod) -> str:
        shape = self.shapes.get(pod.key)
        if shape is None:
            shape = self.shapes[pod.key] = pod_shape(pod)
        return shape

    def _shape(self, pod: Pod) -> str:
        shape = self._pod_shape(pod)
        if self.labels_matter:  # inter-pod terms: pods of one shape differ by their labels
            shape = repr((shape, pod.pod_terms, sorted(pod.labels.items())))
        return shape

    def filter_out_schedulable(
        self, pods: list[tuple[Workload, Pod]]
    ) -> list[tuple[Workload, Pod]]:
        """The pods that still fit no existing or upcoming node (those that fit are bound).
        A pod bound to an upcoming or bought node marks its workload as needing new nodes."""
        left = []
        for workload, pod in pods:
            shape = self._shape(pod)
            if shape not in self.no_room:
                outcome = self.placer.place_one(without_topology(pod))
                if outcome.placed:
                    if any(b.node not in self.existing for b in outcome.bindings):
                        self.ledger.needs_new[workload.key] = True
                    continue
                if not pod.pod_terms.affinity:  # required pod affinity may be met later
                    self.no_room.add(shape)
            left.append((workload, pod))
        return left

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
        chosen = best_option(
            options,
            self.settings.expanders,
            self.rng,
            self.settings.priorities,
            cluster_nodes=len(self.existing),
            gpu_label=self.settings.gpu_label,
        )
        if chosen is None:
            return None
        return chosen, estimates[chosen.group.name], owners

    def refusal(self, group: NodeGroup, template: Node, pod: Pod) -> str | None:
        """Why the scheduler's filters refuse the pod on an empty template node (None: fits)."""
        key = (group.name, template.labels.get(HOSTNAME_LABEL), self._pod_shape(pod))
        if key not in self.accepts:
            self.accepts[key] = lone_node_rejection(
                self.cluster,
                template,
                pod,
                self.policy,
                self.at,
                self.settings.partitionable_devices,
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
            elif refusal is not None and self._partitions_only(template, pod):
                refusals.append(f"{group.name}: {refusal} ({PARTITIONS_OFF})")
            elif refusal is not None:
                refusals.append(f"{group.name}: {refusal}")
            elif self.room(group) <= 0:
                full.append(self._full(group))
            elif PRICE in self.settings.expanders and not group.price_known:
                full.append(f"no price is known for group {group.name}: {PRICE_SKIPS}")
            else:
                full.append(_pods_refuse(group, self.first_domain(group)))
        if full:
            return f"pod {pod.name}: " + "; ".join(full)
        wanted = pod.gpu.models if pod.gpu is not None else ()
        missing = unmatched((pod,), self.state, self.cluster.nodes)
        return f"pod {pod.name}: " + no_group_can_host(self.groups, wanted, refusals, missing)

    def _partitions_only(self, template: Node, pod: Pod) -> bool:
        """Whether the template refuses the pod's claims only because this release never
        allocates devices that consume counters (the scheduler's filters accept it)."""
        if not pod.claims or self.settings.partitionable_devices:
            return False
        return lone_node_rejection(self.cluster, template, pod, self.policy, self.at) is None

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
            and similar(option.template, self.template(g), ignored, self.settings.cloud_provider)
            and all(self.refusal(g, self.template(g), p) is None for p in option.pods)
        ]
        sizes = [(g.name, g.current_size + self.added.get(g.name, 0), g.max_size) for g in members]
        counts = balance(sizes, option.node_count)
        return [(g, counts[g.name]) for g in members if g.name in counts]


def _size(pod: Pod) -> tuple[int, int, int]:
    """What a pod takes, GPUs first: smaller pods first in the SMALL_FIRST order."""
    request = pod.gpu
    gpus = request.total_milli if request is not None else 0
    return (gpus, pod.requests.cpu_milli, pod.requests.memory_bytes)


# expander/price/price.go BestOption: an option whose NodePrice fails is skipped
PRICE_SKIPS = "the price expander skips it (expander/price/price.go BestOption)"


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
    settings: CaSettings = CaSettings(),  # noqa: B008 (frozen, shared safely)
    nominated: Nominated | None = None,
    outcome_range: bool = True,
) -> ScaleUpPlan:
    """Decide like cluster-autoscaler, then let the real scheduler judge the result
    (on the cluster with the upcoming nodes and the nodes CA bought).

    ``nominated``: the workloads kube-scheduler places by preemption (the evaluation's
    scheduler pass, ``nominated.of_outcomes``); None: that pass is run here.
    ``outcome_range``: False leaves the other outcomes out (``naive_outcome_range``
    works them out apart, the same ones); ``range_skipped`` is said either way."""
    mix = workload_mix(pending)
    options = options_for(policy, at, mix=mix)
    if nominated is None:
        nominated = nominations(cluster, pending, state, options)
    planner = NaivePlanner(cluster, state.copy(), at, policy, mix, settings)
    ledger = planner.decide(pending, nominated)
    not_worked_out = skipped(len(state.node_names()))
    others = (
        other_outcomes(cluster, pending, state, planner, nominated)
        if outcome_range and not not_worked_out
        else ()
    )
    after = state.copy()
    after.add_nodes(p.node for p in (*planner.upcoming, *ledger.planned))
    result = place(cluster, pending, state=after, options=options, diagnose=False)
    placed = {o.workload: o.placed for o in result.outcomes}
    bound_nodes = {b.node for o in result.outcomes if o.placed for b in o.bindings}
    stranded = {p.node.name: node_stranded(p, result.state, bound_nodes) for p in ledger.planned}
    outcomes = {
        w.key: workload_plan(w, ledger, placed.get(w.key, False), stranded) for w in pending
    }
    return ScaleUpPlan(
        mode=NAIVE,
        additions=additions(ledger),
        outcomes=outcomes,
        cost_per_hour=costs.round_money(sum(p.group.price_per_node_hour for p in ledger.planned)),
        stranded_gpus=sum(gpus for gpus, _ in stranded.values()),
        stranded_per_hour=costs.round_money(sum(cost for _, cost in stranded.values())),
        other_outcomes=others,
        range_skipped=not_worked_out,
    )


def naive_outcome_range(
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    at: datetime,
    policy: str = "default",
    settings: CaSettings = CaSettings(),  # noqa: B008 (frozen, shared safely)
    nominated: Nominated | None = None,
) -> tuple[OtherOutcome, ...]:
    """``naive_scale_up``'s other outcomes on their own (what ``outcome_range=False``
    left out, given the same arguments): the plan's own decisions again (seeded: the
    same ones), then ``other_outcomes``; none above ``outcome_range.MAX_NODES``."""
    if skipped(len(state.node_names())):
        return ()
    mix = workload_mix(pending)
    if nominated is None:
        nominated = nominations(cluster, pending, state, options_for(policy, at, mix=mix))
    planner = NaivePlanner(cluster, state.copy(), at, policy, mix, settings)
    planner.decide(pending, nominated)
    return other_outcomes(cluster, pending, state, planner, nominated)


def other_outcomes(
    cluster: Cluster,
    pending: Sequence[Workload],
    state: ClusterState,
    planner: NaivePlanner,
    nominated: Nominated,
) -> tuple[OtherOutcome, ...]:
    """What cluster-autoscaler may add instead (``outcome_range``): the planner run
    again with each of its random choices made the other way."""
    variants = [frozenset(v) for v in VARIANTS]
    if isinstance(planner.rng, TieRecorder) and planner.rng.ties:
        variants.append(frozenset({OTHER_TIE}))
    runs = []
    for variant in variants:
        other = NaivePlanner(
            cluster,
            state.copy(),
            planner.at,
            planner.policy,
            planner.options.workload_mix,
            planner.settings,
            variant,
        )
        ledger = other.decide(pending, nominated)
        add_nodes: dict[str, int] = {}
        for planned in ledger.planned:
            add_nodes[planned.group.name] = add_nodes.get(planned.group.name, 0) + 1
        cost = sum(p.group.price_per_node_hour for p in ledger.planned)
        because = " and ".join(c for c in CHOICES if c in variant)
        runs.append((because, add_nodes, cost))
    main: dict[str, int] = {}
    for planned in planner.ledger.planned:
        main[planned.group.name] = main.get(planned.group.name, 0) + 1
    return distinct_others(main, runs)
