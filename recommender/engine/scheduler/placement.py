"""The scheduler simulation: where would pending work land? (Filter → Score → Bind)

::

    workloads (priority, arrival) ──► for each workload
        pod  ──► filter every node ──► score feasible (node, devices) ──► bind
        gang ──► domains of the required/preferred level, best first
                 └─► members one by one inside the domain; any miss → undo all
        miss ──► PostFilter: preempt lower-priority running pods (``preemption``)
        miss ──► Diagnosis (per-node reasons aggregated + gang reason)

Binding happens in a ``ClusterState`` copy, never in the caller's state, so
the autoscaler can ask "what if" as often as it likes. ``place_one`` is the
in-place variant for callers that manage copies themselves; it leaves the
state untouched when a workload does not fit (no partial gang).

One pod's filter, score and pick is ``pick.NodePicker``; what makes thousands
of such calls on a 10,000-node state affordable, without changing a decision,
is in ``caches`` and ``memo`` (``place_unindexed`` is the reference the tests
compare to).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from topology.model.hardware import Cluster, Pod

from . import fgd, preemption, profiles  # noqa: F401  (profiles registers kube-default, most-allocated)
from .admission import held
from .caches import DomainFree, Layout, SharedMemo, kept
from .claims_held import claims_taken
from .diagnosis import (
    Diagnosis,
    block_reason,
    members_reason,
    node_diagnosis,
)
from .filters import may_use_node
from .outcomes import (
    Binding as Binding,  # re-exported: callers import them from here
    WorkloadOutcome as WorkloadOutcome,
    binding_of,
)
from .pick import Choice, NodePicker
from .requeue import Requeue, requeue
from .scores import policy_named
from .state import ClusterState
from .window import PreemptionWindow
from .workloads import Workload


@dataclass(frozen=True)
class PlacementOptions:
    policy: str = "default"
    seed: int = 0
    reservation_grants: Mapping[str, frozenset[str]] = field(default_factory=dict)
    at: datetime | None = None
    # FGD's expected workload ("typical pods"); empty: the workloads being placed.
    # Calls given the same mix share their memo (the evaluation passes its pending pods).
    workload_mix: tuple[Pod, ...] = ()
    # DefaultPreemption's PostFilter on a miss: kube-scheduler runs it; an autoscaler's
    # simulation does not (it runs PreFilter/Filter only and leaves nominated pods out)
    preemption: bool = True
    # the DRAPartitionableDevices feature gate (off: devices that consume counters are
    # never allocated); on for the scheduler, a cluster-autoscaler profile may turn it off
    partitionable_devices: bool = True


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """Outcomes in the order of the workloads given; ``placed_order``: the keys of the
    placed ones in the order they were bound (a workload placed on a retry, ``requeue``,
    comes after every workload placed before it)."""

    outcomes: tuple[WorkloadOutcome, ...]
    state: ClusterState
    placed_order: tuple[str, ...] = ()


def place(
    cluster: Cluster,
    workloads: Iterable[Workload],
    *,
    state: ClusterState | None = None,
    options: PlacementOptions = PlacementOptions(),  # noqa: B008 (frozen, shared safely)
    diagnose: bool = True,
) -> PlacementResult:
    """Place workloads in order on a copy of ``state`` (default: the cluster's own).

    ``diagnose=False``: a workload that does not fit gets no diagnosis (for callers
    that only ask whether it fits; finding every node's reason costs a node scan)."""
    work = state.copy() if state is not None else ClusterState.from_cluster(cluster)
    workloads = tuple(workloads)
    run = _Run(cluster, work, options, workloads, diagnose=diagnose)
    outcomes, placed_order = run.place_all(workloads)
    return PlacementResult(outcomes, work, placed_order)


def place_unindexed(
    cluster: Cluster,
    workloads: Iterable[Workload],
    *,
    options: PlacementOptions = PlacementOptions(),  # noqa: B008 (frozen, shared safely)
) -> PlacementResult:
    """``place`` visiting and fully scoring every node for every pod (no score
    index, no memo): the reference ``place`` is tested against; same decisions,
    much slower."""
    work = ClusterState.from_cluster(cluster)
    workloads = tuple(workloads)
    run = _Run(cluster, work, options, workloads, indexed=False)
    outcomes, placed_order = run.place_all(workloads)
    return PlacementResult(outcomes, work, placed_order)


def prepare(
    cluster: Cluster,
    workloads: Iterable[Workload],
    state: ClusterState,
    options: PlacementOptions,
    *,
    reasons: bool = False,
) -> None:
    """Score every node once per pod shape of ``workloads`` on ``state`` itself
    (and, with ``reasons``, find each node's filter reason for them too).

    The scores go to the state's score index, which every copy of the state
    inherits: placement calls on copies (the evaluation's scheduler, naive and
    joint passes) then re-score only the nodes they changed, instead of each
    scoring every node again. Decisions are the same with or without it.
    """
    workloads = tuple(workloads)
    run = _Run(cluster, state, options, workloads)
    run.prepare((p for w in workloads for p in w.pods), reasons=reasons)


def nodes_matching(cluster: Cluster, state: ClusterState, selector: Mapping[str, str]) -> list[str]:
    """The state's nodes whose labels hold every ``selector`` entry, in node order
    (kept with the node list, so asking again is cheap)."""
    names = state.node_names()
    if not selector:
        return list(names)
    return [names[p] for p in Layout.of(cluster, state).matching(selector)]


def nodes_by_label(cluster: Cluster, state: ClusterState, key: str) -> dict[str, list[str]]:
    """The state's nodes grouped by their value of label ``key`` (nodes without it left
    out), in node order; kept with the node list. Do not mutate."""
    return Layout.of(cluster, state).by_label(key)


def place_one(
    cluster: Cluster,
    workload: Workload,
    state: ClusterState,
    options: PlacementOptions,
    *,
    diagnose: bool = True,
) -> WorkloadOutcome:
    """Place one workload, mutating ``state``; on failure ``state`` is as before
    (``diagnose`` as for ``place``)."""
    run = _Run(cluster, state, options, (workload,), diagnose=diagnose)
    return run.place_workload(workload)


def place_explained(
    cluster: Cluster,
    workloads: Sequence[Workload],
    state: ClusterState,
    options: PlacementOptions,
) -> Iterator[tuple[WorkloadOutcome, Pod | None, list[str]]]:
    """``place`` on ``state`` itself, yielding with each outcome the map behind a failed
    workload's diagnosis: its first member that fits on no node and every node's reason
    for it, in node order ("" where it fits); (None, []) for a workload placed or held."""
    run = _Run(cluster, state, options, workloads)
    for workload in workloads:
        run.last_blocked = (None, [])
        outcome = run.place_workload(workload)
        yield (outcome, *run.last_blocked)


def replay_outcome(
    state: ClusterState, workload: Workload, outcome: WorkloadOutcome, victims: Iterable[Pod] = ()
) -> None:
    """Put a placed ``outcome`` found on another state onto ``state`` (mutated):
    ``victims`` (the running pods it preempted) evicted first, then its bindings taken.
    The same node, devices and amounts, whatever ``state`` holds there."""
    for victim in victims:
        allocation = state.bound_allocation(victim.key)
        assert victim.node_name is not None and allocation is not None
        if any(p.key == victim.key for p in state.alloc(victim.node_name).placed):
            state.release(victim.node_name, victim.key, allocation, victim)  # once (``window``)
    pods = {p.key: p for p in workload.pods}
    for binding in outcome.bindings:
        assert binding.allocation is not None  # placement keeps it on every binding
        state.apply(binding.node, binding.pod, binding.allocation, pods.get(binding.pod))


class Placer:
    """``place_one`` again and again on one state that only it changes.

    Each call decides exactly as a fresh ``place_one`` (the seeded tie-break
    restarts, no gang member carries over), but the score index and domain
    groups survive between calls, so a call costs the nodes that changed, not
    every node. FGD scores depend on the expected workload: without a fixed
    ``workload_mix`` it is the call's own, so every call is a fresh one.
    """

    def __init__(
        self,
        cluster: Cluster,
        state: ClusterState,
        options: PlacementOptions,
        *,
        diagnose: bool = True,
    ) -> None:
        self._cluster, self._state, self._options = cluster, state, options
        self._diagnose = diagnose
        fgd = policy_named(options.policy).needs_fragmentation
        reusable = not fgd or bool(options.workload_mix)
        self._run = _Run(cluster, state, options, (), diagnose=diagnose) if reusable else None

    @property
    def cursor(self) -> int:
        """Where a "round-robin" policy's next search starts (node position)."""
        return self._run.pick.cursor if self._run is not None else 0

    @cursor.setter
    def cursor(self, position: int) -> None:
        if self._run is not None:
            self._run.pick.cursor = position

    def place_one(self, workload: Workload) -> WorkloadOutcome:
        if self._run is None:
            return place_one(
                self._cluster, workload, self._state, self._options, diagnose=self._diagnose
            )
        self._run.pick.restart(self._options.seed)
        return self._run.place_workload(workload)


class _Run:
    """One placement call: workloads in order, gangs in domains, all members or none
    (each pod's filter, score and pick is ``self.pick``'s)."""

    def __init__(
        self,
        cluster: Cluster,
        state: ClusterState,
        options: PlacementOptions,
        workloads: Sequence[Workload],
        indexed: bool = True,
        diagnose: bool = True,
    ) -> None:
        self.cluster = cluster
        self.state = state
        self.diagnose = diagnose
        self.preemption = options.preemption
        # the last diagnosis's member and every node's reason for it (place_explained)
        self.last_blocked: tuple[Pod | None, list[str]] = (None, [])
        policy = policy_named(options.policy)
        typical = _typical(state, options, workloads) if policy.needs_fragmentation else None
        grants, at = options.reservation_grants, options.at
        shared = SharedMemo.of(
            cluster, state, grants, at, policy, typical, options.partitionable_devices
        )
        self.pick = NodePicker(cluster, state, policy, shared, options.seed, indexed)
        self._domain_free = DomainFree.of(state)
        # a whole pass's preemptors wait for their victims (``window``); one workload
        # placed alone binds at once (nothing else is placed meanwhile)
        self.window: PreemptionWindow | None = None
        self.excluded: set[str] = set()  # the window's: nodes refused beside their nominees

    def prepare(self, pods: Iterable[Pod], reasons: bool) -> None:
        shapes: dict[int, Pod] = {}
        for pod in pods:
            shape = self.pick.shape(pod)
            if shape is not None:
                shapes.setdefault(shape, pod)
        for shape, pod in shapes.items():
            if self.pick.vector:  # no column: the arrays and masks its copies share
                self.pick.vector_scores(pod)
            else:
                self.pick.column(pod, shape)
            if reasons:
                self.pick.node_reasons(pod)

    # --- workloads ----------------------------------------------------------------

    def place_all(
        self, workloads: Sequence[Workload]
    ) -> tuple[tuple[WorkloadOutcome, ...], tuple[str, ...]]:
        """Each workload in order, then the ones left unplaced again (``requeue``); the
        outcomes in the workloads' order and the placed keys in the order bound. A
        preemptor is nominated while its victims terminate (``window``)."""
        self.window = window = PreemptionWindow(self.state)
        queue = Requeue(workloads, window)
        for index, workload in enumerate(workloads):
            queue.tried(index, self.place_workload(workload))
        requeue(self, queue)
        self.window = None
        return tuple(queue.outcomes), tuple(queue.placed_order)

    def place_workload(self, workload: Workload) -> WorkloadOutcome:
        if self.window is not None:
            return self.window.place(self, workload, self._place_workload)
        return self._place_workload(workload)

    def _place_workload(self, workload: Workload) -> WorkloadOutcome:
        pods = claims_taken(self.state.claims, workload.pods)
        if pods is not workload.pods:
            workload = replace(workload, pods=pods)
        hold = held(workload, self.cluster.topology, len(self.state.node_names()))
        if hold is not None:
            return WorkloadOutcome(workload.key, False, (), hold.diagnosis)
        level = workload.required_topology or workload.preferred_topology
        if level is not None:
            return self._place_in_domains(workload, level, workload.required_topology is not None)
        names: Sequence[str] = self.state.node_names()
        if self.excluded:
            names = [n for n in names if n not in self.excluded]
        bindings = self._place_members(workload, names)
        if bindings is not None:
            return WorkloadOutcome(workload.key, True, bindings, None)
        preempting = self._place_preempting(workload) if self.preemption else None
        return preempting or self._failure(workload, None)

    def _place_preempting(self, workload: Workload) -> WorkloadOutcome | None:
        """PostFilter: members that fit nowhere preempt (``preemption``), in order; all
        members (at least min_member) must then be placed, else nothing is evicted.

        kube-scheduler preempts pod by pod: for a gang's member it may evict pods the
        gang then never uses. All or nothing is what a gang's binding needs, so a
        gang preempts only when it then fits whole (see docs/FIDELITY.md)."""
        if not any(preemption.may_preempt(p) for p in workload.pods):
            return None
        placed: list[tuple[Pod, Choice]] = []
        evicted: list[preemption.Eviction] = []
        self.pick.scores.member_paths = []
        scope = self.pick.scope(self.state.node_names())
        for pod in workload.pods:
            choice = self.pick.best_node(pod, scope)
            if choice is None:
                beside = self.window.beside(pod) if self.window is not None else None
                victims = preemption.find_victims(
                    self.cluster, self.state, pod, self.pick.filters, beside
                )
                if victims is not None and self.window is not None and workload.kind == "pod":
                    nominated = self.window.nominate(self, workload, pod, victims)
                    if nominated is not None:
                        return nominated
                if victims is not None:
                    evicted += preemption.evict(self.state, victims)
                    choice = self.pick.best_node(pod, self.pick.scope([victims.node]))
            if choice is None:
                if len(placed) >= workload.min_member and workload.kind == "gang":
                    continue
                missed = True
                break
            self._apply(pod, choice)
            self.pick.scores.member_paths.append(self.pick.scores.paths[choice.node])
            placed.append((pod, choice))
        else:
            missed = len(placed) < workload.min_member
        if missed or not evicted:
            self._undo(placed)
            preemption.restore(self.state, evicted)
            return None
        keys = tuple(victim.key for _, victim, _ in evicted)
        diagnosis = Diagnosis(summary=preemption.preempting_reason(keys))
        bindings = tuple(binding_of(pod, choice) for pod, choice in placed)
        return WorkloadOutcome(workload.key, True, bindings, diagnosis, preempted=keys)

    def _place_in_domains(self, workload: Workload, level: str, required: bool) -> WorkloadOutcome:
        index = self.cluster.topology.index_of(level)
        assert index is not None
        levels = [index] if required else list(range(index, -1, -1))
        best_free = 0.0
        selector = workload.common_selector
        for level_index in levels:
            hosts = self.pick.layout.domains_matching(level_index, selector) if selector else None
            for key, domain_nodes, free_gpus in self._domains(level_index, workload.least_gpus):
                best_free = max(best_free, free_gpus)
                if hosts is not None and key not in hosts:
                    continue  # no node here carries the members' nodeSelector: none fits
                bindings = self._place_members(workload, domain_nodes)
                if bindings is not None:
                    return WorkloadOutcome(workload.key, True, bindings, None)
        if not required:
            bindings = self._place_members(workload, self.state.node_names())
            if bindings is not None:
                return WorkloadOutcome(workload.key, True, bindings, None)
            return self._failure(workload, None)
        name = self.cluster.topology.levels[index].name
        if best_free < workload.least_gpus:
            whole = self._most_whole_free_gpus(index, workload.namespace)
            return self._failure(workload, block_reason(workload.least_gpus, name, whole))
        return self._failure(workload, f"does not fit in any single {name}")

    def _domains(
        self, level_index: int, needed_gpus: float
    ) -> list[tuple[tuple[str, ...] | None, list[str], float]]:
        """Domains of one level, tightest fitting first (keeps big blocks whole); ties by name.

        Every domain is returned so the caller knows the best free figure; the
        ones too small for the gang's GPUs are skipped before any binding.
        """
        ranked = []
        free_of = self._domain_free.of_level(self.pick.layout, level_index)
        for key, names in self.pick.layout.domains(level_index).items():
            milli = free_of.get(key)
            if milli is None:
                alloc = self.state.alloc
                milli = free_of[key] = sum(alloc(n).free_gpu_milli for n in names)
            free = milli / 1000
            ranked.append((free < needed_gpus, free, key, names))
        ranked.sort(key=lambda item: (item[0], item[1], item[2]))
        return [(key, names, free) for too_small, free, key, names in ranked if not too_small] or [
            (None, [], max((free for _, free, _, _ in ranked), default=0.0))
        ]

    def _most_whole_free_gpus(self, level_index: int, namespace: str) -> int:
        """The most whole free GPUs (``ClusterState.free_gpus``: nothing allocated) in one
        domain of the level, on the nodes ``namespace`` may use (another team's
        reservation is not free to it: ``filters.may_use_node``): the figure a reason
        states, the one the workload page's per-domain table and the glossary's "free"
        count. The pruning above compares free GPU milli (a lower bound of what fits,
        shares included), which is never less."""
        free, ctx = self.state.free_gpus, self.pick.filters
        return max(
            (
                sum(free(n) for n in names if may_use_node(ctx, namespace, n))
                for names in self.pick.layout.domains(level_index).values()
            ),
            default=0,
        )

    def _place_members(
        self, workload: Workload, node_names: Sequence[str]
    ) -> tuple[Binding, ...] | None:
        """All members (at least min_member) on ``node_names``, or None with nothing left bound."""
        if not node_names:
            return None
        placed: list[tuple[Pod, Choice]] = []
        self.pick.scores.member_paths = []
        scope = self.pick.scope(node_names)
        for pod in workload.pods:
            choice = self.pick.best_node(pod, scope)
            if choice is None:
                if len(placed) >= workload.min_member and workload.kind == "gang":
                    continue
                self._undo(placed)
                return None
            self._apply(pod, choice)
            self.pick.scores.member_paths.append(self.pick.scores.paths[choice.node])
            placed.append((pod, choice))
        if len(placed) < workload.min_member:
            self._undo(placed)
            return None
        return tuple(binding_of(pod, choice) for pod, choice in placed)

    def _apply(self, pod: Pod, choice: Choice) -> None:
        self.state.apply(choice.node, pod.key, choice.allocation, pod)

    def _undo(self, placed: list[tuple[Pod, Choice]]) -> None:
        for pod, choice in reversed(placed):
            self.state.release(choice.node, pod.key, choice.allocation, pod)

    # --- diagnosis --------------------------------------------------------------------

    def _failure(self, workload: Workload, gang_reason: str | None) -> WorkloadOutcome:
        if not self.diagnose:
            return WorkloadOutcome(workload.key, False, (), None)
        reasons, placed = self._first_blocked_member(workload)
        if gang_reason is None and workload.kind == "gang" and placed > 0:
            gang_reason = members_reason(placed, len(workload.pods))
        total = len(self.state.node_names())
        return WorkloadOutcome(workload.key, False, (), node_diagnosis(total, reasons, gang_reason))

    def _first_blocked_member(self, workload: Workload) -> tuple[list[str], int]:
        """Reasons of the nodes refusing the first member that fits nowhere (greedy, undone)."""
        pod, reasons, count = self.blocked_member(workload)
        self.last_blocked = (pod, reasons)
        return [r for r in reasons if r], count

    def blocked_member(self, workload: Workload) -> tuple[Pod | None, list[str], int]:
        """The first member that fits on no node once the members before it are placed
        greedily (then undone), each node's reason for it in node order ("" where it
        fits), and how many members were placed; (None, [], all) when every member fits."""
        placed: list[tuple[Pod, Choice]] = []
        scope = self.pick.scope(self.state.node_names())
        for pod in workload.pods:
            choice = self.pick.best_node(pod, scope)
            if choice is None:
                reasons = self.pick.node_reasons(pod)
                self._undo(placed)
                return pod, reasons, len(placed)
            self._apply(pod, choice)
            placed.append((pod, choice))
        self._undo(placed)
        return None, [], len(placed)


def _typical(
    state: ClusterState, options: PlacementOptions, workloads: Sequence[Workload]
) -> tuple[fgd.TypicalPod, ...]:
    """FGD's typical pods: of the options' mix (worked out once per mix object and
    kept with the state's caches), else of the call's own workloads."""
    mix = options.workload_mix
    if not mix:
        return fgd.typical_pods(p for w in workloads for p in w.pods)
    return kept(state, ("typical pods", id(mix)), mix, lambda: fgd.typical_pods(mix))
