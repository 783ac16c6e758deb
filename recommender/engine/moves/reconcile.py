"""Reservation reconciliation: on-demand nodes emptied into their teams' idle reservations.

A running pod on an on-demand node (a priced node no active reservation holds) whose
namespace owns an active reservation with idle room can run there instead. Moving
it saves nothing until its node is empty: then the autoscaler removes the node and its
price per hour stops (cluster-autoscaler after ``--scale-down-unneeded-time``, 10
minutes by default, ``core/scaledown``; Karpenter after the NodePool's
``disruption.consolidateAfter``; ``scaledown`` says which, read from what).

So a node is offered only whole: every pod on it, but its DaemonSet and mirror pods
(which go with the node), is movable (``drainability.movable``, no priority cap but
``DrainSettings.max_priority``), belongs to a team owning a reservation, and binds on
that team's reserved nodes in the simulation (the reservation filter keeps any other
team's pods off them). Nodes are tried dearest first, each on the state the ones
before left, so two nodes never count the same idle room.

Each offer carries its pods' owners and the patch of each owner's pod template that
sends the replacements to the reservations they landed in (``owners.owner_steps``):
an evicted pod comes back from its owner's template, which otherwise lets it land on
any on-demand node again. A node is freed only if every pod that has to leave it is
actually moved: one owner that cannot be patched (a Job, whose started template is
immutable and whose pod loses its work when moved; a ReplicaSet not read; a template
with its own required node affinity) keeps its pod there, so the node is refused,
"kept by Job <ns>/<name>'s pod <ns>/<pod>", its price not counted and the reserved room
its pods would have taken left to the next nodes.

A Deployment's patch rolls out a new ReplicaSet that replaces every pod of it
(``pkg/controller/deployment/rolling.go`` ``rolloutRolling``), and a StatefulSet's,
under RollingUpdate (the default), every pod of it too
(``pkg/controller/statefulset/stateful_set_control.go`` ``updateStatefulSet``): all
of them come back from the patched template, which sends them to the reservations.
So their pods on other nodes (``rolled``) are verified with the node's: each binds
in the reservations too, else the node is refused, saying so.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from recommender.engine.scheduler.filters import reserved_nodes_at
from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pod_gpu_milli, pod_workload
from topology.model.hardware import Cluster, Pod

from .drainability import DrainContext, DrainStatus, movable, sequential_budgets
from .owners import INSTEAD, OwnerStep, owner_steps
from .search import Move, replacement

SKIPPED_RULES = ("daemonset", "mirror")  # they go with the node: not in the way


@dataclass(frozen=True, slots=True)
class Reconciliation:
    """An on-demand node emptied into reservations: its pods' moves and the price saved."""

    node: str
    price_per_hour: float
    moves: tuple[Move, ...]
    reservations: tuple[str, ...]
    sequential_budgets: tuple[str, ...] = ()
    # the moved pods' owners and the patch of each that sends them to the reservations,
    # shown before the evictions (``owners``)
    owners: tuple[OwnerStep, ...] = ()
    # the pods on other nodes a Deployment's (a StatefulSet's) rollout replaces too,
    # verified to bind in the reservations with the node's
    rolled: tuple[Move, ...] = ()


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an on-demand node running its teams' work is not offered."""

    node: str
    reason: str
    # when its pods fit but an owner keeps one in place: every owner's step, the kept
    # ones (``INSTEAD``) saying what to do for their next runs, and the reservations
    # the steps' fields select
    owners: tuple[OwnerStep, ...] = ()
    reservations: tuple[str, ...] = ()


def reconcile(
    cluster: Cluster,
    state: ClusterState,
    options: PlacementOptions,
    drain: DrainContext,
    at: datetime,
) -> tuple[tuple[Reconciliation, ...], tuple[Refusal, ...]]:
    """The on-demand nodes that can be emptied into reservations, dearest first, and
    why the others running a reservation owner's pods cannot."""
    reserved = reserved_nodes_at(cluster, at)
    owners = frozenset().union(*reserved.values()) if reserved else frozenset()
    options = replace(options, preemption=False)
    work = state.copy()
    found: list[Reconciliation] = []
    refused: list[Refusal] = []
    on_demand = [n for n in cluster.nodes if n.name not in reserved and n.price_per_node_hour]
    on_demand.sort(key=lambda n: (-(n.price_per_node_hour or 0.0), n.name))
    targets = [n for n in work.node_names() if n in reserved]
    for node in on_demand:
        pods = [
            p
            for p in work.alloc(node.name).placed
            if p.node_name == node.name and work.bound_allocation(p.key) is not None
        ]
        statuses = [(p, movable(p, drain, None)) for p in pods]
        pods = [p for p, s in statuses if s.rule not in SKIPPED_RULES]
        if not pods or not any(p.namespace in owners for p in pods):
            continue  # empty already, or no reservation owner's work on it
        reason = _refusal(pods, statuses, owners)
        if reason is None:
            riders = _rolled_with(work, pods)
            result = _verified(cluster, work, [*pods, *riders], targets, options)
            if result is None:
                reason = _unfit(cluster, work, pods, riders, targets, options)
            else:
                edited, moved = result
                moves = tuple(m for m in moved if m.from_node == node.name)
                rolled = tuple(m for m in moved if m.from_node != node.name)
                names = _reservation_names(cluster, moved, at)
                held = [r for r in cluster.reservations if r.name in names]
                steps = owner_steps(cluster, pods, held)
                kept = [s for s in steps if s.how == INSTEAD]
                if kept:  # the node stays: its room in the reservations is not taken
                    refused.append(Refusal(node.name, _kept_by(kept), steps, names))
                    continue
                work = edited
                price = node.price_per_node_hour or 0.0
                budgets = sequential_budgets(pods, drain)
                found.append(Reconciliation(node.name, price, moves, names, budgets, steps, rolled))
                continue
        refused.append(Refusal(node.name, reason))
    return tuple(found), tuple(refused)


def _kept_by(kept: list[OwnerStep]) -> str:
    """Why the node is not freed: each owner that keeps its pods on it."""
    return "; ".join(
        f"kept by {step.kind} {step.namespace}/{step.name}'s pod{'s' * (len(step.pods) > 1)} "
        f"{', '.join(step.pods)}: {step.kept}"
        for step in kept
    )


def _refusal(
    pods: list[Pod], statuses: list[tuple[Pod, DrainStatus]], owners: frozenset[str]
) -> str | None:
    """Why the node's pods cannot all move: a team without a reservation, a pod the
    drain rules keep in place; None when nothing says no before the simulation."""
    for pod in pods:
        if pod.namespace not in owners:
            return f"{pod.key}: its team ({pod.namespace}) has no reservation"
    kept = {p.key for p in pods}
    for pod, status in statuses:
        if pod.key in kept and not status.movable:
            return f"{pod.key}: {status.reason}"
    return None


def _template_owner(pod: Pod) -> str | None:
    return pod.template_owner or pod.controller


def _rolls(owner: str | None) -> bool:
    """A patch of its template replaces all its pods (see the module docstring)."""
    return owner is not None and owner.startswith(("Deployment/", "StatefulSet/"))


def _rolled_with(state: ClusterState, pods: list[Pod]) -> list[Pod]:
    """The pods, on other nodes where the snapshot bound them (not moved by an offer
    before), of the owners among ``pods``' whose patch rolls all their pods."""
    owners = {o for o in map(_template_owner, pods) if _rolls(o)}
    if not owners:
        return []
    keys = {p.key for p in pods}
    riders = [
        p
        for name in state.node_names()
        for p in state.alloc(name).placed
        if p.node_name == name
        and p.key not in keys
        and not p.terminating
        and _template_owner(p) in owners
        and state.bound_allocation(p.key) is not None
    ]
    return sorted(riders, key=lambda p: p.key)


def _unfit(
    cluster: Cluster,
    state: ClusterState,
    pods: list[Pod],
    riders: list[Pod],
    targets: list[str],
    options: PlacementOptions,
) -> str:
    """Why the verification failed: the node's pods, or the rollouts' other pods."""
    if riders and _verified(cluster, state, pods, targets, options) is not None:
        owners = sorted({_template_owner(p) or "" for p in riders})
        return (
            f"the rollout of {', '.join(owners)} replaces its {len(riders)} pod(s) on other "
            "nodes too (from the patched template), and they do not all fit with this "
            "node's in their teams' idle reserved room"
        )
    return "its pods do not all fit in their teams' idle reserved room"


def _verified(
    cluster: Cluster,
    state: ClusterState,
    pods: list[Pod],
    targets: list[str],
    options: PlacementOptions,
) -> tuple[ClusterState, tuple[Move, ...]] | None:
    """The state with ``pods`` (bound where the snapshot put them) bound on reserved
    nodes instead, and their moves; None when one of them binds nowhere there."""
    edited = state.copy()
    for pod in pods:
        allocation = edited.bound_allocation(pod.key)
        assert allocation is not None and pod.node_name is not None
        edited.release(pod.node_name, pod.key, allocation, pod)
    workloads = [pod_workload(replacement(p)) for p in pods]
    result = place(cluster, workloads, state=edited.subset(targets), options=options)
    if not all(o.placed for o in result.outcomes):
        return None
    landed = {b.pod: b for o in result.outcomes for b in o.bindings}
    by_key = {p.key: p for w in workloads for p in w.pods}
    for key, binding in landed.items():
        assert binding.allocation is not None
        edited.apply(binding.node, key, binding.allocation, by_key[key])
    moves = tuple(
        Move(
            p.key, p.node_name or "", landed[p.key].node, pod_gpu_milli(p), p.controller, p.started
        )
        for p in pods
    )
    return edited, moves


def _reservation_names(cluster: Cluster, moves: tuple[Move, ...], at: datetime) -> tuple[str, ...]:
    """The active reservations holding the nodes the pods land on, owned by their teams."""
    names: set[str] = set()
    for move in moves:
        namespace = move.pod.split("/", 1)[0]
        node = next(n for n in cluster.nodes if n.name == move.to_node)
        for reservation in cluster.reservations:
            holds = reservation.holds(node.name, node.labels)
            if holds and reservation.active_at(at) and reservation.may_use(namespace):
                names.add(reservation.name)
    return tuple(sorted(names))
