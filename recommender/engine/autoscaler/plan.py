"""What an autoscaler decides, in the words both modelled autoscalers share.

Verdicts (runs now, runs after preempting, uses a reservation, runs after a
scale-up, blocked), the
plan of one mode (``ScaleUpPlan``: node additions and one ``WorkloadPlan`` per
workload) and the helpers both sides build on: a template node made concrete,
the placement options every pass uses, GPU counts for humans. The naive
(``cluster_autoscaler``) and joint (``joint``) planners import this module;
it imports neither.

Pure: no Django, no I/O, no clock (``at`` is passed in).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from recommender.engine.autoscaler.outcome_range import OtherOutcome, worst_case_per_hour
from recommender.engine.scheduler.placement import PlacementOptions, place_one
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload, pod_workload
from topology.model.hardware import (
    HOSTNAME_LABEL,
    NO_POD_TERMS,
    WHOLE_GPU_MILLI,
    Cluster,
    Node,
    NodeGroup,
    Pod,
)
from topology.model.money import format_per_hour

NAIVE = "naive"
JOINT = "joint"

RUNS_NOW = "runs_now"
# kube-scheduler places it by evicting lower-priority pods (DefaultPreemption): no
# node is bought for it, by either autoscaler (``WorkloadPlan.preempts`` names them)
PREEMPTS = "preempts"
USES_RESERVATION = "uses_reservation"
RUNS_AFTER_SCALE_UP = "runs_after_scale_up"
BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class NodeAddition:
    """New nodes of one group in one placement domain, bought for some workloads.

    ``reservation`` names the reservation whose paid capacity these nodes
    provision (their cost is then already paid: ``cost_per_hour`` 0).
    """

    node_group: str
    count: int
    placement: Mapping[str, str]
    node_names: tuple[str, ...]
    workloads: tuple[str, ...]
    cost_per_hour: float
    reservation: str | None = None
    price_known: bool = True  # False: nodes of a group without a price (0 in the sums)


@dataclass(frozen=True, slots=True)
class WorkloadPlan:
    """One workload's outcome under one mode."""

    workload: str
    verdict: str
    add_nodes: Mapping[str, int] = field(default_factory=dict)
    reservations: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    schedulable_after: bool = False
    stranded_gpus: int = 0
    changes: tuple[str, ...] = ()  # what to apply to the workload (tolerations, selectors)
    preempts: tuple[str, ...] = ()  # the running pods ("ns/pod") evicted to place it
    # what the nodes added for it cost per hour (paid reservation nodes: nothing more)
    cost_per_hour: float = 0.0
    # what the workload's reasons say of the modelled autoscaler's release whatever the
    # verdict (DRA it does not check, devices it never allocates); none by default
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchReport:
    """How far the joint plan's search went, and what it proved.

    ``optimal``: no plan within the searched choices blocks fewer workloads, or
    as few for less money. Otherwise the plan is the best found within
    ``budget`` search nodes, and no plan can beat ``bound_blocked`` workloads
    blocked and ``bound_cost_per_hour`` (the least over the subtrees left).
    """

    optimal: bool
    explored: int
    budget: int
    gangs_searched: int
    gangs_fixed: int  # gangs past the branching cap: kept where the scheduler puts them
    bound_blocked: int
    bound_cost_per_hour: float

    def to_json(self) -> dict[str, object]:
        return {
            "optimal": self.optimal,
            "exploredNodes": self.explored,
            "nodeBudget": self.budget,
            "gangsSearched": self.gangs_searched,
            "gangsFixed": self.gangs_fixed,
            "bound": {"blocked": self.bound_blocked, "costPerHour": self.bound_cost_per_hour},
        }

    def text(self, currency: str) -> str:
        """How the search went; ``currency``: the bound's money (topology.model.money)."""
        if self.optimal:
            return (
                f"optimal ({self.explored} search node(s), {self.gangs_searched} gang(s) searched)"
            )
        return (
            f"best found in {self.explored} search nodes (budget {self.budget}); bound: "
            f"at least {self.bound_blocked} blocked, "
            f"at least {format_per_hour(self.bound_cost_per_hour, currency)}"
        )


@dataclass(frozen=True, slots=True)
class ScaleUpPlan:
    mode: str
    additions: tuple[NodeAddition, ...]
    outcomes: Mapping[str, WorkloadPlan]
    cost_per_hour: float
    stranded_gpus: int = 0
    stranded_per_hour: float = 0.0
    search: SearchReport | None = None  # the joint plan's search; None for the naive plan
    # the naive plan's other outcomes (``outcome_range``: cluster-autoscaler's random
    # choices made the other way); empty for the joint plan and when none differs
    other_outcomes: tuple[OtherOutcome, ...] = ()
    range_skipped: str | None = None  # why the other outcomes were not worked out

    def range_json(self) -> dict[str, object]:
        """The naive plan's range: the other outcomes and the worst case priced."""
        return {
            "otherOutcomes": [o.to_json() for o in self.other_outcomes],
            "worstCasePerHour": worst_case_per_hour(self.cost_per_hour, self.other_outcomes),
            "skipped": self.range_skipped,
        }


def new_node(group: NodeGroup, placement: Mapping[str, str], name: str) -> Node:
    """A template node made concrete: its name, its domain labels, its group and price."""
    labels = {**group.template.labels, **placement, HOSTNAME_LABEL: name}
    return replace(
        group.template,
        name=name,
        labels=labels,
        node_group=group.name,
        price_per_node_hour=group.price_per_node_hour,
    )


def unique_name(base: str, taken: set[str]) -> str:
    """``base`` or ``base-2``, ``base-3``…: never collides with an existing node."""
    name, suffix = base, 1
    while name in taken:
        suffix += 1
        name = f"{base}-{suffix}"
    taken.add(name)
    return name


def options_for(
    policy: str,
    at: datetime,
    grants: Mapping[str, frozenset[str]] | None = None,
    mix: tuple[Pod, ...] = (),
    partitionable_devices: bool = True,
) -> PlacementOptions:
    """``mix``: the pods FGD expects (the evaluation's pending pods), one for every call;
    ``partitionable_devices``: the DRAPartitionableDevices gate of the simulating scheduler."""
    return PlacementOptions(
        policy=policy,
        reservation_grants=dict(grants or {}),
        at=at,
        workload_mix=mix,
        partitionable_devices=partitionable_devices,
    )


def workload_mix(pending: Sequence[Workload]) -> tuple[Pod, ...]:
    """The pending pods, in order: the expected workload every pass scores against."""
    return tuple(p for w in pending for p in w.pods)


def without_topology(pod: Pod) -> Workload:
    """A pod as a lone workload, topology and gang ignored (how a pod-by-pod autoscaler sees it)."""
    return replace(pod_workload(pod), required_topology=None, preferred_topology=None)


def gpus_text(gpu_milli: int) -> str:
    """GPU counts for humans: whole where whole (16), else to a tenth (2.5)."""
    if gpu_milli % WHOLE_GPU_MILLI == 0:
        return str(gpu_milli // WHOLE_GPU_MILLI)
    return f"{gpu_milli / WHOLE_GPU_MILLI:.1f}"


def workload_gpu_milli(workload: Workload) -> int:
    return round(workload.gpus * WHOLE_GPU_MILLI)


def lone_node_rejection(
    cluster: Cluster,
    node: Node,
    pod: Pod,
    policy: str,
    at: datetime,
    partitionable_devices: bool = True,
) -> str | None:
    """Why the real scheduler would refuse ``pod`` on an empty ``node`` (None: it fits).

    This is how a template is judged: not by counts but by the same filters
    that will judge the real node, on a one-node state (of a one-node cluster
    with the same topology and device classes; no reservations, as a new node
    is never a reserved one).
    """
    alone = replace(cluster, nodes=(node,), pods=(), gangs=(), reservations=())
    state = ClusterState.from_cluster(alone)
    # the pods around a node, and the template's domain, are no property of the template:
    # inter-pod terms are judged where the node lands (the probes on the full state)
    pod = replace(pod, pod_terms=NO_POD_TERMS)
    options = options_for(policy, at, partitionable_devices=partitionable_devices)
    outcome = place_one(alone, without_topology(pod), state, options)
    if outcome.placed:
        return None
    return outcome.diagnosis.summary if outcome.diagnosis else "does not fit"


def pod_shape(pod: Pod) -> str:
    """A key equal for pods the scheduler cannot tell apart (names aside)."""
    return repr(
        (
            pod.namespace,
            pod.requests,
            pod.gpu,
            pod.claims,
            sorted(pod.node_selector.items()),
            pod.affinity,
            pod.tolerations,
            pod.host_ports,
        )
    )


def placement_text(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return " in " + ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
