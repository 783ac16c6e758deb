"""One template capacity for both autoscalers: a group's new node holds what its members hold.

cluster-autoscaler builds the next node of a group from a ready live member
(``processors/nodeinfosprovider/mixed_nodeinfos_processor.go`` ``Process``,
sanitized by ``simulator/node_info_utils.go``: ``topology.kube.core.daemons.template_from_member``)
and only falls back to the group's declared template when no member is ready. The
joint plan read the declared template alone, so the two columns could judge two
different nodes: a declared template of whole GPUs refused a 0.47-GPU share
("Insufficient nvidia.com/gpu share") that the member's shared GPUs take, and the
naive column bought the node the joint column called useless.

``with_member_capacity`` gives each project-declared group with a ready member the
member's capacity (allocatable less what a fresh node runs, GPUs, devices, counter
sets) in its template, once, before either plan runs. The declared labels and
taints stay: they say where a new node lands and who may use it, which the joint
plan decides per domain. Discovered groups already carry a member-built template
(``topology.kube.discovery``); a group without a ready member keeps its declared one, as
in cluster-autoscaler. Where the declared capacity differed, the group says so in
its notes (never a silent override).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from recommender.engine.scheduler.demand import advertised_gpus
from topology.kube.core.daemons import template_from_member
from topology.kube.discovery import PROJECT_SOURCE
from topology.model.hardware import Cluster, Node, NodeGroup, Pod

MEMBER_CAPACITY_NOTE = (
    "template capacity taken from ready member {member} (as cluster-autoscaler builds its "
    "template): the declared template's {fields} differ"
)


def live_member(cluster: Cluster, group: NodeGroup) -> Node | None:
    """The first ready, schedulable member whose GPUs are advertised: the node
    cluster-autoscaler copies (``mixed_nodeinfos_processor.go``)."""
    for node in cluster.nodes:
        if (
            node.node_group == group.name
            and node.ready
            and not node.unschedulable
            and not gpus_unready(node, group)
        ):
            return node
    return None


def gpus_unready(node: Node, group: NodeGroup) -> bool:
    """A member of a GPU group that advertises no GPU yet (its device plugin is not up)."""
    return advertised_gpus(group.template) > 0 and advertised_gpus(node) == 0 and not node.devices


def declared_by_project(group: NodeGroup) -> bool:
    """A group whose template the project's NodeGroup may have declared: one it declares
    alone, or a discovered one it overrides (its template may be the NodeGroup's, while
    cluster-autoscaler still builds from the member). A discovered group's own template
    was built from a member already: rebuilt, it is the same, and left as it is."""
    return group.source is None or PROJECT_SOURCE in group.source


def member_template(cluster: Cluster, group: NodeGroup, member: Node) -> Node:
    """The member as cluster-autoscaler turns it into a template."""
    pods: Iterable[Pod] = (p for p in cluster.pods if p.node_name == member.name)
    return template_from_member(group.name, member, pods, cluster.daemon_pods)


def with_member_capacity(cluster: Cluster) -> Cluster:
    """The cluster with each declared group's template holding its ready member's capacity."""
    groups = tuple(_group_with_member_capacity(cluster, g) for g in cluster.node_groups)
    if all(new is old for new, old in zip(groups, cluster.node_groups, strict=True)):
        return cluster
    return replace(cluster, node_groups=groups)


def _group_with_member_capacity(cluster: Cluster, group: NodeGroup) -> NodeGroup:
    if not declared_by_project(group):
        return group
    member = live_member(cluster, group)
    if member is None:
        return group
    built = member_template(cluster, group, member)
    declared = group.template
    differing = [
        name
        for name, mine, theirs in (
            ("allocatable", declared.allocatable, built.allocatable),
            ("GPUs", declared.gpus, built.gpus),
            ("devices", declared.devices, built.devices),
            ("counter sets", declared.counter_sets, built.counter_sets),
        )
        if mine != theirs
    ]
    if not differing:
        return group
    template = replace(
        declared,
        allocatable=built.allocatable,
        gpus=built.gpus,
        devices=built.devices,
        counter_sets=built.counter_sets,
    )
    note = MEMBER_CAPACITY_NOTE.format(member=member.name, fields=", ".join(differing))
    return replace(group, template=template, notes=(*group.notes, note))
