"""What an evaluation answers, as frozen dataclasses with their JSON: one
``WorkloadEvaluation`` per pending workload, the recommendations, the group totals,
the idle reservations, and the ``Evaluation`` that holds them (``to_json``: the
``evaluate --format json`` document, schemaVersion 1). ``evaluation`` works them out.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from recommender.engine import costs
from recommender.engine.autoscaler.caflags import CaFlags
from recommender.engine.autoscaler.plan import (
    ScaleUpPlan,
    WorkloadPlan,
)
from recommender.engine.autoscaler.profiles import (
    DEFAULT_PROFILE,
    uses_ca_flags,
)
from recommender.engine.evaluate.heatmap import HeatCell
from recommender.engine.evaluate.reality import ModelGap
from recommender.engine.evaluate.relaxations import Relaxation
from recommender.engine.evaluate.ties import ScoreTie
from recommender.engine.evaluate.whatif import WhatIf
from recommender.engine.scheduler.profiles import SchedulerRelease
from topology.model.hardware import UnsupportedField
from topology.model.money import DEFAULT_CURRENCY

SCHEMA_VERSION = 1
# the deferred parts (``critical_pass`` leaves them out; one function each works one out)
SCORE_TIES, WHAT_IF, RELAXATIONS = "score-ties", "what-if", "relaxations"
FRAGMENTATION, NAIVE_RANGE = "fragmentation", "naive-range"
DEFERRED = (FRAGMENTATION, SCORE_TIES, WHAT_IF, NAIVE_RANGE, RELAXATIONS)
# a workload's reasons end with what the naive side's release does differently
NAIVE_NOTE = "naive autoscaler: "


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
    # what waiting costs: GPU-hours since the pods were created (None: a creation
    # time is unknown), and GPUs that already-running members of the gang hold idle
    waiting_gpu_hours: float | None = None
    idle_member_gpus: float = 0
    # "runs now" here, Unschedulable for the real scheduler since the last change
    model_gap: ModelGap | None = None
    # its verdict would differ with other picks among tied nodes (``ties``)
    score_tie: ScoreTie | None = None
    # what would unblock it, each verified by planning it again (``relaxations``)
    relaxations: tuple[Relaxation, ...] = ()
    # its all-or-nothing group binds only in part, nothing enforcing it (``groups``)
    group_note: str | None = None

    @property
    def reasons(self) -> tuple[str, ...]:
        """The plan's reasons, its group's partial binding, the score tie it rests on,
        the naive side's notes."""
        group = (self.group_note,) if self.group_note is not None else ()
        tie = (self.score_tie.reason(),) if self.score_tie is not None else ()
        naive = (f"{NAIVE_NOTE}{n}" for n in self.naive.notes)
        return (*self.joint.reasons, *group, *tie, *naive)

    def to_json(self) -> dict[str, Any]:
        gpus = self.gpu_milli / 1000
        return {
            "name": self.key,
            "kind": self.kind,
            "pods": self.pods,
            "gpus": int(gpus) if gpus.is_integer() else gpus,
            "verdict": self.joint.verdict,
            "reasons": list(self.reasons),
            "preempts": list(self.joint.preempts),
            "naive": {
                "addNodes": dict(sorted(self.naive.add_nodes.items())),
                "schedulableAfter": self.naive.schedulable_after,
                "strandedGpus": self.naive.stranded_gpus,
            },
            "naiveReasons": naive_reasons(self.naive),
            "joint": {
                "addNodes": dict(sorted(self.joint.add_nodes.items())),
                "reservations": sorted(self.joint.reservations),
            },
            "jointCostPerHour": self.joint.cost_per_hour,
            "disagreements": list(self.disagreements),
            "waitingGpuHours": self.waiting_gpu_hours,
            "idleMemberGpus": _whole_if_integer(self.idle_member_gpus),
            "modelGap": self.model_gap.to_json() if self.model_gap else None,
            "relaxations": [r.to_json() for r in self.relaxations],
        }


def naive_reasons(plan: WorkloadPlan) -> list[str]:
    """Why the naive autoscaler adds nothing (more) for it, each cause once: its reasons
    are per pod ("pod w-3: max size 4 reached ..."), the same for every member."""
    seen: dict[str, None] = {}
    for reason in plan.reasons:
        head, _, rest = reason.partition(": ")
        seen[rest if head.startswith("pod ") and rest else reason] = None
    return list(seen)


def _whole_if_integer(value: float) -> float:
    return int(value) if float(value).is_integer() else value


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
class GroupTotal:
    """All recommendations of one node group together, and the one patch that applies them
    (None for a group an autoscaler grows: the cluster has no capacityweb.io NodeGroup
    to patch; its actions are the autoscaler's own, ``recommender.actions.report``)."""

    node_group: str
    cards: int
    current_size: int
    add_nodes: int
    cost_per_hour: float
    patch: Mapping[str, Any] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "nodeGroup": self.node_group,
            "cards": self.cards,
            "currentSize": self.current_size,
            "addNodes": self.add_nodes,
            "costPerHour": self.cost_per_hour,
            "patch": dict(self.patch) if self.patch is not None else None,
        }


@dataclass(frozen=True, slots=True)
class IdleReservation:
    name: str
    reserved_gpus: int
    idle_gpus: int
    cost_per_hour: float
    # of idle_gpus: paid-but-not-started nodes' GPUs, which have no heatmap cell
    unprovisioned_gpus: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "idleGpus": self.idle_gpus,
            "unprovisionedGpus": self.unprovisioned_gpus,
            "costPerHour": self.cost_per_hour,
        }


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
    group_totals: tuple[GroupTotal, ...] = ()
    # read but not modelled (never a silent match): kinds with counts, and fields
    ignored: Mapping[str, int] = field(default_factory=dict)
    unsupported: tuple[UnsupportedField, ...] = ()
    autoscaler: str = DEFAULT_PROFILE  # the naive side's profile (autoscaler.profiles)
    # the cluster-autoscaler flags it ran with (None: the profile reads none)
    autoscaler_flags: CaFlags | None = CaFlags()
    scheduler_profile: str = "kube-default"
    # the kube-scheduler release it scores as, and where that came from (None: fgd)
    scheduler_release: SchedulerRelease | None = None
    what_if: WhatIf | None = None  # the same scheduler pass under fgd (None: fgd chosen)
    # deferred parts not worked out yet (``DEFERRED``; their fields say nothing then)
    missing: frozenset[str] = frozenset()
    # ISO 4217 code of every amount (the evaluation's input; reasons and the text report
    # are written in it; the JSON's ``currency`` key is the shell's, actions.report)
    currency: str = DEFAULT_CURRENCY

    @property
    def model_gaps(self) -> int:
        return sum(1 for w in self.workloads if w.model_gap is not None)

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
            "autoscalerProfile": self.autoscaler,
            "cluster": {
                "nodes": self.nodes,
                "gpus": self.gpus,
                "gpusAllocated": self.gpus_allocated,
                "gpusIdleReserved": self.gpus_idle_reserved,
            },
            "workloads": [w.to_json() for w in self.workloads],
            "recommendations": [r.to_json() for r in self.recommendations],
            "idleReservations": [r.to_json() for r in self.idle_reservations],
            "nodeGroupTotals": [t.to_json() for t in self.group_totals],
            "cost": {
                "naivePerHour": self.naive_plan.cost_per_hour,
                "jointPerHour": self.joint_per_hour,
                "strandedPerHour": self.naive_plan.stranded_per_hour,
            },
            "jointSearch": self.joint_plan.search.to_json() if self.joint_plan.search else None,
            "naiveRange": self.naive_plan.range_json() if uses_ca_flags(self.autoscaler) else None,
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
            "schedulerProfile": self.scheduler_profile,
            "schedulerRelease": (
                self.scheduler_release.to_json() if self.scheduler_release else None
            ),
            "whatIf": self.what_if.to_json() if self.what_if else None,
            "modelGaps": self.model_gaps,
            "autoscalerFlags": self.autoscaler_flags.to_json() if self.autoscaler_flags else None,
        }


def ignored_kind_json(key: str, count: int) -> dict[str, Any]:
    """``"PersistentVolume (v1)"`` → ``{"kind": "PersistentVolume", "apiVersion": "v1", …}``."""
    kind, _, rest = key.partition(" (")
    return {"kind": kind, "apiVersion": rest.removesuffix(")"), "count": count}
