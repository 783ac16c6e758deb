"""The joint plan's search for the whole pending set (``JointSearch``): branch and
bound over the domain each gang of a required level lands in, the greedy plan as
the incumbent (see ``joint`` for the planner it drives and docs/FIDELITY.md
"Joint plan" for what it searches, its budget and worst case).

The search drives the planner through ``SearchPlanner`` (plan a workload as the
scheduler places it or pinned to a domain; save and restore what planning wrote),
so it needs nothing else of ``joint``.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from recommender.engine import costs
from recommender.engine.autoscaler.plan import BLOCKED, NodeAddition, SearchReport, WorkloadPlan
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload

SEARCH_NODES = 32  # plan_one calls the search may spend past the greedy plan (no clock)
SEARCH_GANGS = 4  # gangs branched at most, first in priority order; later ones stay put


@dataclass(frozen=True, slots=True)
class Ledger:
    """What the planner writes while planning: saved before a branch, restored after."""

    state: ClusterState
    taken_names: frozenset[str]
    added_per_group: dict[str, int]
    added_per_slot: dict[tuple[str, int], int]
    reservation_nodes_used: dict[str, int]
    additions: tuple[NodeAddition, ...]
    provisioned: dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Saved:
    """The greedy plan just before a gang: its ledger, the plans so far, and the
    domain of the required level the scheduler then put the gang in."""

    ledger: Ledger
    plans: dict[str, WorkloadPlan]
    domain: str | None


@dataclass(frozen=True, slots=True)
class Leaf:
    """A whole plan and its rank: (blocked, nodes of unpriced groups, cost per hour,
    blocked flags in priority order, pins)."""

    rank: tuple[int, int, float, tuple[bool, ...], int]
    additions: tuple[NodeAddition, ...]
    outcomes: dict[str, WorkloadPlan]
    pins: Mapping[str, str] = field(default_factory=dict)  # workload → domain pinned to


class SearchPlanner(Protocol):
    """What ``JointSearch`` asks of the planner (``joint.JointPlanner``)."""

    additions: list[NodeAddition]
    node_budget: int

    def ledger(self) -> Ledger: ...

    def restore(self, ledger: Ledger) -> None: ...

    def domains(self, workload: Workload) -> tuple[str, ...]: ...

    def bound_domain(self, workload: Workload) -> str | None: ...

    def plan_one(self, workload: Workload) -> WorkloadPlan: ...

    def plan_pinned(self, workload: Workload, domain: str) -> WorkloadPlan: ...


class JointSearch:
    """Branch and bound over the domains the gangs land in, the greedy plan as incumbent.

    Branched: workloads with a required level that the greedy plan placed and
    that come before its last loser (a workload blocked or bought nodes for):
    a later choice cannot help an earlier loser. At such a gang, first where
    the scheduler puts it, then each other domain of the level (name order),
    pinned. Lone pods and gangs without a level follow the scheduler's own
    choice (not searched). Only the first ``SEARCH_GANGS`` gangs with more than
    one domain are saved (a ledger copy each) and may be branched. Worst case:
    ∏ domains over the branched gangs leaves, each up to ``len(order)``
    plan_one calls; the budget caps it at ``node_budget`` (``SEARCH_NODES``)
    calls past the greedy plan, each costing about one greedy step.
    """

    def __init__(
        self,
        planner: SearchPlanner,
        order: tuple[Workload, ...],
        greedy: Leaf,
        saved: dict[int, Saved],
    ) -> None:
        self.planner = planner
        self.order = order
        self.best = greedy
        self.saved = saved
        self.explored = 0
        # (blocked, unpriced nodes, cost) of subtrees left unexplored
        self.frontier: list[tuple[int, int, float]] = []
        losers = [
            i
            for i, w in enumerate(order)
            if greedy.outcomes[w.key].verdict == BLOCKED or greedy.outcomes[w.key].add_nodes
        ]
        last = losers[-1] if losers and greedy.rank[:3] != (0, 0, 0.0) else 0
        candidates = [
            i
            for i, w in enumerate(order[:last])
            if w.required_topology is not None
            and greedy.outcomes[w.key].verdict not in (BLOCKED, "waiting")
            and len(planner.domains(w)) > 1
        ]
        self.branch = frozenset(i for i in candidates if i in saved)
        self.fixed = len(candidates) - len(self.branch)
        self.budget = planner.node_budget
        self.limit = self.budget

    def run(self) -> None:
        """The greedy plan is the all-natural path; each branched gang's other domains
        are searched from its saved ledger, the deepest gang first (depth-first order)."""
        planner = self.planner
        for index in sorted(self.branch, reverse=True):
            saved, workload = self.saved[index], self.order[index]
            for domain in planner.domains(workload):
                if domain == saved.domain:
                    continue
                if self.exhausted():
                    self.frontier.append(self.partial(saved.plans, saved.ledger.additions))
                    break
                planner.restore(saved.ledger)
                pinned = planner.plan_pinned(workload, domain)
                self.explored += 1
                if pinned.verdict != BLOCKED:
                    self.follow(
                        index, {**saved.plans, workload.key: pinned}, {workload.key: domain}
                    )

    def exhausted(self) -> bool:
        return self.explored >= self.limit

    def partial(
        self, plans: dict[str, WorkloadPlan], additions: Sequence[NodeAddition] | None = None
    ) -> tuple[int, int, float]:
        blocked = sum(p.verdict == BLOCKED for p in plans.values())
        added = self.planner.additions if additions is None else additions
        return blocked, *spend(added)

    def worse(self, plans: dict[str, WorkloadPlan]) -> bool:
        """Blocked workloads, unpriced nodes and money only grow along a branch: cut when
        already worse."""
        return self.partial(plans) > self.best.rank[:3]

    def descend(self, start: int, plans: dict[str, WorkloadPlan], pins: Mapping[str, str]) -> None:
        planner = self.planner
        for index in range(start, len(self.order)):
            workload = self.order[index]
            if self.exhausted():
                self.frontier.append(self.partial(plans))
                return
            if index in self.branch:
                self.branch_at(index, plans, pins)
                return
            plans = {**plans, workload.key: planner.plan_one(workload)}
            self.explored += 1
            if self.worse(plans):
                return
        self.leaf(plans, pins)

    def branch_at(
        self, index: int, plans: dict[str, WorkloadPlan], pins: Mapping[str, str]
    ) -> None:
        planner, workload = self.planner, self.order[index]
        before = planner.ledger()
        natural = planner.plan_one(workload)
        self.explored += 1
        where = planner.bound_domain(workload)
        self.follow(index, {**plans, workload.key: natural}, pins)
        if natural.verdict == BLOCKED:
            return  # every domain was tried for it: a pin cannot make it run
        for domain in planner.domains(workload):
            if domain == where:
                continue
            planner.restore(before)
            if self.exhausted():
                self.frontier.append(self.partial(plans))
                return
            pinned = planner.plan_pinned(workload, domain)
            self.explored += 1
            if pinned.verdict == BLOCKED:
                continue  # blocked where it would run elsewhere: never better
            self.follow(index, {**plans, workload.key: pinned}, {**pins, workload.key: domain})

    def follow(self, index: int, plans: dict[str, WorkloadPlan], pins: Mapping[str, str]) -> None:
        if not self.worse(plans):
            self.descend(index + 1, plans, pins)

    def leaf(self, plans: dict[str, WorkloadPlan], pins: Mapping[str, str]) -> None:
        found = rank(self.order, plans, self.planner.additions, pins)
        if found < self.best.rank:
            self.best = Leaf(found, tuple(self.planner.additions), plans, pins)

    def report(self) -> SearchReport:
        best = self.best.rank[:3]
        bound = min([best, *self.frontier])
        return SearchReport(
            optimal=not self.frontier and not self.fixed,
            explored=self.explored,
            budget=self.budget,
            gangs_searched=len(self.branch),
            gangs_fixed=self.fixed,
            bound_blocked=bound[0],
            bound_cost_per_hour=bound[2],
        )


def rank(
    order: Sequence[Workload],
    plans: dict[str, WorkloadPlan],
    additions: Sequence[NodeAddition],
    pins: Mapping[str, str],
) -> tuple[int, int, float, tuple[bool, ...], int]:
    flags = tuple(plans[w.key].verdict == BLOCKED for w in order)
    return sum(flags), *spend(additions), flags, len(pins)


def spend(additions: Sequence[NodeAddition]) -> tuple[int, float]:
    """(nodes of groups without a known price, $/h of the rest): an unknown price is not
    0/h, so fewer such nodes rank first, then less money."""
    unpriced = sum(a.count for a in additions if not a.price_known)
    return unpriced, costs.round_money(sum(a.cost_per_hour for a in additions))
