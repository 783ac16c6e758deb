"""DaemonSets and the template of a new node: what every new node of a group will
already run, subtracted from its allocatable.

Upstream behaviour followed: kubernetes/autoscaler
``cluster-autoscaler/processors/nodeinfosprovider/mixed_nodeinfos_processor.go`` and
``simulator/node_info_utils.go``: a group's template is a ready, schedulable member (an
unready one only as a last resort) with its hostname replaced, CA's own taints dropped,
and the pods a fresh node would run already placed on it (``podsExpectedOnFreshNode``)
— here: subtracted from its allocatable. Those pods are taken from the DaemonSet
objects whose pods would run on the template (CA's ``--force-daemonsets`` path, and its
path for a group without members); CA's default takes the DaemonSet and static pods
running on the member, the same set whenever every such DaemonSet runs there (the
parse keeps no pod owner to tell them apart; static pods are not counted).

Pure: no Django, no I/O. ``topology.kube`` dispatches DaemonSets (apps) here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from topology.hardware import (
    HOSTNAME_LABEL,
    Node,
    NodeSelectorTerm,
    Resources,
    Toleration,
)
from topology.kubefields import ObjectContext
from topology.kubenodes import (
    pod_tolerations,
    required_node_affinity,
)
from topology.kubepods import pod_spec_requests

# taints cluster-autoscaler puts on nodes itself; dropped from a template (taints.SanitizeTaints)
CA_TAINTS = (
    "ToBeDeletedByClusterAutoscaler",
    "DeletionCandidateOfClusterAutoscaler",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
)


@dataclass(frozen=True, slots=True)
class DaemonPod:
    """What one DaemonSet would run on a new node: its requests and where it goes."""

    name: str
    requests: Resources
    gpu_count: int
    node_selector: Mapping[str, str]
    affinity: tuple[NodeSelectorTerm, ...]
    tolerations: tuple[Toleration, ...]


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


def template_from_member(group: str, member: Node, daemon_pods: Iterable[DaemonPod]) -> Node:
    """What a new node of the group looks like, as cluster-autoscaler builds it: the
    member's labels (hostname replaced), taints without CA's own, allocatable less
    what the DaemonSets that would run on it request."""
    name = f"{group}-template"
    labels = {**member.labels, HOSTNAME_LABEL: name}
    taints = tuple(t for t in member.taints if t.key not in CA_TAINTS)
    base = replace(member, name=name, labels=labels, taints=taints, ready=True)
    base = replace(base, unschedulable=False, node_group=group)
    return replace(base, allocatable=less_daemons(base, daemon_pods))


def less_daemons(node: Node, daemon_pods: Iterable[DaemonPod]) -> Resources:
    cpu, memory, pods = (
        node.allocatable.cpu_milli,
        node.allocatable.memory_bytes,
        node.allocatable.pods,
    )
    extended = dict(node.allocatable.extended)
    for daemon in daemon_pods:
        if not _runs_on(daemon, node):
            continue
        cpu -= daemon.requests.cpu_milli
        memory -= daemon.requests.memory_bytes
        pods -= 1
        for key, value in daemon.requests.extended.items():
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
