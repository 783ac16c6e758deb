"""``moves_for(cluster, evaluation)``: the move plans beside the buy plan, priced, with
the kubectl actions that carry them out and the step that undoes them.

For each workload the evaluation leaves blocked or waiting for a scale-up (at most
``MAX_WORKLOADS``, the others said "not searched"), ``search.MoveSearch`` looks for
a verified plan on the state the scheduler pass leaves (the workloads that run now
already bound). Each plan stands alone: two plans may count the same room.

Priced beside the buy plan:

- $/h avoided: what the joint plan would buy for the workload (0 when it buys
  nothing: a blocked workload has no purchase to avoid, but runs now instead of never);
- time to run: no node start-up (the buy plan waits for its groups'
  provisioning delay); the moved pods wait for their own replacement to start;
- disruption: pods restarted, GPUs disrupted, and the GPU-hours of work a Job pod
  loses when it restarts from scratch (since its start; an evicted Job pod also
  counts against the Job's backoffLimit unless a podFailurePolicy ignores
  DisruptionTarget).

The rule: move when it unblocks a workload nothing can be bought for, or when it
avoids a purchase and disrupts fewer GPUs than the workload gets; buy otherwise.

Actions (``actions``): taint each freed node so that nothing but the workload binds
there, let the workload's pending pods tolerate it (adding a toleration is the one
change the API server allows to a pod's spec), evict each moved pod through the
Eviction API (it honours PodDisruptionBudgets; there is no ``kubectl evict``, the
eviction is a POST of a policy/v1 Eviction to the pod's ``eviction`` subresource),
wait for the workload to be scheduled, then remove the taint (the undo, also the step
to run if the plan is abandoned). A bare pod is never evicted: no plan moves one.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from recommender.engine.autoscaler.caflags import CaFlags
from recommender.engine.autoscaler.plan import (
    BLOCKED,
    RUNS_AFTER_SCALE_UP,
    options_for,
    workload_mix,
)
from recommender.engine.autoscaler.template import with_member_capacity
from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.workloads import Workload, pending_workloads
from topology.model.hardware import Cluster
from topology.model.money import DEFAULT_CURRENCY, format_per_hour

from .drainability import DrainContext, DrainSettings, blocked_counts, movable
from .owners import (
    INSTEAD,
    ROLLOUT,
    OwnerStep,
    next_runs_command,
    patch_command,
    rollout_command,
    undo_command,
)
from .reconcile import Reconciliation, Refusal, reconcile
from .scaledown import ScaleDown
from .search import Move, MovePlan, MoveSearch

MAX_WORKLOADS = 20
TAINT_KEY = "capacityweb.io/move-for"
MOVE = "move"
BUY = "buy"


class PlanView(Protocol):
    """What is read of a ``WorkloadPlan``."""

    @property
    def verdict(self) -> str: ...

    @property
    def add_nodes(self) -> Mapping[str, int]: ...

    @property
    def cost_per_hour(self) -> float: ...


class WorkloadView(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def joint(self) -> PlanView: ...


class EvaluationView(Protocol):
    """What ``moves_for`` reads of an ``evaluate.Evaluation`` (it never imports it)."""

    @property
    def at(self) -> datetime: ...

    @property
    def scheduler_profile(self) -> str: ...

    @property
    def workloads(self) -> Sequence[WorkloadView]: ...

    @property
    def autoscaler_flags(self) -> CaFlags | None:
        """The cluster-autoscaler command line it ran with (None: its profile reads none)."""


@dataclass(frozen=True, slots=True)
class Priced:
    """One workload's move plan (or why none) beside its buy plan."""

    workload: str
    gpus: float
    buy_verdict: str
    buy_add_nodes: Mapping[str, int]
    buy_per_hour: float
    buy_startup_seconds: float
    plan: MovePlan | None
    verifications: int
    note: str
    gpu_hours_at_risk: float
    recommend: str

    def to_json(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "workload": self.workload,
            "gpus": _number(self.gpus),
            "buy": {
                "verdict": self.buy_verdict,
                "addNodes": dict(sorted(self.buy_add_nodes.items())),
                "costPerHour": self.buy_per_hour,
                "startupSeconds": self.buy_startup_seconds,
            },
            "move": None
            if plan is None
            else {
                "moves": [_move_json(m) for m in plan.moves],
                "freedNodes": list(plan.freed_nodes),
                "bindings": {b.pod: b.node for b in plan.bindings},
                "podsRestarted": len(plan.moves),
                "gpusDisrupted": _number(plan.gpu_milli_disrupted / 1000),
                "gpuHoursAtRisk": self.gpu_hours_at_risk,
                "avoidedPerHour": self.buy_per_hour,
                "startupSeconds": 0,
                "sequentialBudgets": list(plan.sequential_budgets),
                "actions": move_actions(plan),
                "undo": undo_actions(plan),
            },
            "verifications": self.verifications,
            "note": self.note,
            "recommend": self.recommend,
        }


@dataclass(frozen=True, slots=True)
class MoveReport:
    plans: tuple[Priced, ...]
    reconciliations: tuple[Reconciliation, ...]
    refusals: tuple[Refusal, ...]
    # running pods kept in place, per rule (``drainability.blocked_counts``)
    unmovable: Mapping[str, int]
    not_searched: tuple[str, ...] = ()
    # when the autoscaler removes an emptied node (``scaledown``)
    scale_down: ScaleDown = ScaleDown()

    @property
    def saved_per_hour(self) -> float:
        return round(sum(r.price_per_hour for r in self.reconciliations), 2)

    def to_json(self) -> dict[str, Any]:
        return {
            "plans": [p.to_json() for p in self.plans],
            "notSearched": list(self.not_searched),
            "reconciliations": [_reconciliation_json(r) for r in self.reconciliations],
            "reconciliationRefusals": [_refusal_json(r) for r in self.refusals],
            "reconciliationSavedPerHour": self.saved_per_hour,
            "scaleDown": self.scale_down.note(),
            "scaleDownSettings": self.scale_down.to_json(),
            "unmovablePods": dict(self.unmovable),
        }


def moves_for(
    cluster: Cluster,
    evaluation: EvaluationView,
    settings: DrainSettings = DrainSettings(),  # noqa: B008 (frozen, shared safely)
) -> MoveReport:
    """The move plans for ``evaluation``'s blocked and scale-up workloads, and the
    reservation reconciliations, on the cluster it evaluated."""
    cluster = with_member_capacity(cluster)  # as ``evaluate`` plans it
    at = evaluation.at
    pending = pending_workloads(cluster)
    options = options_for(evaluation.scheduler_profile, at, mix=workload_mix(pending))
    scheduled = place(cluster, pending, options=options, diagnose=False).state
    drain = DrainContext.of(cluster, settings)
    search = MoveSearch(cluster, scheduled, options, drain)
    by_key = {w.key: w for w in pending}
    wanted = sorted(
        (w for w in evaluation.workloads if w.joint.verdict in (BLOCKED, RUNS_AFTER_SCALE_UP)),
        key=lambda w: _search_order(by_key.get(w.key), w.joint.verdict),
    )
    plans = tuple(
        _priced(cluster, by_key[w.key], w.joint, search, at)
        for w in wanted[:MAX_WORKLOADS]
        if w.key in by_key
    )
    found, refused = reconcile(cluster, scheduled, options, drain, at)
    statuses = [movable(p, drain, None) for p in cluster.bound_pods()]
    return MoveReport(
        plans=plans,
        reconciliations=found,
        refusals=refused,
        unmovable=blocked_counts(statuses),
        not_searched=tuple(w.key for w in wanted[MAX_WORKLOADS:]),
        scale_down=ScaleDown.of(evaluation.autoscaler_flags),
    )


def _search_order(workload: Workload | None, verdict: str) -> tuple[bool, bool]:
    """Which workloads the bounded search takes first (``MAX_WORKLOADS``; a stable sort
    keeps the evaluation's order within each): gangs, whose members a pod-by-pod
    autoscaler strands, then the blocked ones, which no scale-up helps."""
    return (workload is None or workload.kind != "gang", verdict != BLOCKED)


def _priced(
    cluster: Cluster, workload: Workload, buy: PlanView, search: MoveSearch, at: datetime
) -> Priced:
    found = search.unblock(workload)
    plan = found.plan
    risk = _gpu_hours_at_risk(plan.moves, at) if plan else 0.0
    if plan is None:
        note = (
            "no verified plan within the search bounds"
            if found.exhausted
            else "no set of movable pods makes room for it"
        )
        recommend = BUY
    else:
        note = ""
        wins = buy.verdict == BLOCKED or plan.gpu_milli_disrupted < workload.floor_gpu_milli
        recommend = MOVE if wins else BUY
    delays = {g.name: g.provisioning_delay_seconds for g in cluster.node_groups}
    return Priced(
        workload=workload.key,
        gpus=workload.gpus,
        buy_verdict=buy.verdict,
        buy_add_nodes=dict(buy.add_nodes),
        buy_per_hour=buy.cost_per_hour,
        buy_startup_seconds=max((delays.get(g, 0.0) for g in buy.add_nodes), default=0.0),
        plan=plan,
        verifications=found.verifications,
        note=note,
        gpu_hours_at_risk=risk,
        recommend=recommend,
    )


def _gpu_hours_at_risk(moves: Sequence[Move], at: datetime) -> float:
    """GPU-hours a Job pod has run (since its start): lost if it restarts from scratch."""
    hours = 0.0
    for move in moves:
        if move.started is None or not (move.controller or "").startswith("Job/"):
            continue
        hours += move.gpu_milli / 1000 * max(0.0, at.timestamp() - move.started) / 3600
    return round(hours, 2)


# --- actions ------------------------------------------------------------------------------


def move_actions(plan: MovePlan) -> list[str]:
    """The commands, in order: taint, tolerate, evict each pod, wait, untaint."""
    value = _taint_value(plan.workload)
    lines = [f"# move instead of buy for {plan.workload}"]
    for node in plan.freed_nodes:
        lines.append(f"kubectl taint nodes {node} {TAINT_KEY}={value}:NoSchedule")
    toleration = {"key": TAINT_KEY, "operator": "Equal", "value": value, "effect": "NoSchedule"}
    patch = json.dumps([{"op": "add", "path": "/spec/tolerations/-", "value": toleration}])
    for pod in sorted(plan.bindings, key=lambda b: b.pod):
        namespace, name = pod.pod.split("/", 1)
        lines.append(f"kubectl patch pod {name} -n {namespace} --type=json -p '{patch}'")
    if plan.sequential_budgets:
        budgets = ", ".join(plan.sequential_budgets)
        lines.append(f"# one eviction at a time: wait for each replacement to be Ready ({budgets})")
    lines += [eviction_action(move.pod) for move in plan.moves]
    for pod in sorted(plan.bindings, key=lambda b: b.pod):
        namespace, name = pod.pod.split("/", 1)
        lines.append(
            f"kubectl wait pod/{name} -n {namespace} --for=condition=PodScheduled --timeout=15m"
        )
    return [*lines, *undo_actions(plan)]


def eviction_action(pod: str) -> str:
    """Evict ``pod`` ("namespace/name") through the Eviction API, which honours its
    PodDisruptionBudgets (a refused eviction answers 429), never a plain delete."""
    namespace, name = pod.split("/", 1)
    eviction = json.dumps(
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
    )
    return (
        f"echo '{eviction}' | kubectl create --raw "
        f"/api/v1/namespaces/{namespace}/pods/{name}/eviction -f -"
    )


def undo_actions(plan: MovePlan) -> list[str]:
    """Remove the taints (once the workload is bound, or to abandon the plan)."""
    return [f"kubectl taint nodes {node} {TAINT_KEY}-" for node in plan.freed_nodes]


def _taint_value(workload: str) -> str:
    """A label value naming the workload (63 characters at most, [A-Za-z0-9._-])."""
    text = "".join(c if c.isalnum() or c in "._-" else "." for c in workload)
    return text[:63].strip("._-") or "workload"


# --- JSON and text --------------------------------------------------------------------------


def _move_json(move: Move) -> dict[str, Any]:
    return {
        "pod": move.pod,
        "from": move.from_node,
        "to": move.to_node,
        "gpus": _number(move.gpu_milli / 1000),
        "controller": move.controller,
    }


def _reconciliation_json(found: Reconciliation) -> dict[str, Any]:
    return {
        "node": found.node,
        "savedPerHour": found.price_per_hour,
        "reservations": list(found.reservations),
        "moves": [_move_json(m) for m in found.moves],
        "rolledOut": [_move_json(m) for m in found.rolled],
        "sequentialBudgets": list(found.sequential_budgets),
        "ownerPatches": [_owner_json(step) for step in found.owners],
        "actions": reconciliation_actions(found),
    }


def reconciliation_actions(found: Reconciliation) -> list[str]:
    """In order: cordon the on-demand node (nothing lands on it again), 1. patch each
    owner's pod template so that its replacements land in the reservation, 2. wait for
    a Deployment's rollout or evict the other pods through the Eviction API, 3. the undo
    (as comments): the owners' patches reverted, then uncordon. Every owner is patched
    (``reconcile`` refuses a node an owner that cannot be keeps)."""
    assert all(step.how != INSTEAD for step in found.owners), found.node
    lines = [f"kubectl cordon {found.node}"]
    lines.append("# 1. send the replacements to their teams' reservations: patch their owners")
    lines += [patch_command(step) for step in found.owners]
    lines.append("# 2. replace the pods")
    for step in found.owners:
        if step.how == ROLLOUT:
            elsewhere = (
                f", also its {step.others} pod(s) on other nodes, verified to fit in the "
                "reservation too"
                if step.others
                else ""
            )
            lines.append(
                f"# {step.owner} rolls out a new ReplicaSet that replaces every pod of it"
                f"{elsewhere} (not evicted: its old ReplicaSet would recreate them as they were)"
            )
            lines.append(rollout_command(step))
        else:
            if step.kind == "StatefulSet" and step.others:
                lines.append(
                    f"# {step.owner}: under RollingUpdate (the default) the patch also "
                    f"replaces its {step.others} pod(s) on other nodes, verified to fit in "
                    "the reservation too (under OnDelete they stay where they are)"
                )
            lines += [eviction_action(pod) for pod in step.pods]
    lines.append("# 3. undo")
    lines += [f"# undo: {undo_command(step)}" for step in found.owners]
    return [*lines, f"# undo: kubectl uncordon {found.node}"]


def _refusal_json(refusal: Refusal) -> dict[str, Any]:
    """A refused node: why, and for a kept Job a CronJob made, the patch of the CronJob
    that sends its next runs to the reservations (``nextRuns``)."""
    runs = [s for s in refusal.owners if s.next_runs]
    return {
        "node": refusal.node,
        "reason": refusal.reason,
        "reservations": list(refusal.reservations) if runs else [],
        "nextRuns": [
            {
                "cronJob": step.next_runs,
                "job": step.owner,
                "pods": list(step.pods),
                "fields": step.fields,
                "patch": next_runs_command(step),
                "undo": next_runs_command(step, undo=True),
            }
            for step in runs
        ],
    }


def _owner_json(step: OwnerStep) -> dict[str, Any]:
    patched = step.how != INSTEAD
    return {
        "owner": step.owner,
        "pods": list(step.pods),
        "how": step.how,
        "fields": step.fields,
        "patch": patch_command(step) if patched else None,
        "undo": undo_command(step) if patched else None,
        "note": step.note,
        "otherPods": step.others,
    }


def render_moves(report: MoveReport, currency: str = DEFAULT_CURRENCY) -> str:
    """The report as text: each workload's plan beside its buy plan, then reconciliation."""
    lines = ["Move instead of buy"]
    if not report.plans:
        lines.append("  no workload blocked or waiting for a scale-up")
    for priced in report.plans:
        lines += _priced_lines(priced, currency)
    lines += [f"  not searched (bound {MAX_WORKLOADS}): {k}" for k in report.not_searched]
    lines.append("Reservation reconciliation")
    for found in report.reconciliations:
        saved = format_per_hour(found.price_per_hour, currency)
        lines.append(
            f"  {found.node}: move {len(found.moves)} pod(s) into "
            f"{', '.join(found.reservations)}, saves {saved} once the node is removed"
        )
        lines += [
            f"    also replaced by the rollout, verified to fit: {m.pod}: {m.from_node} -> "
            f"{m.to_node}"
            for m in found.rolled
        ]
        lines += [f"    {line}" for line in reconciliation_actions(found)]
    for refusal in report.refusals:
        lines.append(f"  {refusal.node}: not offered: {refusal.reason}")
        for step in refusal.owners:
            if step.next_runs:
                lines += [
                    f"    next runs of {step.next_runs} (its {step.owner}): send them to "
                    f"{', '.join(refusal.reservations)}",
                    f"    $ {next_runs_command(step)}",
                    f"    # undo: {next_runs_command(step, undo=True)}",
                ]
    if not report.reconciliations and not report.refusals:
        lines.append("  no on-demand node runs work a reservation of its team could hold")
    lines.append(f"  ({report.scale_down.note()})")
    if report.unmovable:
        kept = ", ".join(f"{rule} {count}" for rule, count in report.unmovable.items())
        lines.append(f"Running pods never moved, by rule: {kept}")
    return "\n".join(lines) + "\n"


def _priced_lines(priced: Priced, currency: str) -> list[str]:
    buy = (
        f"buy {', '.join(f'{n} x{c}' for c, n in _groups(priced.buy_add_nodes))} "
        f"({format_per_hour(priced.buy_per_hour, currency)}, nodes start in "
        f"{priced.buy_startup_seconds:.0f}s)"
        if priced.buy_add_nodes
        else f"buy: nothing ({priced.buy_verdict})"
    )
    lines = [f"  {priced.workload} ({_number(priced.gpus)} GPUs): {buy}"]
    plan = priced.plan
    if plan is None:
        lines.append(f"    move: none ({priced.note}); recommend {priced.recommend}")
        return lines
    lines.append(
        f"    move: {len(plan.moves)} pod(s), {_number(plan.gpu_milli_disrupted / 1000)} GPUs "
        f"disrupted, {priced.gpu_hours_at_risk} GPU-hours at risk, runs now (no node start-up), "
        f"avoids {format_per_hour(priced.buy_per_hour, currency)}; recommend {priced.recommend}"
    )
    lines += [f"      {m.pod}: {m.from_node} -> {m.to_node}" for m in plan.moves]
    lines += [f"      $ {line}" for line in move_actions(plan)]
    return lines


def _groups(add_nodes: Mapping[str, int]) -> list[tuple[int, str]]:
    return [(count, name) for name, count in sorted(add_nodes.items())]


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
