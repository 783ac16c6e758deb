"""The joint evaluation: scheduler, naive autoscaler and joint autoscaler side by side.

::

    cluster ──► state ──┬─► idle reserved GPUs (before anything is planned)
                        ├─► place(pending)          → the scheduler's diagnoses
                        ├─► scale_up(naive)         → what CA would buy, stranded
                        ├─► scale_up(joint)         → verdicts, recommendations
                        ├─► heatmap cells, fragmentation
                        └─► per workload: naive vs joint → disagreement classes

One immutable ``Evaluation``; ``to_json()`` is the published contract
(schemaVersion 1) and is byte-identical for the same input.

Pure: no Django, no I/O, no clock (``at`` is passed in).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from recommender.engine import costs
from recommender.engine.evaluate_classes import disagreements
from recommender.engine.fragmentation import fragmentation
from recommender.engine.heatmap import HeatCell, heatmap_cells
from recommender.engine.placement import place, prepare
from recommender.engine.scaleup import (
    JOINT,
    NAIVE,
    NodeAddition,
    ScaleUpPlan,
    WorkloadPlan,
    options_for,
    scale_up,
    workload_gpu_milli,
    workload_mix,
)
from recommender.engine.state import ClusterState
from recommender.engine.workloads import Workload, pending_workloads
from reservations.idle import idle_reserved_gpus
from topology.hardware import Cluster, UnsupportedField

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class WorkloadEvaluation:
    key: str
    kind: str
    pods: int
    gpu_milli: int
    naive: WorkloadPlan
    joint: WorkloadPlan
    disagreements: tuple[str, ...]
    diagnosis: str
    gang_reason: str | None

    def to_json(self) -> dict[str, Any]:
        gpus = self.gpu_milli / 1000
        return {
            "name": self.key,
            "kind": self.kind,
            "pods": self.pods,
            "gpus": int(gpus) if gpus.is_integer() else gpus,
            "verdict": self.joint.verdict,
            "reasons": list(self.joint.reasons),
            "naive": {
                "addNodes": dict(sorted(self.naive.add_nodes.items())),
                "schedulableAfter": self.naive.schedulable_after,
                "strandedGpus": self.naive.stranded_gpus,
            },
            "joint": {
                "addNodes": dict(sorted(self.joint.add_nodes.items())),
                "reservations": sorted(self.joint.reservations),
            },
            "disagreements": list(self.disagreements),
        }


@dataclass(frozen=True, slots=True)
class Recommendation:
    node_group: str
    count: int
    placement: Mapping[str, str]
    cost_per_hour: float
    workloads: tuple[str, ...]
    reservation: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "nodeGroup": self.node_group,
            "count": self.count,
            "placement": dict(sorted(self.placement.items())),
            "costPerHour": self.cost_per_hour,
            "workloads": list(self.workloads),
        }


@dataclass(frozen=True, slots=True)
class IdleReservation:
    name: str
    reserved_gpus: int
    idle_gpus: int
    cost_per_hour: float

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "idleGpus": self.idle_gpus, "costPerHour": self.cost_per_hour}


@dataclass(frozen=True, slots=True)
class Evaluation:
    cluster_name: str
    at: datetime
    nodes: int
    gpus: int
    gpus_allocated: int
    workloads: tuple[WorkloadEvaluation, ...]
    recommendations: tuple[Recommendation, ...]
    idle_reservations: tuple[IdleReservation, ...]
    naive_plan: ScaleUpPlan
    joint_plan: ScaleUpPlan
    heatmap: tuple[HeatCell, ...]
    fragmentation_nodes: Mapping[str, int]
    fragmentation_domains: Mapping[str, int]
    node_group_sizes: Mapping[str, int]  # current size per group (for the size patch)
    # read but not modelled (never a silent match): kinds with counts, and fields
    ignored: Mapping[str, int] = field(default_factory=dict)
    unsupported: tuple[UnsupportedField, ...] = ()

    @property
    def gpus_idle_reserved(self) -> int:
        return sum(r.idle_gpus for r in self.idle_reservations)

    @property
    def joint_per_hour(self) -> float:
        return costs.round_money(sum(r.cost_per_hour for r in self.recommendations))

    def to_json(self) -> dict[str, Any]:
        """The DESIGN.md contract, plus heatmap, fragmentation and diagnoses."""
        return {
            "schemaVersion": SCHEMA_VERSION,
            "cluster": {
                "nodes": self.nodes,
                "gpus": self.gpus,
                "gpusAllocated": self.gpus_allocated,
                "gpusIdleReserved": self.gpus_idle_reserved,
            },
            "workloads": [w.to_json() for w in self.workloads],
            "recommendations": [r.to_json() for r in self.recommendations],
            "idleReservations": [r.to_json() for r in self.idle_reservations],
            "cost": {
                "naivePerHour": self.naive_plan.cost_per_hour,
                "jointPerHour": self.joint_per_hour,
                "strandedPerHour": self.naive_plan.stranded_per_hour,
            },
            "heatmap": [c.to_json() for c in self.heatmap],
            "fragmentation": {
                "nodes": dict(self.fragmentation_nodes),
                "domains": dict(self.fragmentation_domains),
            },
            "diagnoses": {
                w.key: {"summary": w.diagnosis, "gangReason": w.gang_reason} for w in self.workloads
            },
            "ignored": [ignored_kind_json(key, count) for key, count in self.ignored.items()],
            "unsupported": [u.to_json() for u in self.unsupported],
        }


def ignored_kind_json(key: str, count: int) -> dict[str, Any]:
    """``"PersistentVolume (v1)"`` → ``{"kind": "PersistentVolume", "apiVersion": "v1", …}``."""
    kind, _, rest = key.partition(" (")
    return {"kind": kind, "apiVersion": rest.removesuffix(")"), "count": count}


def evaluate(cluster: Cluster, *, at: datetime, policy: str = "default") -> Evaluation:
    """Everything the dashboard, the API and the CLI show about one snapshot."""
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    options = options_for(policy, at, mix=workload_mix(pending))
    prepare(cluster, pending, state, options)  # every pass below starts from these scores
    scheduler = place(cluster, pending, state=state, options=options)
    diagnoses = {o.workload: o.diagnosis for o in scheduler.outcomes}
    naive = scale_up(cluster, pending, state=state, mode=NAIVE, at=at, policy=policy)
    joint = scale_up(cluster, pending, state=state, mode=JOINT, at=at, policy=policy)
    per_node, per_domain = fragmentation(cluster, state, pending)
    workloads = tuple(
        _workload_evaluation(cluster, w, naive, joint, diagnoses.get(w.key), at, policy)
        for w in sorted(pending, key=_name_order)
    )
    return Evaluation(
        cluster_name=cluster.name,
        at=at,
        nodes=len(cluster.nodes),
        gpus=cluster.gpu_count,
        gpus_allocated=_allocated_gpus(cluster, state),
        workloads=workloads,
        recommendations=recommendations(joint.additions),
        idle_reservations=_idle_reservations(cluster, state, at),
        naive_plan=naive,
        joint_plan=joint,
        heatmap=heatmap_cells(cluster, state),
        fragmentation_nodes=per_node,
        fragmentation_domains=per_domain,
        node_group_sizes={g.name: g.current_size for g in cluster.node_groups},
        ignored=dict(sorted(cluster.ignored.items())),
        unsupported=cluster.unsupported,
    )


def _name_order(workload: Workload) -> tuple[str, str]:
    namespace, _, name = workload.key.partition("/")
    return (namespace, name)


def _workload_evaluation(
    cluster: Cluster,
    workload: Workload,
    naive: ScaleUpPlan,
    joint: ScaleUpPlan,
    diagnosis: Any,
    at: datetime,
    policy: str,
) -> WorkloadEvaluation:
    naive_plan, joint_plan = naive.outcomes[workload.key], joint.outcomes[workload.key]
    return WorkloadEvaluation(
        key=workload.key,
        kind=workload.kind,
        pods=len(workload.pods),
        gpu_milli=workload_gpu_milli(workload),
        naive=naive_plan,
        joint=joint_plan,
        disagreements=disagreements(cluster, workload, naive_plan, joint_plan, at, policy),
        diagnosis=diagnosis.summary if diagnosis is not None else "schedulable now",
        gang_reason=diagnosis.gang_reason if diagnosis is not None else None,
    )


def _allocated_gpus(cluster: Cluster, state: ClusterState) -> int:
    """GPUs any bound pod holds a share or partition of."""
    return sum(
        1 for node in cluster.nodes for cell in state.gpu_cells(node.name) if cell.allocated_milli
    )


def _idle_reservations(
    cluster: Cluster, state: ClusterState, at: datetime
) -> tuple[IdleReservation, ...]:
    prices = {r.name: r.price_per_gpu_hour for r in cluster.reservations}
    return tuple(
        IdleReservation(name, reserved, idle, costs.reserved_gpus_cost_per_hour(idle, prices[name]))
        for name, (reserved, idle) in sorted(idle_reserved_gpus(cluster, state, at).items())
    )


def recommendations(additions: tuple[NodeAddition, ...]) -> tuple[Recommendation, ...]:
    """Joint additions merged per (group, placement, reservation), sorted for stable output."""
    merged: dict[tuple[str, tuple[tuple[str, str], ...], str], list[NodeAddition]] = {}
    for addition in additions:
        key = (
            addition.node_group,
            tuple(sorted(addition.placement.items())),
            addition.reservation or "",
        )
        merged.setdefault(key, []).append(addition)
    result = []
    for (group, placement, reservation), parts in sorted(merged.items()):
        result.append(
            Recommendation(
                node_group=group,
                count=sum(p.count for p in parts),
                placement=dict(placement),
                cost_per_hour=costs.round_money(sum(p.cost_per_hour for p in parts)),
                workloads=tuple(sorted({w for p in parts for w in p.workloads})),
                reservation=reservation or None,
            )
        )
    return tuple(result)
