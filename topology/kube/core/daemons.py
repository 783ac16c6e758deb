"""DaemonSets, static pods and the template of a new node: what every new node of a
group will already run, subtracted from its allocatable.

Upstream behaviour followed: kubernetes/autoscaler
``cluster-autoscaler/simulator/node_info_utils.go``. From a live member
(``processors/nodeinfosprovider/mixed_nodeinfos_processor.go`` ``Process``: a ready,
schedulable member, an unready one only as a last resort),
``SanitizedTemplateNodeInfoFromNodeInfo`` replaces the hostname, drops CA's own taints
and keeps the pods a fresh node would run (``podsExpectedOnFreshNode``): the member's
DaemonSet pods (controller of kind DaemonSet, or the
``cluster-autoscaler.kubernetes.io/daemonset-pod: "true"`` annotation) and mirror pods
of static pods, none being deleted. Without a member,
``SanitizedTemplateNodeInfoFromNodeGroup`` takes the cloud provider's template plus
``daemonset.GetDaemonSetPodsForNode`` for every DaemonSet that would run there. Here those
pods are subtracted from the template's allocatable (``expected_on_fresh_node``), one
definition for every group: discovered, Karpenter, and capacityweb.io NodeGroups.

Beyond CA's default (``--force-ds=false``), a DaemonSet that would run on the member but
has no pod there is counted as well (CA's ``--force-ds`` path): a snapshot may carry the
DaemonSet without its pods; in a settled cluster every such DaemonSet has its pod on the
member and the two agree. Not held on the template: a DaemonSet pod's GPUs, DRA claims and
host ports (its cpu, memory, pod slot and other extended resources are).

Pure: no Django, no I/O. ``topology.kube.parse`` dispatches DaemonSets (apps) here; pods are
marked by ``topology.kube.core.pods`` (``Pod.node_daemon``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from topology.kube.core.nodes import (
    pod_tolerations,
    required_node_affinity,
)
from topology.kube.core.pods import pod_spec_requests
from topology.kube.fields import ObjectContext
from topology.model.hardware import (
    HOSTNAME_LABEL,
    DaemonPod,
    Node,
    Pod,
    Resources,
)

# taints cluster-autoscaler puts on nodes itself; dropped from a template (taints.SanitizeTaints)
CA_TAINTS = (
    "ToBeDeletedByClusterAutoscaler",
    "DeletionCandidateOfClusterAutoscaler",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
)


def daemon_set(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """A DaemonSet's pod template: what every new node it selects will run."""
    spec = ctx.mapping(obj.get("spec"), "spec")
    template = ctx.mapping(spec.get("template"), "spec.template")
    pod_spec = ctx.mapping(template.get("spec"), "spec.template.spec")
    requests, gpu = pod_spec_requests(ctx, pod_spec)
    affinity, _unsupported = required_node_affinity(ctx, pod_spec.get("affinity"))
    collected.discovered.daemon_pods.append(
        DaemonPod(
            name=ctx.object,
            requests=requests,
            gpu_count=gpu.count if gpu else 0,
            node_selector=ctx.labels(
                pod_spec.get("nodeSelector"), "spec.template.spec.nodeSelector"
            ),
            affinity=affinity,
            tolerations=pod_tolerations(ctx, pod_spec.get("tolerations")),
        )
    )


def template_from_member(
    group: str, member: Node, member_pods: Iterable[Pod], daemon_pods: Iterable[DaemonPod]
) -> Node:
    """What a new node of the group looks like, as cluster-autoscaler builds it from a
    member: its labels (hostname replaced), taints without CA's own, allocatable less
    what a fresh node runs (``expected_on_fresh_node``; ``member_pods``: the pods bound
    to the member)."""
    name = f"{group}-template"
    labels = {**member.labels, HOSTNAME_LABEL: name}
    taints = tuple(t for t in member.taints if t.key not in CA_TAINTS)
    base = replace(member, name=name, labels=labels, taints=taints, ready=True)
    base = replace(base, unschedulable=False, node_group=group)
    expected = expected_on_fresh_node(base, member_pods, daemon_pods)
    return replace(base, allocatable=_less(base.allocatable, expected))


def less_daemons(node: Node, daemon_pods: Iterable[DaemonPod]) -> Resources:
    """A template with no member behind it (a declared or a cloud template): its
    allocatable less the DaemonSets that would run on it (``GetDaemonSetPodsForNode``)."""
    return _less(node.allocatable, expected_on_fresh_node(node, (), daemon_pods))


def expected_on_fresh_node(
    node: Node, member_pods: Iterable[Pod], daemon_pods: Iterable[DaemonPod]
) -> list[Resources]:
    """The requests of the pods a fresh node like ``node`` runs
    (``node_info_utils.go`` ``podsExpectedOnFreshNode``): the member's DaemonSet and
    mirror pods, then each DaemonSet with no pod there that would run on ``node``."""
    found = [p for p in member_pods if p.node_daemon]
    running = {p.node_daemon for p in found}
    return [p.requests for p in found] + [
        d.requests for d in daemon_pods if d.name not in running and _runs_on(d, node)
    ]


def _less(allocatable: Resources, taken: Iterable[Resources]) -> Resources:
    cpu, memory, pods = allocatable.cpu_milli, allocatable.memory_bytes, allocatable.pods
    extended = dict(allocatable.extended)
    for requests in taken:
        cpu -= requests.cpu_milli
        memory -= requests.memory_bytes
        pods -= 1
        for key, value in requests.extended.items():
            extended[key] = extended.get(key, 0) - value
    return Resources(
        cpu_milli=max(cpu, 0),
        memory_bytes=max(memory, 0),
        pods=max(pods, 0),
        extended={k: max(v, 0) for k, v in extended.items()},
    )


def _runs_on(daemon: DaemonPod, node: Node) -> bool:
    """The DaemonSet controller's test: node selector, required affinity, and every
    NoSchedule/NoExecute taint tolerated (DaemonSets tolerate unschedulable themselves)."""
    if any(node.labels.get(k) != v for k, v in daemon.node_selector.items()):
        return False
    if daemon.affinity and not any(t.matches(node.labels) for t in daemon.affinity):
        return False
    return all(
        any(t.tolerates(taint) for t in daemon.tolerations)
        for taint in node.taints
        if taint.effect in ("NoSchedule", "NoExecute")
    )
