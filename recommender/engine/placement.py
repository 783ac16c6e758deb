"""The scheduler simulation: where would pending work land? (Filter → Score → Bind)

::

    workloads (priority, arrival) ──► for each workload
        pod  ──► filter every node ──► score feasible (node, devices) ──► bind
        gang ──► domains of the required/preferred level, best first
                 └─► members one by one inside the domain; any miss → undo all
        miss ──► Diagnosis (per-node reasons aggregated + gang reason)

Binding happens in a ``ClusterState`` copy, never in the caller's state, so
the autoscaler can ask "what if" as often as it likes. ``place_one`` is the
in-place variant for callers that manage copies themselves; it leaves the
state untouched when a workload does not fit (no partial gang).

What makes thousands of such calls on a 10,000-node state affordable, without
changing a decision (``place_unindexed`` is the reference the tests compare to)::

    _SharedMemo   per (policy, grants, time, FGD mix), in ClusterState.derived:
                  filter context, static verdicts, scores per (pod shape, node key)
    ScoreIndex    per state and memo, a watcher of the state: every node's score
                  per pod shape, re-scored only where nodes changed; copies clone it
    _Layout       per node list, in ClusterState.by_nodes: topology paths, domains,
                  selector matches; extended (not rebuilt) when a node is added
    _DomainFree   per state, a watcher: free GPU milli per topology domain
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import compress
from operator import itemgetter
from typing import TypeVar, cast

from topology.hardware import Cluster, Pod

from . import fgd as _fgd  # noqa: F401  (registers the FGD score and policy)
from .admission import held
from .allocate import Option, claim_takes, gpu_options, with_devices
from .diagnosis import (
    Diagnosis,
    block_reason,
    members_reason,
    node_diagnosis,
)
from .filters import (
    RESOURCE_RULES,
    STATIC_RULES,
    FilterContext,
    Status,
    reserved_nodes_at,
    run_filters,
)
from .memo import NO_SCORE, NodeKeys, ScoreIndex, memoisable, pod_shape
from .scores import (
    MAX_SCORE,
    SCORE_RULES,
    Candidate,
    Policy,
    ScoreContext,
    policy_named,
)
from .state import (
    Allocation,
    ClusterState,
    NodeAlloc,
    NodeInfo,
    device_gpu_milli,
    pod_allocation_base,
)
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


@dataclass(frozen=True, slots=True)
class Binding:
    pod: str
    node: str
    devices: tuple[str, ...]
    gpu_milli: int


@dataclass(frozen=True, slots=True)
class WorkloadOutcome:
    workload: str
    placed: bool
    bindings: tuple[Binding, ...]
    diagnosis: Diagnosis | None


@dataclass(frozen=True, slots=True)
class PlacementResult:
    outcomes: tuple[WorkloadOutcome, ...]
    state: ClusterState


@dataclass(frozen=True, slots=True)
class _Choice:
    node: str
    allocation: Allocation
    gpu_milli: int


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
    outcomes = tuple(run.place_workload(w) for w in workloads)
    return PlacementResult(outcomes, work)


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
    return PlacementResult(tuple(run.place_workload(w) for w in workloads), work)


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
    return [names[p] for p in _Layout.of(cluster, state).matching(selector)]


def nodes_by_label(cluster: Cluster, state: ClusterState, key: str) -> dict[str, list[str]]:
    """The state's nodes grouped by their value of label ``key`` (nodes without it left
    out), in node order; kept with the node list. Do not mutate."""
    return _Layout.of(cluster, state).by_label(key)


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

    def place_one(self, workload: Workload) -> WorkloadOutcome:
        if self._run is None:
            return place_one(
                self._cluster, workload, self._state, self._options, diagnose=self._diagnose
            )
        self._run.scores.rng = self._run._base.rng = random.Random(self._options.seed)
        self._run.scores.member_paths = []
        return self._run.place_workload(workload)


class _Run:
    """One placement call: the filter context, policy, seeded randomness and caches."""

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
        self.policy: Policy = policy_named(options.policy)
        typical = _typical(state, options, workloads) if self.policy.needs_fragmentation else None
        shared = _SharedMemo.of(cluster, state, options, self.policy, typical)
        self.filters = shared.filters
        self.scores = ScoreContext(rng=random.Random(options.seed))
        self._layout = _Layout.of(cluster, state)
        self.scores.paths = self._layout.paths
        self._keys = shared.keys
        self._memo = shared.scores
        self._reasons = shared.reasons
        self._static = shared.static
        self._needs: dict[int, tuple[Pod, int]] = {}  # id(pod) → (pod, its static needs)
        self._index = _index_of(state, shared) if indexed else None
        self.scores.fragmentation = shared.fragmentation
        # Memoised scores are computed without the gang's members (``base``);
        # closeness to them is added per node (see ``_closeness_weight``).
        self._base = ScoreContext(
            rng=self.scores.rng, paths=self.scores.paths, fragmentation=self.scores.fragmentation
        )
        self._depth = len(cluster.topology.levels)
        weight = _closeness_weight(self.policy)
        self._closeness_weight = 0.0 if self._depth == 0 and weight is not None else weight
        self._domain_free = _DomainFree.of(state)

    def prepare(self, pods: Iterable[Pod], reasons: bool) -> None:
        shapes: dict[int, Pod] = {}
        for pod in pods:
            shape = self._shape(pod)
            if shape is not None:
                shapes.setdefault(shape, pod)
        for shape, pod in shapes.items():
            self._column(pod, shape)
            if reasons:
                self._node_reasons(pod)

    # --- workloads ----------------------------------------------------------------

    def place_workload(self, workload: Workload) -> WorkloadOutcome:
        hold = held(workload, self.cluster.topology, len(self.state.node_names()))
        if hold is not None:
            return WorkloadOutcome(workload.key, False, (), hold.diagnosis)
        level = workload.required_topology or workload.preferred_topology
        if level is not None:
            return self._place_in_domains(workload, level, workload.required_topology is not None)
        bindings = self._place_members(workload, self.state.node_names())
        if bindings is not None:
            return WorkloadOutcome(workload.key, True, bindings, None)
        return self._failure(workload, None)

    def _place_in_domains(self, workload: Workload, level: str, required: bool) -> WorkloadOutcome:
        index = self.cluster.topology.index_of(level)
        assert index is not None
        levels = [index] if required else list(range(index, -1, -1))
        best_free = 0.0
        for level_index in levels:
            for domain_nodes, free_gpus in self._domains(level_index, workload.gpus):
                best_free = max(best_free, free_gpus)
                bindings = self._place_members(workload, domain_nodes)
                if bindings is not None:
                    return WorkloadOutcome(workload.key, True, bindings, None)
        if not required:
            bindings = self._place_members(workload, self.state.node_names())
            if bindings is not None:
                return WorkloadOutcome(workload.key, True, bindings, None)
            return self._failure(workload, None)
        name = self.cluster.topology.levels[index].name
        if best_free < workload.gpus:
            return self._failure(workload, block_reason(workload.gpus, name, best_free))
        return self._failure(workload, f"does not fit in any single {name}")

    def _domains(self, level_index: int, needed_gpus: float) -> list[tuple[list[str], float]]:
        """Domains of one level, tightest fitting first (keeps big blocks whole); ties by name.

        Every domain is returned so the caller knows the best free figure; the
        ones too small for the gang's GPUs are skipped before any binding.
        """
        ranked = []
        free_of = self._domain_free.of_level(self._layout, level_index)
        for key, names in self._layout.domains(level_index).items():
            milli = free_of.get(key)
            if milli is None:
                alloc = self.state.alloc
                milli = free_of[key] = sum(alloc(n).free_gpu_milli for n in names)
            free = milli / 1000
            ranked.append((free < needed_gpus, free, key, names))
        ranked.sort(key=lambda item: (item[0], item[1], item[2]))
        return [(names, free) for too_small, free, _, names in ranked if not too_small] or [
            ([], max((free for _, free, _, _ in ranked), default=0.0))
        ]

    def _place_members(
        self, workload: Workload, node_names: Sequence[str]
    ) -> tuple[Binding, ...] | None:
        """All members (at least min_member) on ``node_names``, or None with nothing left bound."""
        if not node_names:
            return None
        placed: list[tuple[Pod, _Choice]] = []
        self.scores.member_paths = []
        scope = self._scope(node_names)
        for pod in workload.pods:
            choice = self._best_node(pod, scope)
            if choice is None:
                if len(placed) >= workload.min_member and workload.kind == "gang":
                    continue
                self._undo(placed)
                return None
            self._apply(pod, choice)
            self.scores.member_paths.append(self.scores.paths[choice.node])
            placed.append((pod, choice))
        if len(placed) < workload.min_member:
            self._undo(placed)
            return None
        return tuple(_binding(pod, choice) for pod, choice in placed)

    def _apply(self, pod: Pod, choice: _Choice) -> None:
        self.state.apply(choice.node, pod.key, choice.allocation)

    def _undo(self, placed: list[tuple[Pod, _Choice]]) -> None:
        for pod, choice in reversed(placed):
            self.state.release(choice.node, pod.key, choice.allocation)

    def _scope(self, node_names: Sequence[str]) -> _Scope:
        if self._index is None:
            return _Scope(node_names, None, None)
        return self._layout.scope(node_names, self._index)

    # --- one pod --------------------------------------------------------------------

    def _best_node(self, pod: Pod, scope: _Scope) -> _Choice | None:
        """Highest score wins; equal scores: the first, or a seeded uniform pick (as
        kube-scheduler's selectHost does) when the policy says "random"."""
        shape = self._shape(pod)
        members = self.scores.member_paths
        weight = self._closeness_weight
        indexed = self._index is not None and scope.positions is not None
        if shape is not None and indexed and (not members or weight is not None):
            assert self._index is not None
            scores, options = self._column(pod, shape)
            if members and weight:
                tied = self._closest_best(scores, shape, scope, weight)
            elif scope.members is None:  # the whole index: its kept best
                top_score, tied = self._index.top(shape)
                tied = [] if top_score == NO_SCORE else tied
            else:
                tied = _best_positions(scores, scope)
            if not tied:
                return None
            position = tied[self._pick(len(tied))]
            return self._choice(self._index.names[position], pod, options[position])
        best: list[tuple[str, int]] = []
        best_score = float("-inf")
        for name in scope.names:
            scored = (
                self._memo_score(name, pod, shape)
                if shape is not None and (not members or weight == 0.0)
                else self._score_node(name, pod)
            )
            if scored is None:
                continue
            score, option_index = scored
            if score > best_score:
                best, best_score = [(name, option_index)], score
            elif score == best_score:
                best.append((name, option_index))
        if not best:
            return None
        name, option_index = best[self._pick(len(best))]
        return self._choice(name, pod, option_index)

    def _column(self, pod: Pod, shape: int) -> tuple[list[float], list[int]]:
        """Every indexed node's score for the pod's shape (see ``ScoreIndex.column``)."""
        assert self._index is not None
        return self._index.column(
            shape,
            lambda name: self._memo_score(name, pod, shape),
            self._layout.matching(pod.node_selector) if pod.node_selector else None,
        )

    def _pick(self, ties: int) -> int:
        return self.scores.rng.randrange(ties) if self.policy.tie_break == "random" else 0

    def _closest_best(
        self, scores: list[float], shape: int, scope: _Scope, weight: float
    ) -> list[int]:
        """Positions (in node order) of the best ``base + weight·closeness`` in scope.

        Closeness to the members is c/depth of MAX_SCORE for a node sharing c
        levels with one of them, so the best is the best, over c, of the best
        base score among nodes sharing at least c levels (the members' domains
        at level c) plus c's bonus; only the domains reaching it are searched
        for ties, never every node. A node found at level c with score + c's
        bonus equal to the best shares exactly c levels (sharing e > c, it would
        score more than the best at level e), so that sum is its full score.
        """
        members = self.scores.member_paths
        depth = self._depth
        assert self._index is not None
        ceiling = self._index.top(shape)[0]  # no node in any scope scores more
        best = NO_SCORE
        levels: list[tuple[float, float, list[int]]] = []
        for shared in range(depth, -1, -1):  # deepest (largest bonus) first
            bonus = weight * (MAX_SCORE * shared / depth)
            if ceiling + bonus < best:
                continue  # even the best node of the index could not reach the best here
            if shared == 0 and scope.members is None:
                # the whole index: its kept best, and only the nodes holding it can tie
                # (bonus is 0.0 here, so score + bonus == best means score == best)
                top_score, positions = self._index.top(shape)
                top = top_score + bonus
            else:
                positions = self._shared_positions(shared, members, scope)
                top = max(_gather(scores, positions), default=NO_SCORE) + bonus
            levels.append((top, bonus, positions))
            best = max(best, top)
        if best == NO_SCORE:
            return []
        tied: set[int] = set()
        for top, bonus, positions in levels:
            if top == best:
                tied.update(p for p in positions if scores[p] + bonus == best)
        return sorted(tied)

    def _index_names(self) -> tuple[str, ...]:
        assert self._index is not None
        return self._index.names

    def _shared_positions(
        self, shared: int, members: list[tuple[str | None, ...]], scope: _Scope
    ) -> list[int]:
        """Scope positions whose nodes share at least ``shared`` levels with a member."""
        assert scope.positions is not None
        if shared == 0:
            return scope.positions
        prefixes = {m[:shared] for m in members if None not in m[:shared]}
        if not prefixes:
            return []
        by_prefix = self._layout.prefix_positions(shared)
        found = [p for prefix in prefixes for p in by_prefix.get(prefix, ())]
        if scope.members is None:
            return found
        if len(found) <= len(scope.positions):
            return [p for p in found if p in scope.members]
        names, paths = self._index_names(), self.scores.paths
        return [p for p in scope.positions if paths[names[p]][:shared] in prefixes]

    def _shape(self, pod: Pod) -> int | None:
        """The memo id of the pod's shape, or None when its score cannot be memoised."""
        if self._index is not None and memoisable(pod):
            return self._keys.intern(("pod", *pod_shape(pod, self._namespace_class(pod))))
        return None

    def _namespace_class(self, pod: Pod) -> str:
        """The pod's namespace where a filter tells it apart (it owns a reservation or
        holds a grant), else "": the filters treat every other namespace alike."""
        namespace = pod.namespace
        if namespace in self.filters.owners or namespace in self.filters.granted:
            return namespace
        return ""

    def _node_key(self, name: str) -> int:
        personal = bool(self.filters.granted) or name in self.filters.reserved_for
        return self._keys.key(self.state.info(name), self.state.alloc(name), personal)

    def _memo_score(self, name: str, pod: Pod, shape: int) -> tuple[float, int] | None:
        """The node's score without gang closeness; labels (selector, affinity) are
        checked per node first, the rest depends on the node key only."""
        if not self._static_ok(self.state.info(name), self.state.alloc(name), pod):
            return None
        key = (shape, self._node_key(name))
        if key in self._memo:
            return self._memo[key]
        scored = self._score_node(name, pod, self._base)
        self._memo[key] = scored
        return scored

    def _candidates(self, name: str, pod: Pod) -> list[Candidate] | None:
        info = self.state.info(name)
        alloc = self.state.alloc(name)
        if not self._static_ok(info, alloc, pod):
            return None
        for rule in RESOURCE_RULES:
            if not rule(info, alloc, pod, self.filters).ok:
                return None
        options = self._device_options(name, pod)
        if isinstance(options, str):
            return None
        return [Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options]

    def _static_ok(self, info: NodeInfo, alloc: NodeAlloc, pod: Pod) -> bool:
        return not self._static_reason(info, alloc, pod)

    def _static_reason(self, info: NodeInfo, alloc: NodeAlloc, pod: Pod) -> str:
        """The first failing rule that reads no free resources ("" when none fails),
        once per (pod's static needs, node)."""
        cached = self._needs.get(id(pod))
        if cached is None or cached[0] is not pod:
            needs = self._keys.intern(
                (
                    "static",
                    self._namespace_class(pod),
                    pod.tolerations,
                    tuple(sorted(pod.node_selector.items())),
                    pod.affinity,
                )
            )
            cached = self._needs[id(pod)] = (pod, needs)
        key = (cached[1], info.node.name)
        reason = self._static.get(key)
        if reason is None:
            reason = self._static[key] = next(
                (s.reason for r in STATIC_RULES if not (s := r(info, alloc, pod, self.filters)).ok),
                "",
            )
        return reason

    def _score_node(
        self, name: str, pod: Pod, ctx: ScoreContext | None = None
    ) -> tuple[float, int] | None:
        """The node's score and the index of the device option it would use."""
        ctx = ctx or self.scores
        candidates = self._candidates(name, pod)
        if candidates is None:
            return None
        if self.policy.device_rule is None:
            scores = [self.policy.score(c, ctx) for c in _distinct(candidates)]
            best = max(range(len(scores)), key=lambda i: scores[i])
            return scores[best], _distinct_index(candidates, best)
        device_rule = SCORE_RULES[self.policy.device_rule]
        index = max(range(len(candidates)), key=lambda i: device_rule(candidates[i], ctx))
        return self.policy.score(candidates[index], ctx), index

    def _choice(self, name: str, pod: Pod, option_index: int) -> _Choice:
        candidates = self._candidates(name, pod)
        assert candidates is not None
        chosen = candidates[option_index]
        allocation = with_devices(pod_allocation_base(pod), chosen.devices)
        return _Choice(name, allocation, chosen.gpu_milli)

    def _device_options(self, name: str, pod: Pod) -> list[Option] | str:
        info = self.state.info(name)
        alloc = self.state.alloc(name)
        options: list[Option] = [()]
        if pod.gpu is not None and pod.gpu.count > 0:
            found = gpu_options(info, alloc, pod.gpu)
            if isinstance(found, str):
                return found
            options = found
        if pod.claims:
            takes = claim_takes(info, alloc, pod, self.filters.device_classes)
            if isinstance(takes, str):
                return takes
            options = [(*o, *takes) for o in options]
        return options

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
        """Per-node reasons for the first member that does not fit anywhere (greedy, undone)."""
        placed: list[tuple[Pod, _Choice]] = []
        reasons: list[str] = []
        scope = self._scope(self.state.node_names())
        for pod in workload.pods:
            choice = self._best_node(pod, scope)
            if choice is None:
                reasons = [r for r in self._node_reasons(pod) if r]
                break
            self._apply(pod, choice)
            placed.append((pod, choice))
        count = len(placed)
        self._undo(placed)
        return reasons, count

    def _node_reasons(self, pod: Pod) -> list[str]:
        """Each node's first failing filter reason ("" where the pod would fit)."""
        names = self.state.node_names()
        shape = self._shape(pod)
        if shape is None:
            return [self._filter_reason(n, pod) for n in names]
        if self._index is not None and self._index.covers(names):
            return self._index.reasons(shape, lambda name: self._memo_reason(name, pod, shape))
        return [self._memo_reason(n, pod, shape) for n in names]

    def _memo_reason(self, name: str, pod: Pod, shape: int) -> str:
        """The static rules come first (kept per node), the rest depends on the node key."""
        static = self._static_reason(self.state.info(name), self.state.alloc(name), pod)
        if static:
            return static
        key = (shape, self._node_key(name))
        reason = self._reasons.get(key)
        if reason is None:
            reason = self._reasons[key] = self._filter_reason(name, pod)
        return reason

    def _filter_reason(self, name: str, pod: Pod) -> str:
        status: Status = run_filters(
            self.state.info(name), self.state.alloc(name), pod, self.filters
        )
        return status.reason


def _typical(
    state: ClusterState, options: PlacementOptions, workloads: Sequence[Workload]
) -> tuple[_fgd.TypicalPod, ...]:
    """FGD's typical pods: of the options' mix (worked out once per mix object and
    kept with the state's caches), else of the call's own workloads."""
    mix = options.workload_mix
    if not mix:
        return _fgd.typical_pods(p for w in workloads for p in w.pods)
    return _kept(state, ("typical pods", id(mix)), mix, lambda: _fgd.typical_pods(mix))


class _SharedMemo:
    """What placement calls on one state and its copies share: the filter context
    and every memo that depends only on the model, the options and node keys.

    Kept in ``ClusterState.derived`` per (policy, grants, time, FGD's typical
    pods): calls that agree on all of them score every node alike.
    """

    def __init__(
        self,
        cluster: Cluster,
        options: PlacementOptions,
        typical: tuple[_fgd.TypicalPod, ...] | None,
        reserved_for: Mapping[str, frozenset[str]],
    ) -> None:
        self.cluster = cluster
        self.filters = FilterContext.build(
            cluster, options.reservation_grants, options.at, reserved_for
        )
        self.fragmentation = None if typical is None else _fgd.FragmentationModel(typical)
        self.keys = NodeKeys()
        self.scores: dict[tuple[int, int], tuple[float, int] | None] = {}
        self.reasons: dict[tuple[int, int], str] = {}
        self.static: dict[tuple[int, str], str] = {}  # first failing static rule, "" if none

    @classmethod
    def of(
        cls,
        cluster: Cluster,
        state: ClusterState,
        options: PlacementOptions,
        policy: Policy,
        typical: tuple[_fgd.TypicalPod, ...] | None,
    ) -> _SharedMemo:
        grants = tuple(sorted((k, tuple(sorted(v))) for k, v in options.reservation_grants.items()))
        key = ("placement", policy.name, grants, options.at, typical)
        found = state.derived.get(key)
        if isinstance(found, _SharedMemo) and found.cluster is cluster:
            return found
        memo = cls(cluster, options, typical, _reserved_for(cluster, state, options.at))
        state.derived[key] = memo
        return memo


def _reserved_for(
    cluster: Cluster, state: ClusterState, at: datetime | None
) -> Mapping[str, frozenset[str]]:
    """Which namespaces hold each reserved node: the same for every call at ``at``."""
    return _kept(state, ("reserved nodes", at), cluster, lambda: reserved_nodes_at(cluster, at))


_T = TypeVar("_T")


def _kept(state: ClusterState, key: object, source: object, compute: Callable[[], _T]) -> _T:
    """``compute()`` once for a state and its copies, while ``source`` (the object it
    is computed from) is the same object."""
    found = state.derived.get(key)
    if isinstance(found, tuple) and found[0] is source:
        return cast(_T, found[1])
    value = compute()
    state.derived[key] = (source, value)
    return value


class _DomainFree:
    """Free GPU milli per topology domain, kept on the state across placement calls
    (a ``ClusterState`` watcher): a domain's sum is dropped when one of its nodes
    changes or joins, and summed again when next asked."""

    def __init__(self) -> None:
        self._free: dict[int, dict[tuple[str, ...], int]] = {}  # level → domain key → milli
        self._dirty: set[str] = set()

    @classmethod
    def of(cls, state: ClusterState) -> _DomainFree:
        found = state.watchers.get(cls)
        if isinstance(found, _DomainFree):
            return found
        kept = cls()
        state.watchers[cls] = kept
        return kept

    def changed(self, name: str, released: bool) -> None:
        self._dirty.add(name)

    def added(self, name: str) -> None:
        self._dirty.add(name)

    def clone(self) -> _DomainFree:
        other = _DomainFree()
        other._free = {level: dict(free) for level, free in self._free.items()}
        other._dirty = set(self._dirty)
        return other

    def of_level(self, layout: _Layout, level_index: int) -> dict[tuple[str, ...], int]:
        """The level's kept sums (the caller fills in missing domains)."""
        if self._dirty:
            for level, free in self._free.items():
                of = layout.domain_of(level)
                for name in self._dirty:
                    key = of.get(name)
                    if key is not None:
                        free.pop(key, None)
            self._dirty.clear()
        return self._free.setdefault(level_index, {})


def _index_of(state: ClusterState, shared: _SharedMemo) -> ScoreIndex:
    """The state's score index for calls sharing ``shared`` (made on first use; the
    state keeps it up to date and hands copies a clone)."""
    index = state.watchers.get(shared)
    if not isinstance(index, ScoreIndex) or not index.covers(state.node_names()):
        index = ScoreIndex(state.node_names())
        state.watchers[shared] = index
    return index


class _Layout:
    """What placement derives from the node list alone, for every call on states with
    that list (``ClusterState.by_nodes``): topology paths, each level's domains,
    node positions per shared path prefix (what gang closeness searches) and per
    nodeSelector. A state that adds a node gets an extended copy, not a rebuild.
    """

    def __init__(self, cluster: Cluster, state: ClusterState) -> None:
        self.cluster = cluster
        self.names = state.node_names()
        self.paths = _PathCache(cluster, state)
        self._info = state.info  # the same NodeInfo for a name in every state sharing this
        self._domains: dict[int, dict[tuple[str, ...], list[str]]] = {}
        self._domain_of: dict[int, dict[str, tuple[str, ...]]] = {}
        self._prefixes: dict[int, dict[tuple[str | None, ...], list[int]]] = {}
        self._matching: dict[tuple[tuple[str, str], ...], list[int]] = {}
        self._scopes: dict[int, tuple[Sequence[str], _Scope]] = {}
        self._by_label: dict[str, dict[str, list[str]]] = {}

    @classmethod
    def of(cls, cluster: Cluster, state: ClusterState) -> _Layout:
        key = ("placement layout", cluster.topology)
        found = state.by_nodes.get(key)
        if isinstance(found, _Layout) and found.names is state.node_names():
            return found
        layout = cls(cluster, state)
        state.by_nodes[key] = layout
        return layout

    def extended(self, state: ClusterState, name: str) -> _Layout:
        """This layout with ``name`` appended (the state has just added it). What is
        computed already is copied and grown; every changed list is a new list, so
        the states still sharing this layout see it unchanged."""
        other = _Layout.__new__(_Layout)
        other.cluster, other.names, other._info = self.cluster, state.node_names(), state.info
        other.paths = _PathCache(self.cluster, state)  # filled again lazily from NodeInfo
        path, labels = other.paths[name], state.info(name).node.labels
        position = len(other.names) - 1
        other._domains, other._domain_of = {}, {}
        for level_index, domains in self._domains.items():
            grown, of = dict(domains), dict(self._domain_of[level_index])
            if path[level_index] is not None:
                key = _domain_key(path, level_index)
                grown[key] = [*grown.get(key, ()), name]
                of[name] = key
            other._domains[level_index], other._domain_of[level_index] = grown, of
        other._prefixes = {}
        for shared, by_prefix in self._prefixes.items():
            grown_prefixes = dict(by_prefix)
            if None not in path[:shared]:
                grown_prefixes[path[:shared]] = [*by_prefix.get(path[:shared], ()), position]
            other._prefixes[shared] = grown_prefixes
        other._matching = {
            selector: [*positions, position] if _matches(labels, selector) else positions
            for selector, positions in self._matching.items()
        }
        other._scopes = {}
        other._by_label = {}
        for label, groups in self._by_label.items():
            value = labels.get(label)
            grown_groups = dict(groups)
            if value is not None:
                grown_groups[value] = [*groups.get(value, ()), name]
            other._by_label[label] = grown_groups
        return other

    def by_label(self, key: str) -> dict[str, list[str]]:
        found = self._by_label.get(key)
        if found is None:
            found = {}
            info = self._info
            for name in self.names:
                value = info(name).node.labels.get(key)
                if value is not None:
                    found.setdefault(value, []).append(name)
            self._by_label[key] = found
        return found

    def scope(self, node_names: Sequence[str], index: ScoreIndex) -> _Scope:
        """``node_names`` (this layout's node list or one of its domains) with their
        index positions, kept per list object."""
        found = self._scopes.get(id(node_names))
        if found is not None and found[0] is node_names:
            return found[1]
        if index.covers(node_names):
            scope = _Scope(node_names, list(range(len(node_names))), None)
        else:
            positions = index.positions(node_names)
            scope = _Scope(node_names, positions, None if positions is None else set(positions))
        self._scopes[id(node_names)] = (node_names, scope)
        return scope

    def domains(self, level_index: int) -> dict[tuple[str, ...], list[str]]:
        """The level's domains: key → nodes in node order, in first-node order."""
        domains = self._domains.get(level_index)
        if domains is not None:
            return domains
        domains, of = {}, {}
        for name in self.names:
            path = self.paths[name]
            if path[level_index] is None:
                continue  # unknown at this level: never guessed into a domain
            key = _domain_key(path, level_index)
            domains.setdefault(key, []).append(name)
            of[name] = key
        self._domains[level_index], self._domain_of[level_index] = domains, of
        return domains

    def domain_of(self, level_index: int) -> dict[str, tuple[str, ...]]:
        self.domains(level_index)
        return self._domain_of[level_index]

    def matching(self, selector: Mapping[str, str]) -> list[int]:
        """Positions of the nodes whose labels hold every ``selector`` entry."""
        key = tuple(sorted(selector.items()))
        found = self._matching.get(key)
        if found is None:
            info = self._info
            found = [p for p, n in enumerate(self.names) if _matches(info(n).node.labels, key)]
            self._matching[key] = found
        return found

    def prefix_positions(self, shared: int) -> dict[tuple[str | None, ...], list[int]]:
        """Node positions by their path's first ``shared`` levels (all known)."""
        by_prefix = self._prefixes.get(shared)
        if by_prefix is None:
            by_prefix = {}
            for position, name in enumerate(self.names):
                prefix = self.paths[name][:shared]
                if None not in prefix:
                    by_prefix.setdefault(prefix, []).append(position)
            self._prefixes[shared] = by_prefix
        return by_prefix


def _domain_key(path: tuple[str | None, ...], level_index: int) -> tuple[str, ...]:
    """A domain's key: its path down to the level. An outer level may be unknown (no
    region label, say): the known values below it still name the domain, with ""
    for the unknown ones."""
    return tuple(v or "" for v in path[: level_index + 1])


def _matches(labels: Mapping[str, str], selector: tuple[tuple[str, str], ...]) -> bool:
    return all(labels.get(k) == v for k, v in selector)


@dataclass(frozen=True, slots=True)
class _Scope:
    """The nodes a pod may go to, with their score-index positions when indexed
    (ascending) and, for a strict subset, those positions as a set."""

    names: Sequence[str]
    positions: list[int] | None
    members: set[int] | None


def _closeness_weight(policy: Policy) -> float | None:
    """How gang closeness enters the policy's node score, for scoring members off the
    memo: 0.0 when it does not (no topology rule), its weight when it is the last,
    positive term (the sum is then the memoised score plus weight × closeness, to
    the bit), None when members must be scored node by node.

    Closeness is one value per node, equal for every device option there, so a
    policy that rates device options with its own score (FGD: ``device_rule`` None)
    picks the same option with or without it: the memo holds for it too."""
    names = [name for name, _ in policy.weights]
    if "topology" not in names:
        return 0.0
    weight = policy.weights[-1][1]
    if names.index("topology") != len(names) - 1 or weight <= 0:
        return None
    return weight


def _gather(values: list[float], positions: list[int]) -> list[float]:
    if len(positions) > 1:
        return list(itemgetter(*positions)(values))
    return [values[p] for p in positions]


def _best_positions(scores: list[float], scope: _Scope) -> list[int]:
    """Positions in a domain holding the best score, in node order (empty: none fits)."""
    assert scope.positions is not None
    values = _gather(scores, scope.positions)
    best = max(values, default=NO_SCORE)
    if best == NO_SCORE:
        return []
    return list(compress(scope.positions, map(best.__eq__, values)))


class _PathCache(dict[str, tuple[str | None, ...]]):
    """Topology path per node name, computed on first use (nodes may be added later)."""

    def __init__(self, cluster: Cluster, state: ClusterState) -> None:
        super().__init__()
        self._topology = cluster.topology
        self._state = state

    def __missing__(self, name: str) -> tuple[str | None, ...]:
        path = self[name] = self._state.info(name).path(self._topology)
        return path


def _free_signature(candidate: Candidate) -> tuple[int, ...]:
    alloc, devices = candidate.alloc, candidate.info.devices
    return tuple(alloc.device_milli_free(devices[t.device]) for t in candidate.devices)


def _distinct(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per distinct free-capacity pattern: equal GPUs score equally."""
    seen: set[tuple[int, ...]] = set()
    kept = []
    for candidate in candidates:
        signature = _free_signature(candidate)
        if signature not in seen:
            seen.add(signature)
            kept.append(candidate)
    return kept


def _distinct_index(candidates: list[Candidate], distinct_position: int) -> int:
    target = _free_signature(_distinct(candidates)[distinct_position])
    return next(i for i, c in enumerate(candidates) if _free_signature(c) == target)


def _option_gpu_milli(info: NodeInfo, option: Option) -> int:
    total = 0
    for take in option:
        device = info.devices[take.device]
        if device.gpu is not None:
            total += device_gpu_milli(device, take, info)
    return total


def _binding(pod: Pod, choice: _Choice) -> Binding:
    return Binding(
        pod=pod.key,
        node=choice.node,
        devices=choice.allocation.device_names,
        gpu_milli=choice.gpu_milli,
    )
