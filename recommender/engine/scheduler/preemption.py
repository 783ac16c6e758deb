"""DefaultPreemption (PostFilter): a pod that fits no node evicts lower-priority pods.

Upstream: kubernetes/kubernetes ``pkg/scheduler/framework/plugins/defaultpreemption/
default_preemption.go`` (``SelectVictimsOnNode``, ``PodEligibleToPreemptOthers``,
``filterPodsWithPDBViolation``) and ``pkg/scheduler/framework/preemption/
preemption.go`` (``DryRunPreemption``, ``pickOneNodeForPreemption``)::

    pod fits no node ──► eligible? (preemptionPolicy is not Never)
        ──► per node: remove every running pod of strictly lower priority
            ──► still no fit: not a candidate
            ──► victims most important first (priority, then oldest start);
                those whose eviction breaks a PodDisruptionBudget first:
                reprieve each (put it back) while the pod still fits
        ──► pick one node: fewest PDB violations, lowest highest-victim
            priority, smallest sum of (priority + 2^31), fewest victims,
            latest start of the highest-priority victims, then node order
        ──► evict its victims; the pod is bound there

Victims are the pods bound in the snapshot and the lone pods a placement pass bound
(``SimulatedBindings``): the first pass places pending work in priority order, so a
pod it placed earlier never has a lower priority than a later one, but a workload
placed on a retry (``requeue``) or nominated (``window``) may come after
lower-priority ones, and kube-scheduler evicts those as any other (a gang's members
are never victims here: docs/FIDELITY.md). Every node is
examined (upstream stops after max(10 %, 100) candidates from a random offset:
on bigger clusters it may pick another node of equal merit). What happens after the
choice, the nomination while the victims terminate, is ``window``'s; the nominees of
other preemptors reach this search as the room they reserve on their node.

What makes it affordable without changing a choice: victims per node are kept with
the node's free resources (``NodeAlloc.preemption_memo``, per pod shape and filter
context), and the candidates per pod shape with the state (``CandidateIndex``), kept
ranked in pickOneNodeForPreemption's order, so a search after a binding or an eviction
costs the nodes that changed (and a bisection each), not a sort of every candidate. The
last reprieve, when every other pod is back, checks the node as it is instead of
putting the pod back on the trial copy. What does not depend on the preemptor's shape
is kept on the node's record too (``Evicted``: the node with every pod below its
priority given back, and what that frees; the GPU rule's status per request): plans
on copies of one state (the relaxations' "priority + 1" plans) share unwritten
records, so each node is emptied once per priority level, not once per preemptor.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from topology.kube.core.disruption import NEVER, disruptions_allowed, split_by_budgets
from topology.model.hardware import Cluster, Pod
from topology.model.mig import MIG_RESOURCE_PREFIX

from . import interpod
from .bindings import SimulatedBindings, allocation_of
from .caches import Layout, kept
from .filters import OK, RULES, STATIC_RULES, FilterContext, Status, gpu_devices
from .memo import memoisable, pod_shape
from .records import Allocation, NodeAlloc, NodeInfo
from .state import ClusterState


def _gpu_devices_kept(info: NodeInfo, alloc: NodeAlloc, pod: Pod, ctx: FilterContext) -> Status:
    """``filters.gpu_devices``'s status, kept on the node's record per GPU request (the
    record forgets it on its next write, ``NodeAlloc.changed``): it reads only the node
    and the request, so the searches of every plan sharing the record, for pods of
    any shape asking that request, work it out once."""
    request = pod.gpu
    if request is None or request.count == 0:
        return OK
    key = (_GPU_STATUS, request)
    found = alloc.preemption_memo.get(key)
    if not isinstance(found, Status):
        found = alloc.preemption_memo[key] = gpu_devices(info, alloc, pod, ctx)
    return found


_GPU_STATUS = "gpu status"
# the rules an eviction can change (the static ones are checked once per node first),
# in the filters' order, the GPU rule's status kept per node record and request
_EVICTION_SENSITIVE = tuple(
    _gpu_devices_kept if r.check is gpu_devices else r.check for r in RULES if r.kind != "static"
)
PRIORITY_OFFSET = 2**31  # math.MaxInt32 + 1: every priority made >= 0 before summing


@dataclass(frozen=True, slots=True)
class Victims:
    """The pods to evict on one node so that the pod fits there, most important first.

    ``rank``: ``pickOneNodeForPreemption``'s criteria in order, each bigger-is-better
    (fewest PDB violations, lowest highest priority, smallest sum of priority + 2^31,
    fewest victims, latest start among the highest-priority victims)."""

    node: str
    pods: tuple[Pod, ...]
    pdb_violations: int
    rank: tuple[float, ...] = field(init=False)

    def __post_init__(self) -> None:
        pods = self.pods
        top = pods[0].priority if pods else 0
        rank = (
            -self.pdb_violations,
            -top,
            -sum(p.priority + PRIORITY_OFFSET for p in pods),
            -len(pods),
            min((_start(p) for p in pods if p.priority == top), default=math.inf),
        )
        object.__setattr__(self, "rank", rank)


Eviction = tuple[str, Pod, Allocation]  # (node, victim, what it gave back)


def may_preempt(pod: Pod) -> bool:
    """``PodEligibleToPreemptOthers``: a pod with ``preemptionPolicy: Never`` never does."""
    return pod.preemption_policy != NEVER


def preempting_reason(victims: Sequence[str]) -> str:
    return f"runs after preempting {', '.join(victims)}"


def find_victims(
    cluster: Cluster,
    state: ClusterState,
    pod: Pod,
    filters: FilterContext,
    beside: Callable[[str], Sequence[Pod]] | None = None,
) -> Victims | None:
    """The node and victims preemption would choose for ``pod``, or None (no node
    where evicting lower-priority pods makes it fit). ``beside(node)``: the pods
    nominated there that its filters count with their labels and terms (the state
    holds only their room: ``window``)."""
    lowest = kept(state, "lowest bound priority", cluster, lambda: min(_bound_priorities(cluster)))
    lowest = min(lowest, SimulatedBindings.of(state).lowest_priority())
    if not may_preempt(pod) or pod.priority <= lowest:
        return None  # no running pod anywhere has a lower priority
    index = kept(state, "inter-pod index", cluster, lambda: interpod.InterPodIndex(cluster))
    sensitive = index.sensitive(pod)
    fits = _fit_check(state, pod, filters, index, sensitive, beside)
    allowed = _allowances(cluster, state)
    key, owner = (None, None) if sensitive else _memo_key(pod, filters)

    def victims_on(name: str) -> Victims | None:
        alloc = state.alloc(name)
        kept_here = alloc.preemption_memo.get(key) if key is not None else None
        if isinstance(kept_here, tuple) and kept_here[0] is filters and kept_here[1] is owner:
            return cast(Victims | None, kept_here[2])
        found = _victims_here(state, name, pod, filters, fits, cluster, allowed)
        if key is not None:
            alloc.preemption_memo[key] = (filters, owner, found)
        return found

    names = state.node_names()
    known = CandidateIndex.of(state).entry(key, filters, owner) if key is not None else None
    if known is not None:  # only the nodes changed since the last search are searched again
        order = kept(state, "node order", names, lambda: {n: i for i, n in enumerate(names)})
        if known.ranked is None:  # the candidates ranked once, then kept ranked
            known.ranked = sorted((_choice_key(v, order), v.node) for v in known.found.values())
        ranked = known.ranked
        for name in known.changed:
            if not _matches(state.node(name).labels, pod):
                continue
            before = known.found.get(name)
            if before is not None:
                del ranked[bisect_left(ranked, (_choice_key(before, order), name))]
            found = victims_on(name)
            if found is None:
                known.found.pop(name, None)
            else:
                known.found[name] = found
                insort(ranked, (_choice_key(found, order), name))
        known.changed.clear()
        return known.found[ranked[-1][1]] if ranked else None
    if pod.node_selector:  # NodeAffinity: no other node could take it, victims or not
        names = tuple(names[p] for p in Layout.of(cluster, state).matching(pod.node_selector))
    candidates = [v for v in map(victims_on, names) if v is not None]
    if key is not None:
        CandidateIndex.of(state).keep(key, filters, owner, candidates)
    return pick_one_node(candidates)


_Ranked = tuple[tuple[int, tuple[float, ...], int], str]  # (_choice_key, node)


@dataclass(slots=True)
class _Known:
    """One pod shape's candidates on one state, and the nodes changed since."""

    filters: FilterContext
    owner: Pod | None
    found: dict[str, Victims]
    changed: set[str]
    # ``found`` as (_choice_key, node), ascending: pick_one_node's choice is the last
    ranked: list[_Ranked] | None = None


class CandidateIndex:
    """The candidates found per pod shape on one state (a state watcher): a node's
    change marks it to be searched again, so a search costs the nodes that changed
    since the last one, not every node (a copy of the state gets a copy)."""

    def __init__(self) -> None:
        self._known: dict[object, _Known] = {}

    @classmethod
    def of(cls, state: ClusterState) -> CandidateIndex:
        return state.watcher(cls)

    def entry(self, key: object, filters: FilterContext, owner: Pod | None) -> _Known | None:
        known = self._known.get(key)
        if known is None or known.filters is not filters or known.owner is not owner:
            return None
        return known

    def keep(
        self, key: object, filters: FilterContext, owner: Pod | None, found: list[Victims]
    ) -> None:
        self._known[key] = _Known(filters, owner, {v.node: v for v in found}, set())

    def changed(self, name: str, released: bool) -> None:
        for known in self._known.values():
            known.changed.add(name)

    def added(self, name: str) -> None:
        self.changed(name, False)

    def clone(self) -> CandidateIndex:
        other = CandidateIndex()
        other._known = {
            key: _Known(k.filters, k.owner, dict(k.found), set(k.changed), _copied(k.ranked))
            for key, k in self._known.items()
        }
        return other


def _copied(ranked: list[_Ranked] | None) -> list[_Ranked] | None:
    return None if ranked is None else list(ranked)


def _matches(labels: Mapping[str, str], pod: Pod) -> bool:
    return all(labels.get(k) == v for k, v in pod.node_selector.items())


def _victims_here(
    state: ClusterState,
    name: str,
    pod: Pod,
    filters: FilterContext,
    fits: Callable[[ClusterState, str], bool],
    cluster: Cluster,
    allowed: dict[str, int],
) -> Victims | None:
    placed = state.alloc(name).placed
    bound = SimulatedBindings.of(state)
    lower = tuple(
        p
        for p in placed
        if p.priority < pod.priority and (p.node_name is not None or bound.has(p.key))
    )
    if not lower or not _static_ok(state, name, pod, filters):
        return None
    evicted = Evicted.of(state, name, lower)
    if not evicted.could_fit(pod):
        return None
    return select_victims_on_node(state, name, pod, lower, fits, cluster, allowed, evicted)


def select_victims_on_node(
    state: ClusterState,
    name: str,
    pod: Pod,
    lower: Sequence[Pod],
    fits: Callable[[ClusterState, str], bool],
    cluster: Cluster,
    allowed: dict[str, int],
    evicted: Evicted | None = None,
) -> Victims | None:
    """``SelectVictimsOnNode``: remove every lower-priority pod; if the pod then fits,
    put back as many as it allows, PDB-violating ones first, most important first.
    ``evicted``: the node with ``lower`` removed (``Evicted.of``), when already asked."""
    evicted = evicted or Evicted.of(state, name, tuple(lower))
    taken = evicted.taken
    if not evicted.potential:
        return None
    trial = evicted.trial()
    if not fits(trial, name):
        return None
    potential = sorted(evicted.potential, key=importance)
    violating, safe = split_by_budgets(potential, cluster.disruption_budgets, allowed)
    victims: list[Pod] = []
    violations = 0
    order = [*((p, True) for p in violating), *((p, False) for p in safe)]
    for at, (victim, breaks_budget) in enumerate(order, 1):
        if at == len(order) and not victims and _restores_exactly(_taken(taken, victim)):
            # every other pod is back: putting this one back gives the node as it is
            if not fits(state, name):
                victims.append(victim)
                violations += breaks_budget
            continue
        trial.apply(name, victim.key, _taken(taken, victim), victim)
        if not fits(trial, name):
            trial.release(name, victim.key, _taken(taken, victim), victim)
            victims.append(victim)
            violations += breaks_budget
    victims.sort(key=importance)
    return Victims(name, tuple(victims), violations)


def _restores_exactly(allocation: Allocation) -> bool:
    """Does giving back and taking again ``allocation`` leave the node as the filters see
    it? Yes, except for MIG instances counted as extended resources: taking them again
    may count them on other GPUs (``state._change_mig_instances``)."""
    return not any(name.startswith(MIG_RESOURCE_PREFIX) for name in allocation.extended)


def importance(pod: Pod) -> tuple[int, float]:
    """``MoreImportantPod`` as a sort key: higher priority first, then the earlier start
    (a pod not started counts as starting now: after every started one)."""
    return (-pod.priority, _start(pod))


def pick_one_node(candidates: Sequence[Victims]) -> Victims | None:
    """``pickOneNodeForPreemption``: each criterion in turn keeps the best; the first
    of the remaining (node order) wins."""
    if not candidates:
        return None
    for found in candidates:
        if not found.pods:
            return found  # nothing to evict after all
    return max(candidates, key=lambda v: v.rank)  # the first of the best (lexicographic)


def _choice_key(found: Victims, order: Mapping[str, int]) -> tuple[int, tuple[float, ...], int]:
    """``pick_one_node`` over candidates in node order as one total order (the greatest
    wins): a node with nothing to evict first (the first such in node order), then the
    best rank, then node order."""
    if not found.pods:
        return (1, (), -order[found.node])
    return (0, found.rank, -order[found.node])


def evict(state: ClusterState, victims: Victims) -> list[Eviction]:
    """Take the victims off their node (they are deleted, as the preemptor's
    ``prepareCandidate`` does); what each gave back is kept to undo it."""
    evicted = []
    for victim in victims.pods:
        allocation = allocation_of(state, victim.key)
        assert allocation is not None  # select_victims_on_node only names such pods
        state.release(victims.node, victim.key, allocation, victim)
        evicted.append((victims.node, victim, allocation))
    return evicted


def restore(state: ClusterState, evicted: Sequence[Eviction]) -> None:
    """Undo ``evict`` (a gang that still did not fit)."""
    for node, victim, allocation in reversed(evicted):
        state.apply(node, victim.key, allocation, victim)


def _start(pod: Pod) -> float:
    """``GetPodStartTime``: a pod not started yet counts as starting now (after all)."""
    return pod.started if pod.started is not None else math.inf


def _taken(taken: dict[str, Allocation | None], pod: Pod) -> Allocation:
    allocation = taken[pod.key]
    assert allocation is not None
    return allocation


def _static_ok(state: ClusterState, name: str, pod: Pod, filters: FilterContext) -> bool:
    """Rules that read only node and pod: evicting pods cannot change their verdict
    (upstream skips such UnschedulableAndUnresolvable nodes, nodesWherePreemptionMightHelp)."""
    info, alloc = state.info(name), state.alloc(name)
    return all(rule(info, alloc, pod, filters).ok for rule in STATIC_RULES)


def _memo_key(pod: Pod, filters: FilterContext) -> tuple[object, Pod | None]:
    """What the victims on a node depend on besides the node (and the filter context,
    kept with them): the pod's shape where placement memoises it, its namespace only
    where a filter tells it apart (``FilterContext.namespace_class``, as placement's
    memo), else the pod itself (the key, and the pod the entry must belong to)."""
    if memoisable(pod):
        shape = pod_shape(pod, filters.namespace_class(pod.namespace))
        return ("shape", shape, pod.priority), None
    return ("pod", id(pod)), pod


class Evicted:
    """One node with every pod of ``lower`` (the pods below a priority that may be
    victims) given back: what ``SelectVictimsOnNode`` starts from for any preemptor of
    that priority, whatever its shape. Kept on the node's record (``NodeAlloc.
    preemption_memo``, forgotten on its next write) per ``lower``, so the searches of
    every plan sharing the record (the relaxations' "priority + 1" plans, each a copy
    of one state: ``ClusterState.copy`` shares unwritten records) release the victims
    and sum what they free once per node, not once per preemptor.

    ``could_fit``: a necessary condition, cheap: with every ``lower`` pod gone there
    would be enough cpu, memory, pod slots, extended resources and whole GPUs.
    ``trial``: a one-node state with the pods released, each call a copy-on-write
    copy (a reprieve writes its own record, never the kept one). Only the released
    record is kept (about 2.5 kB a node), not a state around it."""

    __slots__ = (
        "info",
        "name",
        "lower",
        "_alloc",
        "taken",
        "potential",
        "cpu_milli",
        "memory_bytes",
        "pods",
        "extended",
        "gpus_could_be_free",
        "_released",
    )

    def __init__(self, state: ClusterState, name: str, lower: tuple[Pod, ...]) -> None:
        info, alloc = state.info(name), state.alloc(name)
        self.info, self.name, self.lower = info, name, lower
        self._alloc = alloc  # unwritten while kept: a write forgets this
        self.taken = {p.key: allocation_of(state, p.key) for p in lower}
        self.potential = tuple(p for p in lower if self.taken[p.key] is not None)
        freed = [a for a in (self.taken[p.key] for p in lower) if a is not None]
        self.cpu_milli = alloc.cpu_free_milli + sum(a.cpu_milli for a in freed)
        self.memory_bytes = alloc.memory_free_bytes + sum(a.memory_bytes for a in freed)
        self.pods = alloc.pods_free + sum(a.pods for a in freed)
        resources = {*alloc.extended_free, *(r for a in freed for r in a.extended)}
        self.extended = {
            r: alloc.extended_free.get(r, 0) + sum(a.extended.get(r, 0) for a in freed)
            for r in resources
        }
        devices = {t.device for a in freed for t in a.devices}
        gpus = {info.devices[d].gpu for d in devices}
        self.gpus_could_be_free = sum(
            1
            for d in info.gpu_devices
            if alloc.is_untouched(d) or d.name in devices or d.gpu in gpus
        )
        self._released: NodeAlloc | None = None

    @classmethod
    def of(cls, state: ClusterState, name: str, lower: tuple[Pod, ...]) -> Evicted:
        """The node's kept one for ``lower`` (the same pods, taking the same
        allocations, on the same node info), else a new one, kept."""
        alloc = state.alloc(name)
        key = (_EVICTED, *(p.key for p in lower))
        found = alloc.preemption_memo.get(key)
        if (
            isinstance(found, Evicted)
            and found.info is state.info(name)
            and all(a is b for a, b in zip(found.lower, lower, strict=True))
            and all(found.taken[p.key] is allocation_of(state, p.key) for p in lower)
        ):
            return found
        evicted = alloc.preemption_memo[key] = cls(state, name, lower)
        return evicted

    def could_fit(self, pod: Pod) -> bool:
        requests = pod.requests
        if requests.cpu_milli > self.cpu_milli or requests.memory_bytes > self.memory_bytes:
            return False
        if max(1, requests.pods) > self.pods:
            return False
        for resource, amount in requests.extended.items():
            if amount > self.extended.get(resource, 0):
                return False
        if pod.gpu is None or pod.gpu.count == 0 or pod.gpu.is_share:
            return True
        return self.gpus_could_be_free >= pod.gpu.count

    def trial(self) -> ClusterState:
        name = self.name
        if self._released is None:
            trial = ClusterState({name: self.info}, {name: self._alloc.clone()})
            for victim in self.potential:
                trial.release(name, victim.key, _taken(self.taken, victim), victim)
            self._released = trial.alloc(name)
        # a state owning nothing: its first write clones the kept record
        return ClusterState({name: self.info}, {name: self._released}).copy()


_EVICTED = "evicted"


def forget_shared(state: ClusterState) -> None:
    """Drop the ``Evicted`` nodes and GPU statuses kept on the state's records (what
    plans sharing them no longer need: the memory, about 3 kB a node, goes back)."""
    for name in state.node_names():
        memo = state.alloc(name).preemption_memo
        for key in [k for k in memo if isinstance(k, tuple) and k[0] in _SHARED_KEYS]:
            del memo[key]


_SHARED_KEYS = (_EVICTED, _GPU_STATUS)


def _fit_check(
    state: ClusterState,
    pod: Pod,
    filters: FilterContext,
    index: interpod.InterPodIndex,
    sensitive: bool,
    beside: Callable[[str], Sequence[Pod]] | None = None,
) -> Callable[[ClusterState, str], bool]:
    """Does the pod pass every filter on node ``name`` of a one-node trial state?
    Rules reading the pods around a node see the trial node's pods and every other
    node's as they are (upstream's PreFilter RemovePod/AddPod), and on the trial node
    the pods ``beside`` names there too (nominated pods: ``addGlobalNominatedPods``)."""

    terms = pod.pod_terms

    def cycle(trial: ClusterState, name: str, extra: Sequence[Pod]) -> interpod.PodCycle:
        def placed(n: str) -> Sequence[Pod]:
            return (*trial.alloc(n).placed, *extra) if n == name else state.alloc(n).placed

        nodes = ((state.node(n), placed(n)) for n in state.node_names())
        return interpod.prefilter(pod, nodes, index.namespace_labels)

    def fits(trial: ClusterState, name: str) -> bool:
        context = filters
        if sensitive:
            extra = tuple(beside(name)) if beside is not None else ()
            found = cycle(trial, name, extra)
            # InterPodAffinity's PreFilter returns Skip when the pod has no required terms
            # and no pod of the snapshot has anti-affinity selecting it: the nominees'
            # terms (AddPod) are then never checked
            if (
                extra
                and found.existing_anti_counts
                and not (terms.affinity or terms.anti_affinity)
                and not cycle(state, name, ()).existing_anti_counts
            ):
                found = replace(found, existing_anti_counts={})
            context = replace(filters, cycle=found)
        info, alloc = trial.info(name), trial.alloc(name)
        return all(check(info, alloc, pod, context).ok for check in _EVICTION_SENSITIVE)

    return fits


def fits_on(
    cluster: Cluster,
    state: ClusterState,
    pod: Pod,
    filters: FilterContext,
    name: str,
    beside: Callable[[str], Sequence[Pod]],
) -> bool:
    """Whether ``pod`` passes the rules that read a node's pods and free room on node
    ``name`` of ``state``, with the pods ``beside`` names there counted too."""
    index = kept(state, "inter-pod index", cluster, lambda: interpod.InterPodIndex(cluster))
    return _fit_check(state, pod, filters, index, True, beside)(state, name)


def _allowances(cluster: Cluster, state: ClusterState) -> dict[str, int]:
    """Each budget's allowed disruptions, worked out once per cluster."""
    budgets = cluster.disruption_budgets
    return kept(
        state,
        "disruptions allowed",
        budgets,
        lambda: {b.key: disruptions_allowed(b, cluster.pods) for b in budgets},
    )


def _bound_priorities(cluster: Cluster) -> list[int]:
    """The priorities of the running pods (the largest int32 when none runs)."""
    return [p.priority for p in cluster.bound_pods()] or [2**31 - 1]
