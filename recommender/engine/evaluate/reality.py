"""The reality check: where the simulation says "runs now" but kube-scheduler did not.

A pending pod carries what the real scheduler said (``topology.kube.core.podstatus``):
``PodScheduled=False``, reason ``Unschedulable``, its message, since when. The
condition's time is when the scheduler first found the pod unschedulable and it
stays while every retry fails (``UpdatePodCondition`` keeps it for the same
status), so when it is later than the snapshot's last change
(``podstatus.last_change``: node and pod creations, pod bindings) the scheduler
judged the very cluster we simulate, and judged it unschedulable. If our
simulation places that workload now, the model lacks a rule the scheduler
applied (or a change the snapshot cannot show happened): a *model gap*, shown
with both messages side by side. A condition older than the last change may be
stale (the scheduler may not have retried since), so it is not a gap.

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from recommender.engine.scheduler.workloads import Workload
from topology.kube.core.podstatus import last_change
from topology.model.hardware import Cluster

OURS_RUNS_NOW = "runs now"


@dataclass(frozen=True, slots=True)
class ModelGap:
    pod: str
    scheduler: str  # "Unschedulable: 0/3 nodes are available: ..."
    ours: str
    since: float  # the condition's lastTransitionTime, epoch seconds
    nominated_node: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "scheduler": self.scheduler,
            "ours": self.ours,
            "since": datetime.fromtimestamp(self.since, UTC).isoformat().replace("+00:00", "Z"),
            "nominatedNode": self.nominated_node,
        }


def model_gaps(cluster: Cluster, runs_now: Iterable[Workload]) -> dict[str, ModelGap]:
    """Per workload the simulation runs now: the first of its pods (by name) that the
    real scheduler found Unschedulable after the snapshot's last change."""
    changed = last_change(cluster.nodes, cluster.pods)
    gaps = {}
    for workload in runs_now:
        for pod in sorted(workload.pods, key=lambda p: p.key):
            said = pod.scheduled
            if said is None or not said.unschedulable or said.since <= changed:
                continue
            gaps[workload.key] = ModelGap(
                pod=pod.key,
                scheduler=f"{said.reason}: {said.message}" if said.message else said.reason,
                ours=OURS_RUNS_NOW,
                since=said.since,
                nominated_node=said.nominated_node,
            )
            break
    return gaps
