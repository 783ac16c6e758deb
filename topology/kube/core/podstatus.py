"""What the real kube-scheduler said about a pod, and when the snapshot last changed.

kube-scheduler records each failed attempt on the pod (``pkg/scheduler/
schedule_one.go``, ``handleSchedulingFailure`` → ``updatePod``): condition
``PodScheduled`` status ``False``, reason ``Unschedulable`` (or
``SchedulerError``), the FitError message ("0/3 nodes are available: ...") and,
when preemption chose a node, ``status.nominatedNodeName``. Binding sets the
condition to ``True``. The condition's ``lastTransitionTime`` changes only when
its status changes (``pkg/api/v1/pod/util.go``, ``UpdatePodCondition`` keeps the
old time for the same status): for an Unschedulable pod it is when the
scheduler *first* found it unschedulable, and it stays so while every retry
fails.

The reality check (``recommender.engine.evaluate.reality``) compares this with
the simulation. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from topology.kube.fields import ObjectContext
from topology.model.hardware import Node, Pod, PodScheduled

POD_SCHEDULED = "PodScheduled"


def pod_scheduled(ctx: ObjectContext, status: dict[str, Any]) -> PodScheduled | None:
    """The pod's PodScheduled condition (None when the pod has none)."""
    for path, condition in ctx.items(status.get("conditions"), "status.conditions"):
        if condition.get("type") != POD_SCHEDULED:
            continue
        state = ctx.text(condition.get("status"), f"{path}.status")
        if state not in ("True", "False", "Unknown"):
            ctx.fail(f"{path}.status", f"must be True, False or Unknown, got {state!r}")
        since = ctx.timestamp(condition.get("lastTransitionTime"), f"{path}.lastTransitionTime")
        return PodScheduled(
            status=state == "True",
            reason=ctx.text(condition.get("reason"), f"{path}.reason"),
            message=ctx.text(condition.get("message"), f"{path}.message"),
            since=since.timestamp() if since else 0.0,
            nominated_node=ctx.text(status.get("nominatedNodeName"), "status.nominatedNodeName")
            or None,
        )
    return None


def creation_time(ctx: ObjectContext, meta: dict[str, Any]) -> float:
    """``metadata.creationTimestamp`` in epoch seconds, 0 when not given."""
    moment = ctx.timestamp(meta.get("creationTimestamp"), "metadata.creationTimestamp")
    return moment.timestamp() if moment else 0.0


def last_change(nodes: Iterable[Node], pods: Iterable[Pod]) -> float:
    """The latest change to the cluster the snapshot shows, epoch seconds (0: none known):
    a node's creation, a pod's creation, a pod's binding (its PodScheduled=True
    lastTransitionTime). Changes a snapshot cannot show (a pod that finished or was
    deleted and is gone, a label edited) are not in it."""
    latest = 0.0
    for node in nodes:
        latest = max(latest, node.created)
    for pod in pods:
        latest = max(latest, pod.arrival)
        if pod.scheduled is not None and pod.scheduled.status:
            latest = max(latest, pod.scheduled.since)
    return latest
