"""What cluster-autoscaler sees of its node groups: templates, upcoming nodes, limits.

``GroupView`` is the part of ``cluster_autoscaler.NaivePlanner`` that answers
"what would the next node of this group look like, where would it land, how
many more may there be":

- the template: a ready live member of the group, sanitized (hostname
  replaced, cluster-autoscaler's own taints dropped) and less what a fresh node
  runs, its DaemonSet and mirror pods (``topology.kube.core.daemons.template_from_member``;
  for a discovered group, the template discovery built that way), else the
  group's own template, which carries the DaemonSets that would run on it
  (``processors/nodeinfosprovider/mixed_nodeinfos_processor.go`` ``Process``),
  without DRA devices for an
  empty group whose provider does not template them (``docs/dra_support.md``);
- the domain: the group's first placement with a free slot (the autoscaler
  cannot choose where the cloud puts a node);
- upcoming nodes (``clusterstate/clusterstate.go`` ``GetUpcomingNodes``,
  ``processors/customresources/gpu_processor.go``);
- room: max size, ``--max-nodes-total`` and the cluster-wide resource limits
  (``core/scaleup/resource/manager.go``).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.ledger import PlannedNode
from recommender.engine.autoscaler.plan import new_node, unique_name
from recommender.engine.autoscaler.template import (
    declared_by_project,
    gpus_unready,
    live_member,
    member_template,
)
from recommender.engine.scheduler.state import ClusterState
from topology.model.hardware import GPU_RESOURCE, HOSTNAME_LABEL, Cluster, Node, NodeGroup


class GroupView:
    """Templates, domains, upcoming nodes and room of the node groups (see the module)."""

    cluster: Cluster
    state: ClusterState
    settings: CaSettings
    groups: tuple[NodeGroup, ...]
    taken: set[str]
    added: dict[str, int]
    added_per_slot: dict[tuple[str, int], int]
    templates: dict[tuple[object, ...], Node]
    member_templates: dict[str, Node]  # per group only the project declares: from its member
    _usage: tuple[int, dict[str, int]] | None

    def room(self, group: NodeGroup) -> int:
        """How many more nodes the group may get: max size, then --max-nodes-total
        (``orchestrator.go`` ``GetCappedNewNodeCount``), then the cluster-wide resource
        limits (``core/scaleup/resource/manager.go`` ``ResourcesLeft``, ``ApplyLimits``:
        --cores-total, --memory-total, --gpu-total per GPU type)."""
        room = group.max_size - group.current_size - self.added.get(group.name, 0)
        if self.settings.max_nodes_total > 0:
            room = min(room, self.settings.max_nodes_total - len(self.taken))
        return min(room, self._resources_left(self.template(group)))

    def _resources_left(self, template: Node) -> int:
        """Nodes like ``template`` the cluster-wide limits still allow."""
        settings = self.settings
        room = len(self.taken) + 10**9
        limits = (settings.max_cores_total, settings.max_memory_total_bytes)
        if not any(limits) and not settings.max_gpus_total:
            return room
        used = self._used()
        per_node = _limited(template, settings.gpu_label)
        for key, limit in (
            ("cpu", settings.max_cores_total * 1000 if settings.max_cores_total else 0),
            ("memory", settings.max_memory_total_bytes),
            *((f"gpu:{model}", count) for model, count in settings.max_gpus_total.items()),
        ):
            if limit and per_node.get(key, 0) > 0:
                room = min(room, (limit - used.get(key, 0)) // per_node[key])
        return room

    def _full(self, group: NodeGroup) -> str:
        if group.current_size + self.added.get(group.name, 0) >= group.max_size:
            return f"max size {group.max_size} reached for node group {group.name}"
        if self.settings.max_nodes_total and len(self.taken) >= self.settings.max_nodes_total:
            return f"--max-nodes-total {self.settings.max_nodes_total} reached"
        return f"a cluster-wide resource limit leaves no room for a node of group {group.name}"

    def _used(self) -> dict[str, int]:
        """What the nodes counted against the limits hold (existing, upcoming, bought)."""
        if self._usage is None or self._usage[0] != len(self.taken):
            totals: dict[str, int] = {}
            for name in self.state.node_names():
                for key, amount in _limited(self.state.node(name), self.settings.gpu_label).items():
                    totals[key] = totals.get(key, 0) + amount
            self._usage = (len(self.taken), totals)
        return self._usage[1]

    def first_domain(self, group: NodeGroup) -> Mapping[str, str]:
        """Where the cloud puts the next node: the first placement with a free slot."""
        for index, placement in enumerate(group.placements):
            if self.added_per_slot.get((group.name, index), 0) < placement.max_new_nodes:
                return placement.labels
        return {}

    def count_slot(self, group: NodeGroup, labels: Mapping[str, str]) -> None:
        for index, placement in enumerate(group.placements):
            if placement.labels == labels:
                slot = (group.name, index)
                self.added_per_slot[slot] = self.added_per_slot.get(slot, 0) + 1
                return

    def template(self, group: NodeGroup) -> Node:
        """The group's next node as cluster-autoscaler sees it, kept per domain.

        ``processors/nodeinfosprovider/mixed_nodeinfos_processor.go``
        ``Process``: a ready, schedulable live member of the group, sanitized
        (``simulator/node_info_utils.go`` ``SanitizedTemplateNodeInfoFromNodeInfo``:
        new name, hostname label replaced, CA's taints dropped, the member's DaemonSet
        and mirror pods kept: ``topology.kube.core.daemons.template_from_member``); else the
        group's template (``SanitizedTemplateNodeInfoFromNodeGroup``: the snapshot's
        DaemonSets that would run on it already taken off at assembly). A discovered
        group's template was built from a member by discovery the same way.
        """
        domain = self.first_domain(group)
        key = (group.name, tuple(sorted(domain.items())))
        found = self.templates.get(key)
        if found is None:
            found = self.templates[key] = self.make_node(group, domain, f"{group.name}-template")
        return found

    def _no_dra_from_zero(self, group: NodeGroup) -> bool:
        return not group.dra_scale_from_zero and self.live_member(group) is None

    def live_member(self, group: NodeGroup) -> Node | None:
        return live_member(self.cluster, group)

    def make_node(self, group: NodeGroup, domain: Mapping[str, str], name: str) -> Node:
        member = self.live_member(group)
        if member is None:
            node = new_node(group, domain, name)
            if group.dra_scale_from_zero:
                return node
            # docs/dra_support.md: without the provider's support, the template of an
            # empty group (NodeGroup.TemplateNodeInfo) has no ResourceSlices
            devices = tuple(d for d in node.devices if d.driver == GPU_RESOURCE)
            return replace(node, devices=devices, counter_sets=())
        if not declared_by_project(group):
            # discovery built this template from a member already, less the pods a fresh
            # node runs (topology.kube.discovery, topology.kube.core.daemons.template_from_member)
            return new_node(group, domain, name)
        base = self.member_templates.get(group.name)
        if base is None:
            base = self.member_templates[group.name] = member_template(self.cluster, group, member)
        labels = {**base.labels, **domain, HOSTNAME_LABEL: name}
        return replace(
            base, name=name, labels=labels, price_per_node_hour=group.price_per_node_hour
        )

    def _upcoming_nodes(self) -> list[PlannedNode]:
        """The upcoming nodes (``upcoming_nodes``) added to the simulation; requested
        nodes count towards the group's size."""
        unregistered, upcoming = upcoming_nodes(self.cluster, self.groups, self.taken)
        for group, count in unregistered.items():
            self.added[group] = self.added.get(group, 0) + count
        self.state.add_nodes(p.node for p in upcoming)
        return upcoming


def upcoming_nodes(
    cluster: Cluster, groups: Sequence[NodeGroup], taken: set[str]
) -> tuple[dict[str, int], list[PlannedNode]]:
    """Nodes CA counts as coming (``clusterstate.go`` ``GetUpcomingNodes``: target size
    minus registered; ``processors/customresources/gpu_processor.go``
    ``FilterOutNodesWithUnreadyResources``: a GPU node whose device plugin has not
    advertised its GPUs yet): template copies in the simulation, never bought twice.

    Returns the requested-but-unregistered count per group (they count towards the
    group's size, its target; GPU-unready members already do, as registered) and the
    template copies, named uniquely against ``taken`` (which the names join). Shared
    by cluster-autoscaler's model and the joint plan: one definition."""
    unregistered: dict[str, int] = {}
    upcoming = []
    for group in groups:
        target = group.autoscaler.target_size if group.autoscaler else None
        requested = max(0, (target or 0) - group.current_size)
        if requested:
            unregistered[group.name] = requested
        members = [n for n in cluster.nodes if n.node_group == group.name]
        missing = requested + sum(1 for n in members if gpus_unready(n, group))
        for _ in range(missing):
            name = unique_name(f"{group.name}-upcoming-{len(taken)}", taken)
            upcoming.append(PlannedNode(group, new_node(group, {}, name), "", {}))
    return unregistered, upcoming


def _limited(node: Node, gpu_label: str) -> dict[str, int]:
    """What one node counts against the cluster-wide limits: cpu, memory, GPUs by type
    (``gpu_processor.go`` ``GetNodeGpuTarget``: the type is the value of the provider's
    GPU label; a node without the label counts no GPU)."""
    counts = {"cpu": node.allocatable.cpu_milli, "memory": node.allocatable.memory_bytes}
    gpu_type = node.labels.get(gpu_label)
    if gpu_type is not None and node.gpus:
        counts[f"gpu:{gpu_type}"] = len(node.gpus)
    return counts
