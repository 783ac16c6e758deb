"""Which pending pods cluster-autoscaler lists as unschedulable, and so scales up for
(``cluster-autoscaler/utils/kubernetes/listers.go``, ``isUnschedulable``).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Pod


def listed_unschedulable(workload: Workload) -> Workload:
    """The workload as cluster-autoscaler lists its pods: every pod whose PodScheduled
    condition is False/Unschedulable, not bound and not being deleted, whatever its
    ``schedulerName`` (``utils/kubernetes/listers.go`` ``isUnschedulable``). Another
    scheduler's pod so marked is scaled up for like any other; one with no such
    condition stays out (kube-scheduler's own pending pods are marked by it)."""
    if not any(_marked_for_another_scheduler(p) for p in workload.pods):
        return workload
    pods = tuple(
        replace(p, not_ours=None) if _marked_for_another_scheduler(p) else p for p in workload.pods
    )
    return replace(workload, pods=pods)


def _marked_for_another_scheduler(pod: Pod) -> bool:
    marked = pod.scheduled is not None and pod.scheduled.unschedulable
    return pod.not_ours is not None and not pod.terminating and marked
