"""Why the naive autoscaler and the joint plan disagree about one workload.

The disagreement is one of belief. The modelled autoscaler believes one of
three things about a pending workload: "it will run" (cluster-autoscaler's
filter-out-schedulable found room on existing or upcoming nodes, so it adds
nothing: ``core/podlistprocessor/filter_out_schedulable.go``), "nodes X will
make it run" (a scale-up), or "nothing can help" (no group's template fits:
``NotTriggerScaleUp``). Whenever that belief differs from what the scheduler
simulation finds, the workload is in disagreement.

The outcome ``never-scales`` is the phantom-capacity case: the autoscaler adds
nothing for the workload (it believes it fits, or rides on nodes bought for
another, or that nothing can help while the joint plan finds a way) and the
scheduler still cannot place it, so it waits for ever. The other classes name
the cause, the mistake a count-based, pod-by-pod autoscaler makes, and are only
raised when it shows (no false alarms when both agree):

- ``reservation``: naive buys while the joint plan reuses an owned reservation
  (idle reserved nodes, or paid capacity not yet started);
- ``topology``: naive buys, the gang still cannot start, and it needs one
  domain of a required level (naive's nodes land where it cannot use them);
- ``partial-gang``: naive buys for some members, the gang still cannot start;
- ``sharing``: the pods take GPU shares or MIG partitions and counting whole
  devices buys a different number of GPUs than the joint plan (over or under);
- ``device-model``: naive's template matched by count, yet the real scheduler
  rejects the pods on it (GPU model, memory, PCIe root of a DRA claim…).

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from recommender.engine.autoscaler.plan import (
    BLOCKED,
    RUNS_AFTER_SCALE_UP,
    USES_RESERVATION,
    WorkloadPlan,
    lone_node_rejection,
    new_node,
)
from recommender.engine.scheduler.admission import WAITING
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import AttributeSelector, Cluster, DeviceClass, Pod
from topology.model.mig import MIG_RESOURCE_PREFIX


def uses_sharing(cluster: Cluster, pod: Pod) -> bool:
    """Fractional shares or MIG-like partitions, whichever way the pod asks for them."""
    if pod.gpu is not None and pod.gpu.is_share:
        return True
    if any(key.startswith(MIG_RESOURCE_PREFIX) for key in pod.requests.extended):
        return True
    classes = {c.name: c for c in cluster.device_classes}
    for claim in pod.claims:
        for request in claim.requests:
            if request.capacity_requests:
                return True
            selectors = (*request.selectors, *_class_selectors(classes, request.device_class))
            if any("profile" in s.name or "mig" in str(s.value).lower() for s in selectors):
                return True
    return False


def _class_selectors(
    classes: Mapping[str, DeviceClass], name: str
) -> tuple[AttributeSelector, ...]:
    device_class = classes.get(name)
    return device_class.selectors if device_class is not None else ()


def added_gpus(cluster: Cluster, plan: WorkloadPlan) -> int:
    per_node = {g.name: g.template.gpu_count for g in cluster.node_groups}
    return sum(count * per_node.get(group, 0) for group, count in plan.add_nodes.items())


def disagreements(
    cluster: Cluster,
    workload: Workload,
    naive: WorkloadPlan,
    joint: WorkloadPlan,
    at: datetime,
    policy: str,
) -> tuple[str, ...]:
    """The disagreement classes of one workload, in the contract's order.

    ``failed``: naive believed its nodes, or the room it counted, would make the
    workload run, and the scheduler still cannot place it afterwards.
    """
    bought = bool(naive.add_nodes)
    believed = bought or naive.verdict not in (BLOCKED, WAITING)
    failed = not naive.schedulable_after and believed
    sharing = any(uses_sharing(cluster, p) for p in workload.pods)
    classes = []
    if never_scales(naive, joint):
        classes.append("never-scales")
    if bought and joint.verdict == USES_RESERVATION:
        classes.append("reservation")
    if failed and workload.required_topology is not None:
        classes.append("topology")
    if failed and workload.kind == "gang" and (naive.reasons or not workload.required_topology):
        classes.append("partial-gang")
    if sharing and _sharing_mismatch(cluster, naive, joint):
        classes.append("sharing")
    if failed and not sharing and _template_rejects(cluster, workload, naive, at, policy):
        classes.append("device-model")
    return tuple(classes)


def never_scales(naive: WorkloadPlan, joint: WorkloadPlan) -> bool:
    """The autoscaler adds nothing for a workload the scheduler cannot place.

    Either naive believes it runs (it fits existing or upcoming nodes by
    cluster-autoscaler's own simulation, or rides on nodes bought for another
    workload), or naive believes nothing can help while the joint plan finds a
    way. When both say nothing can help, they agree: no disagreement.
    """
    if naive.add_nodes or naive.schedulable_after or WAITING in (naive.verdict, joint.verdict):
        return False  # a held workload (gate, quota) is no autoscaler's to scale for
    return naive.verdict != BLOCKED or joint.verdict in (RUNS_AFTER_SCALE_UP, USES_RESERVATION)


def _sharing_mismatch(cluster: Cluster, naive: WorkloadPlan, joint: WorkloadPlan) -> bool:
    if naive.add_nodes and not naive.schedulable_after:
        return True
    if not naive.add_nodes and joint.verdict == RUNS_AFTER_SCALE_UP:
        # naive counted room for it on nodes it already planned; a mismatch only if
        # that room was not real (riding along on those nodes is what joint does too)
        return not naive.schedulable_after
    return bool(naive.add_nodes) and added_gpus(cluster, naive) != added_gpus(cluster, joint)


def _template_rejects(
    cluster: Cluster, workload: Workload, naive: WorkloadPlan, at: datetime, policy: str
) -> bool:
    """Does the real scheduler refuse a pod on an empty node of a group naive bought?"""
    groups = {g.name: g for g in cluster.node_groups}
    for name in naive.add_nodes:
        group = groups.get(name)
        if group is None:
            continue
        probe = new_node(group, group.placements[0].labels if group.placements else {}, name)
        if any(lone_node_rejection(cluster, probe, p, policy, at) for p in workload.pods):
            return True
    return False
