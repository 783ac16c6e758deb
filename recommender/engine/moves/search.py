"""The fewest running pods to move so that a blocked workload runs now, verified.

::

    blocked workload W ──► domains (its required level's, else the whole cluster)
         │                 nodes ranked by the cheapest set of movable pods
         │                 (``drainability.movable``) that makes room for one member
         ▼
    lone pod: each node's cheapest sets, cheapest first ─┐
    gang: a domain's nodes added cheapest first until    ├─► verify ──► first that
          its free + freed GPUs reach W's                ┘     passes is the plan

Cheapest: fewest GPUs disrupted, then fewest pods moved, then names. Verification
runs the scheduler simulation (``placement.place_one``, ``place``) on a copy of the
state with the moved pods released: W must bind, then every moved pod must bind again
on a node it was not moved from (those nodes are tainted for W until it binds, see
``report``); nobody preempts. W is placed alone, as if it were next in the queue.

Bounds (counts, no clock): the ``MAX_CHOICES`` smallest movable pods of a node, sets
of at most ``MAX_PODS_PER_NODE`` of them, the ``SETS_PER_NODE`` cheapest sets per node,
``MAX_PODS`` pods per plan and ``MAX_VERIFICATIONS`` simulations per workload. Within
them a lone pod's plan is the cheapest single-node set that verifies; a gang's is the
greedy one, not proven the cheapest.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from recommender.engine.scheduler.placement import (
    Binding,
    PlacementOptions,
    place,
    place_one,
)
from recommender.engine.scheduler.records import NodeAlloc
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload, pod_gpu_milli, pod_workload
from topology.model.hardware import Cluster, Pod

from .drainability import DrainContext, DrainStatus, movable, sequential_budgets

MAX_CHOICES = 8
MAX_PODS_PER_NODE = 4
SETS_PER_NODE = 3
MAX_PODS = 8
MAX_VERIFICATIONS = 24


@dataclass(frozen=True, slots=True)
class Move:
    """One pod evicted from ``from_node``; its replacement binds on ``to_node``."""

    pod: str
    from_node: str
    to_node: str
    gpu_milli: int
    controller: str | None
    started: float | None


@dataclass(frozen=True, slots=True)
class MovePlan:
    """The pods to move for ``workload``, where it then binds, and what that disrupts."""

    workload: str
    moves: tuple[Move, ...]
    bindings: tuple[Binding, ...]
    # budgets whose pods must go one after another (``sequential_budgets``)
    sequential_budgets: tuple[str, ...] = ()

    @property
    def freed_nodes(self) -> tuple[str, ...]:
        return tuple(sorted({m.from_node for m in self.moves}))

    @property
    def gpu_milli_disrupted(self) -> int:
        return sum(m.gpu_milli for m in self.moves)

    @property
    def cost(self) -> tuple[int, int]:
        return (self.gpu_milli_disrupted, len(self.moves))


@dataclass(frozen=True, slots=True)
class Search:
    """A workload's plan (None: none found within the bounds) and how many simulations
    it took; ``exhausted``: the verification bound was reached before a plan passed."""

    plan: MovePlan | None
    verifications: int
    exhausted: bool


@dataclass(frozen=True, slots=True)
class _Choice:
    node: str
    pods: tuple[Pod, ...]

    @property
    def cost(self) -> tuple[int, int, tuple[str, ...]]:
        return (sum(pod_gpu_milli(p) for p in self.pods), len(self.pods), self.key)

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(p.key for p in self.pods)


class MoveSearch:
    """Plans for the blocked workloads of one state (the scheduler pass's), each alone."""

    def __init__(
        self,
        cluster: Cluster,
        state: ClusterState,
        options: PlacementOptions,
        drain: DrainContext,
    ) -> None:
        self.cluster = cluster
        self.state = state
        self.options = replace(options, preemption=False)
        self.drain = drain

    # --- candidates -------------------------------------------------------------------

    def running(self, node: str) -> list[Pod]:
        """Pods running on the node in the snapshot and still there in the state (not
        pods the scheduler pass bound, not pods it preempted)."""
        return [
            p
            for p in self.state.alloc(node).placed
            if p.node_name == node and self.state.bound_allocation(p.key) is not None
        ]

    def statuses(self, node: str, priority_cap: int | None) -> list[tuple[Pod, DrainStatus]]:
        return [(p, movable(p, self.drain, priority_cap)) for p in self.running(node)]

    def _choices(self, node: str, member: Pod, priority_cap: int | None) -> list[_Choice]:
        """The cheapest sets of movable pods on ``node`` after whose move one ``member``
        could fit by the free counts (GPU milli, CPU, memory, pods): a necessary check
        only, the verification decides."""
        if self._selector_miss(node, member):
            return []
        pods = [p for p, status in self.statuses(node, priority_cap) if status.movable]
        pods.sort(key=lambda p: (pod_gpu_milli(p), p.requests.cpu_milli, p.key))
        pods = pods[:MAX_CHOICES]
        alloc = self.state.alloc(node)
        found = []
        for size in range(1, min(MAX_PODS_PER_NODE, len(pods)) + 1):
            for subset in combinations(pods, size):
                if _room(alloc, subset, member):
                    found.append(_Choice(node, subset))
        found.sort(key=lambda c: c.cost)
        return found[:SETS_PER_NODE]

    def _selector_miss(self, node: str, member: Pod) -> list[tuple[str, str]]:
        labels = self.state.node(node).labels
        return [(k, v) for k, v in member.node_selector.items() if labels.get(k) != v]

    # --- search -----------------------------------------------------------------------

    def unblock(self, workload: Workload) -> Search:
        """The cheapest verified plan found for ``workload`` within the bounds."""
        member = max(workload.pods, key=lambda p: (pod_gpu_milli(p), p.requests.cpu_milli))
        budget = _Budget()
        best: MovePlan | None = None
        for nodes in self._domains(workload):
            choices = [c for n in nodes for c in self._choices(n, member, workload.priority)]
            choices.sort(key=lambda c: c.cost)
            if workload.kind == "pod" or len(workload.pods) == 1:
                plan = self._single(workload, choices, budget)
            else:
                plan = self._greedy(workload, nodes, choices, budget)
            if plan is not None and (best is None or plan.cost < best.cost):
                best = plan
        return Search(best, budget.used, budget.used >= MAX_VERIFICATIONS and best is None)

    def _domains(self, workload: Workload) -> list[list[str]]:
        """Node lists W may bind in: one per domain of its required level, else all."""
        names = list(self.state.node_names())
        level = workload.required_topology
        index = self.cluster.topology.index_of(level) if level else None
        if index is None:
            return [names]
        key = self.cluster.topology.levels[index].key
        groups: dict[str, list[str]] = {}
        for name in names:
            value = self.state.node(name).labels.get(key)
            if value is not None:
                groups.setdefault(value, []).append(name)
        return [groups[v] for v in sorted(groups)]

    def _single(
        self, workload: Workload, choices: list[_Choice], budget: _Budget
    ) -> MovePlan | None:
        for choice in choices:
            if not budget.take():
                return None
            plan = self.verify(workload, choice.pods)
            if plan is not None:
                return plan
        return None

    def _greedy(
        self, workload: Workload, nodes: Sequence[str], choices: list[_Choice], budget: _Budget
    ) -> MovePlan | None:
        """A gang: each node's cheapest set, cheapest first, added until the domain's free
        and freed GPU milli reach the gang's, then verified after each addition."""
        free = sum(self.state.alloc(n).free_gpu_milli for n in nodes)
        moved: list[Pod] = []
        used: set[str] = set()
        for choice in choices:
            if choice.node in used or len(moved) + len(choice.pods) > MAX_PODS:
                continue
            used.add(choice.node)
            moved += choice.pods
            freed = sum(pod_gpu_milli(p) for p in moved)
            if free + freed < workload.floor_gpu_milli:
                continue
            if not budget.take():
                return None
            plan = self.verify(workload, moved)
            if plan is not None:
                return plan
        return None

    # --- verification -------------------------------------------------------------------

    def verify(self, workload: Workload, moved: Sequence[Pod]) -> MovePlan | None:
        """The plan if the simulation agrees: with ``moved`` released, W binds, then each
        moved pod binds again on a node none of them left; None otherwise."""
        edited = self.state.copy()
        for pod in moved:
            allocation = edited.bound_allocation(pod.key)
            assert pod.node_name is not None and allocation is not None
            edited.release(pod.node_name, pod.key, allocation, pod)
        outcome = place_one(self.cluster, workload, edited, self.options, diagnose=False)
        if not outcome.placed:
            return None
        left = {p.node_name for p in moved}
        rest = edited.subset(n for n in edited.node_names() if n not in left)
        replacements = [pod_workload(replacement(p)) for p in moved]
        result = place(self.cluster, replacements, state=rest, options=self.options, diagnose=False)
        if not all(o.placed for o in result.outcomes):
            return None
        landed = {b.pod: b.node for o in result.outcomes for b in o.bindings}
        moves = tuple(
            Move(
                pod=p.key,
                from_node=p.node_name or "",
                to_node=landed[p.key],
                gpu_milli=pod_gpu_milli(p),
                controller=p.controller,
                started=p.started,
            )
            for p in moved
        )
        return MovePlan(
            workload.key, moves, outcome.bindings, sequential_budgets(moved, self.drain)
        )


class _Budget:
    """Verifications left for one workload."""

    def __init__(self) -> None:
        self.used = 0

    def take(self) -> bool:
        if self.used >= MAX_VERIFICATIONS:
            return False
        self.used += 1
        return True


def replacement(pod: Pod) -> Pod:
    """The pod its controller creates once it is evicted: the same spec, pending."""
    return replace(pod, node_name=None, started=None, scheduled=None, terminating=False)


def _room(alloc: NodeAlloc, pods: Sequence[Pod], member: Pod) -> bool:
    """Free plus freed counts reach the member's (GPU milli, CPU, memory)."""
    gpu = alloc.free_gpu_milli + sum(pod_gpu_milli(p) for p in pods)
    cpu = alloc.cpu_free_milli + sum(p.requests.cpu_milli for p in pods)
    memory = alloc.memory_free_bytes + sum(p.requests.memory_bytes for p in pods)
    return (
        gpu >= pod_gpu_milli(member)
        and cpu >= member.requests.cpu_milli
        and memory >= member.requests.memory_bytes
    )
