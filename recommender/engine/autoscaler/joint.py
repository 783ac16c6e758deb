"""The joint autoscaler: ours, asking the scheduler first.

Per workload, in priority order (the greedy plan)::

    existing nodes ──► idle owned reservations ──► paid, unprovisioned
    reserved nodes ──► cheapest node-group option in a concrete domain
    ──► several slots at once (``mixed``) ──► blocked, with the reason (``explain``)

Every step is a call to the SAME ``place_one`` as the scheduler simulation;
the state is carried forward so the second gang sees what the first one took.
Options are found by ``options.OptionSearch``, which this planner extends.

The greedy plan commits each workload to where it lands first; that can
block a later one which another domain choice would have let run (two gangs,
one new node: the first must take block b2 so that the second fits in b1
plus the new node). So the plan is then searched for the whole set
(``search.JointSearch``): depth-first branch and bound over the domain of the
required level each gang lands in (where the scheduler puts it, or pinned
to another domain by a nodeSelector), the greedy plan as the incumbent.
A plan is better when it blocks fewer workloads, then buys fewer nodes of
groups without a known price (unknown is not 0/h), then costs less per hour,
then blocks lower-priority ones rather than higher (priority is the
tie-break, not a commitment), then pins fewer gangs. Blocked workloads and
money only grow along a branch, so a branch already worse than the
incumbent is cut. The budget is a count of ``plan_one`` calls (deterministic:
no clock); a search cut by it says so, with the bound left.

Pure: no Django, no I/O, no clock (``at`` is passed in).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import cached_property

from recommender.engine import costs
from recommender.engine.autoscaler.explain import blocked_reasons
from recommender.engine.autoscaler.mixed import mixed_option
from recommender.engine.autoscaler.options import Option, OptionSearch, part_cost, slot_priced
from recommender.engine.autoscaler.plan import (
    BLOCKED,
    JOINT,
    PREEMPTS,
    RUNS_AFTER_SCALE_UP,
    RUNS_NOW,
    USES_RESERVATION,
    NodeAddition,
    ScaleUpPlan,
    WorkloadPlan,
    placement_text,
    workload_mix,
)
from recommender.engine.autoscaler.search import (
    SEARCH_GANGS,
    SEARCH_NODES,
    JointSearch,
    Leaf,
    Ledger,
    Saved,
    rank,
)
from recommender.engine.scheduler.admission import held
from recommender.engine.scheduler.placement import (
    WorkloadOutcome,
    nodes_by_label,
    place_one,
    replay_outcome,
)
from recommender.engine.scheduler.preemption import preempting_reason
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Cluster, Pod, Taint
from topology.model.money import DEFAULT_CURRENCY, format_per_hour

# an option of a group without a price is chosen only when no priced option runs the
# workload (``options.option_rank``); then by least-waste, which the reason says
UNPRICED = "(price unknown; no priced option runs it, so chosen as the least-waste expander would)"


class JointPlanner(OptionSearch):
    """Carries the state, the slots used and the names taken across workloads."""

    last_bound: tuple[str, ...] = ()  # the nodes the last plan_one bound its pods to
    diverged = False  # the state is no longer the scheduler pass's (``following``)
    explain = True  # off while searching: a blocked workload's reasons are found on replay
    node_budget = SEARCH_NODES  # plan_one calls the search may spend past the greedy replay

    def __init__(
        self,
        cluster: Cluster,
        state: ClusterState,
        at: datetime,
        policy: str,
        *,
        currency: str = DEFAULT_CURRENCY,
    ) -> None:
        super().__init__(cluster, state, at, policy)
        self.currency = currency  # the reasons' money ("for $84.00/h": topology.model.money)

    def plan(
        self, pending: Sequence[Workload], scheduled: Sequence[WorkloadOutcome] | None = None
    ) -> ScaleUpPlan:
        """``scheduled``: the scheduler pass's outcomes for the same workloads on the same
        state, if the caller ran it: until the plan first adds or reserves something, the
        state is the one that pass saw, so its outcomes are taken instead of placing
        each workload again (the same decisions: ``following``)."""
        self.mix = workload_mix(pending)
        order = tuple(pending)
        follow = self.following(order, scheduled)
        outcomes: dict[str, WorkloadPlan] = {}
        saved: dict[int, Saved] = {}  # the greedy plan's ledger before each gang a search may move
        for index, workload in enumerate(order):
            movable = len(saved) < SEARCH_GANGS and len(self.domains(workload)) > 1
            before = self.ledger() if movable else None
            known = follow[index] if follow is not None and not self.diverged else None
            outcomes[workload.key] = self.plan_one(workload, known)
            if before is not None:
                saved[index] = Saved(before, dict(outcomes), self.bound_domain(workload))
                del saved[index].plans[workload.key]
        greedy = Leaf(rank(order, outcomes, self.additions, {}), tuple(self.additions), outcomes)
        search = JointSearch(self, order, greedy, saved)
        self.explain = False
        search.run()
        self.explain = True
        best = search.best
        if best.pins:
            best = self.replay(order, best, saved[min(saved)])
        total = costs.round_money(sum(a.cost_per_hour for a in best.additions))
        return ScaleUpPlan(JOINT, best.additions, best.outcomes, total, search=search.report())

    def replay(self, order: tuple[Workload, ...], best: Leaf, start: Saved) -> Leaf:
        """The best plan planned again with its pins, every blocked workload's reasons found
        (the search left them out); the same calls, so the same plan."""
        self.restore(start.ledger)
        plans = dict(start.plans)
        for workload in order[len(start.plans) :]:
            domain = best.pins.get(workload.key)
            plans[workload.key] = (
                self.plan_one(workload) if domain is None else self.plan_pinned(workload, domain)
            )
        return Leaf(best.rank, tuple(self.additions), plans, best.pins)

    def ledger(self) -> Ledger:
        return Ledger(
            self.state.copy(),
            frozenset(self.taken_names),
            dict(self.added_per_group),
            dict(self.added_per_slot),
            dict(self.reservation_nodes_used),
            tuple(self.additions),
            {k: tuple(v) for k, v in self.provisioned.items()},
        )

    def restore(self, ledger: Ledger) -> None:
        self.state = ledger.state.copy()
        self.taken_names = set(ledger.taken_names)
        self.added_per_group = dict(ledger.added_per_group)
        self.added_per_slot = dict(ledger.added_per_slot)
        self.reservation_nodes_used = dict(ledger.reservation_nodes_used)
        self.additions = list(ledger.additions)
        self.provisioned = {k: list(v) for k, v in ledger.provisioned.items()}
        self.candidates_for = None

    def domains(self, workload: Workload) -> tuple[str, ...]:
        """Every domain of the workload's required level: existing nodes' and new nodes'."""
        key = workload.required_topology
        if key is None:
            return ()
        found = set(nodes_by_label(self.cluster, self.state, key))
        for group in self.groups:
            for placement in self.placements(group):
                domain = placement.labels.get(key) or group.template.labels.get(key)
                if domain is not None:
                    found.add(domain)
        return tuple(sorted(found))

    def bound_domain(self, workload: Workload) -> str | None:
        """The domain of the required level the last plan_one put the workload in."""
        key = workload.required_topology
        if key is None or not self.last_bound:
            return None
        return self.state.node(self.last_bound[0]).labels.get(key)

    def plan_pinned(self, workload: Workload, domain: str) -> WorkloadPlan:
        """The workload planned with every pod pinned to ``domain`` by a nodeSelector: the
        change the operator must apply, as the scheduler would otherwise choose itself."""
        key = workload.required_topology
        assert key is not None
        pinned = replace(
            workload,
            pods=tuple(
                replace(p, node_selector={**p.node_selector, key: domain}) for p in workload.pods
            ),
        )
        plan = self.plan_one(pinned)
        if plan.verdict == BLOCKED:
            return plan
        change = f"add nodeSelector {key}={domain}"
        reason = f"placed in {key}={domain} so that the whole pending set runs ({change})"
        return replace(
            plan,
            reasons=(*plan.reasons, reason),
            changes=tuple(sorted({*plan.changes, change})),
        )

    @cached_property
    def bound_pods(self) -> dict[str, Pod]:
        """The snapshot's running pods by key (the victims a followed outcome evicts)."""
        return {p.key: p for p in self.cluster.bound_pods()}

    def following(
        self, order: tuple[Workload, ...], scheduled: Sequence[WorkloadOutcome] | None
    ) -> tuple[WorkloadOutcome, ...] | None:
        """The scheduler pass's outcomes, when they are this plan's first steps: the same
        workloads in the same order, on the same state (no upcoming node added), with the
        same options. Where the profile breaks score ties at random (kube-scheduler's
        ``selectHost``), the pass drew one seeded sequence for all workloads and a
        ``place_one`` draws afresh per workload: following the pass, the plan puts the
        workloads that run now where the scheduler simulation says they run."""
        self.diverged = False
        if scheduled is None or self.upcoming:
            return None
        if tuple(o.workload for o in scheduled) != tuple(w.key for w in order):
            return None
        return tuple(scheduled)

    def plan_one(self, workload: Workload, known: WorkloadOutcome | None = None) -> WorkloadPlan:
        """``known``: the scheduler pass's outcome for it on this very state (``following``)."""
        self.last_bound = ()
        hold = held(workload, self.cluster.topology, len(self.state.node_names()))
        if hold is not None:
            return WorkloadPlan(workload.key, hold.verdict, reasons=hold.reasons)
        if known is None:
            outcome = place_one(
                self.cluster, workload, self.state, self.options({}), diagnose=False
            )
        else:
            outcome = known
            if known.placed or known.preempted:  # a wasted eviction too (scheduler.window)
                bound = self.bound_pods  # victims the pass bound itself are not replayed
                victims = [bound[key] for key in known.preempted if key in bound]
                replay_outcome(self.state, workload, known, victims)
        if outcome.placed and outcome.preempted:
            return preempting_plan(workload, outcome)
        if outcome.placed:
            riding = self.ride_additions(workload, outcome)
            if riding:
                return self.riding_plan(workload, outcome, riding)
            return self.placed_plan(workload, outcome, RUNS_NOW, ())
        if outcome.preempted or outcome.note:
            return unplaced_note_plan(self.plan_unplaced(workload), outcome)
        return self.plan_unplaced(workload)

    def plan_unplaced(self, workload: Workload) -> WorkloadPlan:
        """A workload the scheduler does not place now: reserved room, else a purchase."""
        grants = self.grants(workload.namespace)
        if grants:
            outcome = place_one(
                self.cluster, workload, self.state, self.options(grants), diagnose=False
            )
            if outcome.placed:
                self.diverged = True
                return self.placed_plan(workload, outcome, USES_RESERVATION, ())
        option = self.best_option(workload)
        if option is None:
            reasons = blocked_reasons(self, workload) if self.explain else ()
            return WorkloadPlan(workload.key, BLOCKED, reasons=reasons)
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
                or mixed_option(self, workload)
            )
            if option is None:
                return None
            if (confirmed := self.confirmed(workload, option)) is not None:
                return confirmed
        return None

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
        self.last_bound = tuple(b.node for b in outcome.bindings)
        used = self.used_reservations(outcome)
        coming = self.upcoming_reasons(outcome)
        if coming:
            verdict = RUNS_AFTER_SCALE_UP if verdict == RUNS_NOW else verdict
            reasons = (*coming, *reasons)
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

    def upcoming_reasons(self, outcome: WorkloadOutcome) -> tuple[str, ...]:
        """Why a workload bound to upcoming nodes waits although nothing is bought: the
        node group is already adding those nodes (``options.OptionSearch``: requested but
        not registered, or not yet advertising GPUs)."""
        groups = sorted(
            {self.upcoming[b.node] for b in outcome.bindings if b.node in self.upcoming}
        )
        return tuple(f"runs on the node(s) group {g} is already adding" for g in groups)

    def take(self, workload: Workload, option: Option) -> WorkloadPlan:
        self.diverged = True
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
                    part_cost(slot, count),
                    slot.reservation,
                    slot_priced(slot),
                )
            )
        return self.option_plan(workload, option)

    def option_plan(self, workload: Workload, option: Option) -> WorkloadPlan:
        self.last_bound = tuple(b.node for b in option.outcome.bindings)
        used = self.used_reservations(option.outcome)
        reasons = []
        add_nodes: dict[str, int] = {}
        for slot, count in option.parts:
            where = placement_text(slot.placement.labels)
            add_nodes[slot.group.name] = add_nodes.get(slot.group.name, 0) + count
            if slot.reservation is not None:
                reasons.append(
                    f"provision {count} paid node(s) of reservation {slot.reservation} "
                    f"in group {slot.group.name}{where} (no extra cost)"
                )
            elif not slot_priced(slot):
                reasons.append(f"add {count} node(s) of group {slot.group.name}{where} {UNPRICED}")
            else:
                reasons.append(
                    f"add {count} node(s) of group {slot.group.name}{where} "
                    f"for {format_per_hour(part_cost(slot, count), self.currency)}"
                )
        reasons.extend(self.upcoming_reasons(option.outcome))
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
            cost_per_hour=option.cost_per_hour,
        )


def _tolerated(pod: Pod, taint: Taint) -> bool:
    if taint.effect == "PreferNoSchedule":
        return True
    return any(t.tolerates(taint) for t in pod.tolerations)


def _taint_text(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def unplaced_note_plan(plan: WorkloadPlan, outcome: WorkloadOutcome) -> WorkloadPlan:
    """What the scheduler pass says of a workload it leaves unplaced goes with the plan
    (``scheduler.window``): pods evicted for it in vain, or its own eviction."""
    note = outcome.note
    reasons = (*plan.reasons, note) if note else plan.reasons
    return replace(plan, preempts=outcome.preempted, reasons=reasons)


def preempting_plan(workload: Workload, outcome: WorkloadOutcome) -> WorkloadPlan:
    """kube-scheduler makes room by preemption: nothing to buy (the evicted pods are
    pending afterwards; whether they need nodes is the autoscaler's next loop)."""
    said = outcome.diagnosis.summary if outcome.diagnosis is not None else ""
    return WorkloadPlan(
        workload.key,
        PREEMPTS,
        reasons=(said or preempting_reason(outcome.preempted),),
        schedulable_after=True,
        preempts=outcome.preempted,
    )
