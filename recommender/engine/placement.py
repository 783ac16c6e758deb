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
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from topology.hardware import Cluster, Pod

from . import fgd as _fgd  # noqa: F401  (registers the FGD score and policy)
from .allocate import Option, claim_takes, gpu_options, with_devices
from .diagnosis import (
    Diagnosis,
    block_reason,
    members_reason,
    node_diagnosis,
    unsupported_diagnosis,
)
from .filters import RESOURCE_RULES, STATIC_RULES, FilterContext, Status, run_filters
from .memo import NodeKeys, ScoreIndex, memoisable, pod_shape
from .scores import SCORE_RULES, Candidate, Policy, ScoreContext, policy_named
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
    # FGD's expected workload ("typical pods"); empty: the workloads being placed
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
) -> PlacementResult:
    """Place workloads in order on a copy of ``state`` (default: the cluster's own)."""
    work = state.copy() if state is not None else ClusterState.from_cluster(cluster)
    workloads = tuple(workloads)
    run = _Run(cluster, work, options, workloads)
    outcomes = tuple(run.place_workload(w) for w in workloads)
    return PlacementResult(outcomes, work)


def place_unindexed(
    cluster: Cluster,
    workloads: Iterable[Workload],
    *,
    options: PlacementOptions = PlacementOptions(),  # noqa: B008 (frozen, shared safely)
) -> PlacementResult:
    """``place`` visiting every node for every pod: the reference the score index
    (``memo.ScoreIndex``) is tested against; same decisions, much slower."""
    work = ClusterState.from_cluster(cluster)
    workloads = tuple(workloads)
    run = _Run(cluster, work, options, workloads, indexed=False)
    return PlacementResult(tuple(run.place_workload(w) for w in workloads), work)


def place_one(
    cluster: Cluster, workload: Workload, state: ClusterState, options: PlacementOptions
) -> WorkloadOutcome:
    """Place one workload, mutating ``state``; on failure ``state`` is as before."""
    return _Run(cluster, state, options, (workload,)).place_workload(workload)


class _Run:
    """One placement call: the filter context, policy, seeded randomness and caches."""

    def __init__(
        self,
        cluster: Cluster,
        state: ClusterState,
        options: PlacementOptions,
        workloads: Sequence[Workload],
        indexed: bool = True,
    ) -> None:
        self.cluster = cluster
        self.state = state
        self.policy: Policy = policy_named(options.policy)
        self.filters = FilterContext.build(cluster, options.reservation_grants, options.at)
        self.scores = ScoreContext(rng=random.Random(options.seed))
        self.scores.paths = _PathCache(cluster, state)
        self._keys = NodeKeys()
        self._memo: dict[tuple[int, int], tuple[float, int] | None] = {}
        self._reasons: dict[tuple[int, int], str] = {}
        self._static: dict[tuple[int, str], bool] = {}
        self._index = ScoreIndex(state.node_names()) if indexed else None
        if self.policy.needs_fragmentation:
            self.scores.fragmentation = _fgd.FragmentationModel.from_workloads(
                workloads, options.workload_mix
            )

    # --- workloads ----------------------------------------------------------------

    def place_workload(self, workload: Workload) -> WorkloadOutcome:
        unsupported = tuple(r for p in workload.pods for r in p.unsupported)
        if unsupported:
            return WorkloadOutcome(workload.key, False, (), unsupported_diagnosis(unsupported))
        level = workload.required_topology or workload.preferred_topology
        if level is not None and self.cluster.topology.index_of(level) is not None:
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
        groups: dict[tuple[str, ...], list[str]] = {}
        for name in self.state.node_names():
            path = self.scores.paths[name][: level_index + 1]
            if path[level_index] is None:
                continue  # unknown at this level: never guessed into a domain
            # An outer level may be unknown (no region label, say): the known values
            # below it still name the domain, keyed with "" for the unknown ones.
            groups.setdefault(tuple(v or "" for v in path), []).append(name)
        ranked = []
        for key, names in groups.items():
            free = sum(self._free_gpu_milli(n) for n in names) / 1000
            ranked.append((free < needed_gpus, free, key, names))
        ranked.sort(key=lambda item: (item[0], item[1], item[2]))
        return [(names, free) for too_small, free, _, names in ranked if not too_small] or [
            ([], max((free for _, free, _, _ in ranked), default=0.0))
        ]

    def _free_gpu_milli(self, node_name: str) -> int:
        alloc = self.state.alloc(node_name)
        return sum(max(0, 1000 - used) for used in alloc.gpu_milli.values())

    def _place_members(
        self, workload: Workload, node_names: Sequence[str]
    ) -> tuple[Binding, ...] | None:
        """All members (at least min_member) on ``node_names``, or None with nothing left bound."""
        if not node_names:
            return None
        placed: list[tuple[Pod, _Choice]] = []
        self.scores.member_paths = []
        for pod in workload.pods:
            choice = self._best_node(pod, node_names)
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
        self._changed(choice.node, released=False)

    def _undo(self, placed: list[tuple[Pod, _Choice]]) -> None:
        for pod, choice in reversed(placed):
            self.state.release(choice.node, pod.key, choice.allocation)
            self._changed(choice.node, released=True)

    def _changed(self, name: str, released: bool) -> None:
        self._keys.changed(name)
        if self._index is not None:
            self._index.changed(name, released)

    # --- one pod --------------------------------------------------------------------

    def _best_node(self, pod: Pod, node_names: Sequence[str]) -> _Choice | None:
        """Highest score wins; equal scores: the first, or a seeded uniform pick (as
        kube-scheduler's selectHost does) when the policy says "random"."""
        shape = self._shape(pod)
        if shape is not None and self._index is not None and self._index.covers(node_names):
            top, ties = self._index.best(shape, lambda name: self._memo_score(name, pod, shape))
            if ties == 0:
                return None
            name, option_index = self._index.nth_best(shape, top, self._pick(ties))
            return self._choice(name, pod, option_index)
        best: list[tuple[str, int]] = []
        best_score = float("-inf")
        for name in node_names:
            scored = (
                self._score_node(name, pod) if shape is None else self._memo_score(name, pod, shape)
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

    def _pick(self, ties: int) -> int:
        return self.scores.rng.randrange(ties) if self.policy.tie_break == "random" else 0

    def _shape(self, pod: Pod) -> int | None:
        """The memo id of the pod's shape, or None when its score depends on more."""
        if memoisable(pod) and not self.scores.member_paths:
            return self._keys.intern(("pod", *pod_shape(pod)))
        return None

    def _node_key(self, name: str) -> int:
        personal = bool(self.filters.granted) or name in self.filters.reserved_for
        return self._keys.key(name, self.state.info(name), self.state.alloc(name), personal)

    def _memo_score(self, name: str, pod: Pod, shape: int) -> tuple[float, int] | None:
        key = (shape, self._node_key(name))
        if key in self._memo:
            return self._memo[key]
        scored = self._score_node(name, pod, shape)
        self._memo[key] = scored
        return scored

    def _candidates(self, name: str, pod: Pod, shape: int | None = None) -> list[Candidate] | None:
        info = self.state.info(name)
        alloc = self.state.alloc(name)
        if not self._static_ok(info, alloc, pod, shape):
            return None
        for rule in RESOURCE_RULES:
            if not rule(info, alloc, pod, self.filters).ok:
                return None
        options = self._device_options(name, pod)
        if isinstance(options, str):
            return None
        return [Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options]

    def _static_ok(self, info: NodeInfo, alloc: NodeAlloc, pod: Pod, shape: int | None) -> bool:
        """The rules that read no free resources, once per (pod's static needs, node)."""
        needs = self._keys.intern(
            (
                "static",
                pod.namespace,
                pod.tolerations,
                tuple(sorted(pod.node_selector.items())),
                pod.affinity,
            )
        )
        key = (needs, info.node.name)
        verdict = self._static.get(key)
        if verdict is None:
            verdict = all(rule(info, alloc, pod, self.filters).ok for rule in STATIC_RULES)
            self._static[key] = verdict
        return verdict

    def _score_node(
        self, name: str, pod: Pod, shape: int | None = None
    ) -> tuple[float, int] | None:
        """The node's score and the index of the device option it would use."""
        candidates = self._candidates(name, pod, shape)
        if candidates is None:
            return None
        if self.policy.device_rule is None:
            scores = [self.policy.score(c, self.scores) for c in _distinct(candidates)]
            best = max(range(len(scores)), key=lambda i: scores[i])
            return scores[best], _distinct_index(candidates, best)
        device_rule = SCORE_RULES[self.policy.device_rule]
        index = max(range(len(candidates)), key=lambda i: device_rule(candidates[i], self.scores))
        return self.policy.score(candidates[index], self.scores), index

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
        reasons, placed = self._first_blocked_member(workload)
        if gang_reason is None and workload.kind == "gang" and placed > 0:
            gang_reason = members_reason(placed, len(workload.pods))
        total = len(self.state.node_names())
        return WorkloadOutcome(workload.key, False, (), node_diagnosis(total, reasons, gang_reason))

    def _first_blocked_member(self, workload: Workload) -> tuple[list[str], int]:
        """Per-node reasons for the first member that does not fit anywhere (greedy, undone)."""
        placed: list[tuple[Pod, _Choice]] = []
        reasons: list[str] = []
        for pod in workload.pods:
            choice = self._best_node(pod, self.state.node_names())
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


class _PathCache(dict[str, tuple[str | None, ...]]):
    """Topology path per node name, computed on first use (nodes may be added later)."""

    def __init__(self, cluster: Cluster, state: ClusterState) -> None:
        super().__init__()
        self._topology = cluster.topology
        self._state = state

    def __missing__(self, name: str) -> tuple[str | None, ...]:
        path = self._topology.path(self._state.node(name).labels)
        self[name] = path
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
