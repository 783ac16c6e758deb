"""Pods kube-scheduler nominates for a node after preempting: what autoscalers do with them.

kube-scheduler's PostFilter (``preemption``) evicts the victims and sets the pod's
``status.nominatedNodeName``; the pod binds once they are gone. Autoscalers do not
simulate preemption (their simulation runs PreFilter and Filter only) and leave such pods
out of scale-up:

- cluster-autoscaler: ``core/podlistprocessor/filter_out_expendable.go`` (with
  ``core/utils`` ``FilterOutExpendableAndSplit``) splits off the pods whose
  ``nominatedNodeName`` names an existing node, and ``addPreemptingPodsToSnapshot``
  force-adds each onto that node ("not strictly correct as we are not simulating
  preemption itself"): the victims stay in the snapshot, the node is overcommitted.
- Karpenter: ``pkg/utils/pod/scheduling.go`` ``IsProvisionable`` requires
  ``!IsPreempting`` (``nominatedNodeName`` empty): the pod is ignored.

A snapshot is the moment before kube-scheduler's next cycles: the evaluation's scheduler
pass says which workloads it places by preemption, and those are the nominated ones
(``of_outcomes``); a caller without that pass gets it run here (``nominations``).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from recommender.engine.scheduler.placement import (
    PlacementOptions,
    WorkloadOutcome,
    place,
    replay_outcome,
)
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Cluster

# workload key → the scheduler pass's outcome (placed, with the pods it preempts)
Nominated = Mapping[str, WorkloadOutcome]


def of_outcomes(outcomes: Iterable[WorkloadOutcome]) -> dict[str, WorkloadOutcome]:
    """The workloads a scheduler pass placed by preempting running pods."""
    return {o.workload: o for o in outcomes if o.placed and o.preempted}


def nominations(
    cluster: Cluster, pending: Sequence[Workload], state: ClusterState, options: PlacementOptions
) -> dict[str, WorkloadOutcome]:
    """``of_outcomes`` of kube-scheduler's pass over ``pending`` on a copy of ``state``."""
    result = place(cluster, pending, state=state, options=options, diagnose=False)
    return of_outcomes(result.outcomes)


def force_add(state: ClusterState, workload: Workload, outcome: WorkloadOutcome) -> None:
    """``ClusterSnapshot.ForceAddPod`` of each member onto its nominated node: what it
    takes there is taken again, the victims left in place (filters then see the node
    overcommitted)."""
    replay_outcome(state, workload, outcome)
