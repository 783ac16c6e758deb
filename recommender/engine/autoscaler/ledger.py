"""What cluster-autoscaler decided, and what became of it: the naive plan's words.

``PlannedNode``/``NaiveLedger`` record the model's decisions per workload
(``cluster_autoscaler.NaivePlanner``); ``workload_plan``, ``additions`` and
``node_stranded`` turn them, with the real scheduler's answer on the cluster
with those nodes, into the ``plan.ScaleUpPlan`` words both sides share.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from recommender.engine import costs
from recommender.engine.autoscaler.plan import (
    BLOCKED,
    PREEMPTS,
    RUNS_NOW,
    NodeAddition,
    WorkloadPlan,
)
from recommender.engine.scheduler.admission import Hold
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Node, NodeGroup, Pod

SCALE_UP = "scale_up"
# core/utils FilterOutExpendableAndSplit: a pod whose nominatedNodeName names an existing
# node "will be scheduled after low priority pods are preempted": ignored in scale-up
WAITING_FOR_PREEMPTION = (
    "kube-scheduler nominates it for a node after preempting lower-priority pods: "
    "cluster-autoscaler ignores it in scale-up"
)


@dataclass(slots=True)
class PlannedNode:
    """A node cluster-autoscaler asked for (or counts as upcoming)."""

    group: NodeGroup
    node: Node
    trigger: str  # the workload whose pod made it buy this node
    domain: Mapping[str, str]  # the placement labels it landed with
    pods: list[Pod] = field(default_factory=list)  # what the estimate put on it

    # planned nodes of one kind differ only by name (same labels otherwise, same taints)
    kind: tuple[str, tuple[tuple[str, str], ...]] = field(init=False)

    def __post_init__(self) -> None:
        self.kind = (self.group.name, tuple(sorted(self.domain.items())))


@dataclass(slots=True)
class NaiveLedger:
    """What the naive pass decided, per workload."""

    planned: list[PlannedNode] = field(default_factory=list)
    needs_new: dict[str, bool] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    held: dict[str, Hold] = field(default_factory=dict)  # never tried (admission.held)
    preempts: dict[str, tuple[str, ...]] = field(default_factory=dict)  # waiting for preemption
    # said about a workload whatever the verdict (WorkloadPlan.notes)
    notes: dict[str, list[str]] = field(default_factory=dict)


def node_stranded(planned: PlannedNode, state: ClusterState, bound: set[str]) -> tuple[int, float]:
    """(unused GPUs, wasted $/h) of one naive node after the real scheduler ran."""
    node = planned.node
    unused = sum(1 for cell in state.gpu_cells(node.name) if cell.allocated_milli == 0)
    cost = costs.stranded_cost_per_hour(
        planned.group.price_per_node_hour, node.gpu_count, unused, node.name in bound
    )
    return unused, cost


def workload_plan(
    workload: Workload,
    ledger: NaiveLedger,
    schedulable_after: bool,
    stranded: Mapping[str, tuple[int, float]],
) -> WorkloadPlan:
    mine = [p for p in ledger.planned if p.trigger == workload.key]
    add_nodes: dict[str, int] = {}
    for planned in mine:
        add_nodes[planned.group.name] = add_nodes.get(planned.group.name, 0) + 1
    reasons = ledger.reasons.get(workload.key, [])
    hold = ledger.held.get(workload.key)
    if hold is not None:
        return WorkloadPlan(workload.key, hold.verdict, reasons=hold.reasons)
    preempts = ledger.preempts.get(workload.key, ())
    if not ledger.needs_new.get(workload.key):
        verdict = PREEMPTS if preempts else RUNS_NOW
        reasons = [WAITING_FOR_PREEMPTION] if preempts else reasons
    else:
        verdict = BLOCKED if reasons and not mine else SCALE_UP
    return WorkloadPlan(
        workload=workload.key,
        verdict=verdict,
        add_nodes=add_nodes,
        reasons=tuple(reasons),
        schedulable_after=schedulable_after,
        stranded_gpus=sum(stranded[p.node.name][0] for p in mine),
        preempts=preempts,
        notes=tuple(ledger.notes.get(workload.key, ())),
    )


def additions(ledger: NaiveLedger) -> tuple[NodeAddition, ...]:
    """Naive nodes grouped by (group, domain, trigger workload), in purchase order."""
    grouped: dict[tuple[str, str, str], list[PlannedNode]] = {}
    for planned in ledger.planned:
        key = (planned.group.name, repr(sorted(planned.domain.items())), planned.trigger)
        grouped.setdefault(key, []).append(planned)
    additions = []
    for (group_name, _, trigger), nodes in grouped.items():
        group = nodes[0].group
        placement = dict(nodes[0].domain)
        additions.append(
            NodeAddition(
                node_group=group_name,
                count=len(nodes),
                placement=placement,
                node_names=tuple(p.node.name for p in nodes),
                workloads=(trigger,),
                cost_per_hour=costs.nodes_cost_per_hour(len(nodes), group.price_per_node_hour),
            )
        )
    return tuple(additions)
