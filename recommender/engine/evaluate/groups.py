"""Groups nothing makes all-or-nothing: what kube-scheduler really does with them.

A LeaderWorkerSet group or a training job's pods (``Pod.app_group``) are separate
pods to kube-scheduler when no gang scheduler or Kueue enforces all-or-nothing
(kubernetes ``pkg/scheduler/schedule_one.go`` ``ScheduleOne``: one pod per cycle,
bound as soon as it fits). When some bind and the rest cannot, the bound ones hold
their GPUs while the application cannot start: said on each of the group's
pending workloads, with the count and the GPUs held.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from recommender.engine.scheduler.outcomes import WorkloadOutcome
from recommender.engine.scheduler.workloads import pod_gpu_milli
from topology.model.hardware import WHOLE_GPU_MILLI, Cluster, Pod


def partial_groups(cluster: Cluster, outcomes: Iterable[WorkloadOutcome]) -> dict[str, str]:
    """Workload key → what happens to its group, for groups that bind only in part."""
    placed = {o.workload for o in outcomes if o.placed}
    members: dict[str, list[Pod]] = {}
    for pod in cluster.pods:
        if pod.app_group is not None:
            members.setdefault(pod.app_group, []).append(pod)
    notes: dict[str, str] = {}
    for group, pods in sorted(members.items()):
        binding = [p for p in pods if p.node_name is not None or p.key in placed]
        pending = [p for p in pods if p.node_name is None]
        if not binding or len(binding) == len(pods):
            continue
        held = sum(pod_gpu_milli(p) for p in binding) / WHOLE_GPU_MILLI
        gpus = int(held) if held.is_integer() else held
        note = (
            f"group {group} needs all {len(pods)} pods, but nothing enforces all-or-nothing "
            f"(no gang scheduler, no Kueue): kube-scheduler binds {len(binding)} of them, "
            f"holding {gpus} GPUs idle, while {len(pods) - len(binding)} cannot be placed: "
            "the group cannot start"
        )
        notes.update((p.key, note) for p in pending)
    return notes
