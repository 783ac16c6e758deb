"""Workloads kube-scheduler never tries, or refuses before looking at a node.

Checked before any Filter, in this order (the first that applies is the verdict):

0. pods that are not kube-scheduler's to place (``Pod.not_ours``, see
   ``topology.kube.core.podowner``): another scheduler's (``spec.schedulerName``), or a
   pending pod being deleted. Verdict ``waiting`` with that reason: never "runs
   now", and no autoscaler's scale-up is planned for it;
1. scheduling gates (upstream ``pkg/scheduler/framework/plugins/schedulinggates/
   scheduling_gates.go``, PreEnqueue): a pod with a non-empty
   ``spec.schedulingGates`` never enters the scheduling queue, so it is never
   placed, and cluster-autoscaler never scales up for it (it only acts on pods
   whose PodScheduled condition is Unschedulable; a gated pod's is
   SchedulingGated). Verdict ``waiting``: "waiting: scheduling gate NAME[, NAME]".
   A gang with any gated member waits as a whole (its members are all or none);
2. fields the model does not place by (``Pod.unsupported``): verdict blocked
   "unsupported: …", never a guess;
3. a topology request (Kueue ``podset-required-topology``, or
   ``podset-preferred-topology``) naming a label that is not a level of the
   cluster's Topology: Kueue does not admit the workload (upstream kueue
   ``pkg/scheduler/flavorassigner/tas_flavorassigner.go``: 'Flavor "…" does
   not contain the requested level', for either mode), so it is blocked, not
   placed as if the constraint were absent;
4. PreFilter rejections (``Pod.rejected``, e.g. VolumeBinding's "pod has unbound
   immediate PersistentVolumeClaims"): blocked, in kube-scheduler's words.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from topology.model.hardware import Topology

from .diagnosis import Diagnosis, unsupported_diagnosis
from .workloads import Workload

WAITING = "waiting"
BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class Hold:
    """Why a workload is not even tried: its verdict, reasons and the scheduler's summary."""

    verdict: str  # WAITING | BLOCKED
    reasons: tuple[str, ...]
    diagnosis: Diagnosis


def held(workload: Workload, topology: Topology, total_nodes: int) -> Hold | None:
    """The first rule above that holds the workload back, or None (it goes to Filter)."""
    not_ours = tuple(dict.fromkeys(p.not_ours for p in workload.pods if p.not_ours))
    if not_ours:
        return Hold(WAITING, not_ours, Diagnosis(summary="; ".join(not_ours)))
    gates = tuple(dict.fromkeys(g for p in workload.pods for g in p.scheduling_gates))
    if gates:
        return Hold(WAITING, (gating_reason(gates),), Diagnosis(summary=pre_enqueue_message(gates)))
    unsupported = tuple(dict.fromkeys(r for p in workload.pods for r in p.unsupported))
    if unsupported:
        diagnosis = unsupported_diagnosis(unsupported)
        return Hold(BLOCKED, (diagnosis.summary,), diagnosis)
    level = workload.required_topology or workload.preferred_topology
    if level is not None and topology.index_of(level) is None:
        reason = unknown_level_reason(level, required=workload.required_topology is not None)
        return Hold(BLOCKED, (reason,), Diagnosis(summary=reason, gang_reason=reason))
    rejected = tuple(dict.fromkeys(r for p in workload.pods for r in p.rejected))
    if rejected:
        summary = f"0/{total_nodes} nodes are available: {'; '.join(rejected)}."
        return Hold(BLOCKED, rejected, Diagnosis(summary=summary))
    return None


def gating_reason(gates: tuple[str, ...]) -> str:
    return f"waiting: scheduling gate {', '.join(gates)}"


def pre_enqueue_message(gates: tuple[str, ...]) -> str:
    """What the SchedulingGates plugin's PreEnqueue says (scheduling_gates.go)."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


def unknown_level_reason(level: str, *, required: bool) -> str:
    mode = "required" if required else "preferred"
    return (
        f"{mode} topology {level} is not a level of the cluster's Topology: "
        "Kueue does not admit the workload (flavor does not contain the requested level)"
    )
