"""Why no scale-up helps a workload: the exact reason, most specific first.

Checked in order, the first that applies wins (it is what the operator must
change):

1. no node group can host the pods at all (GPU model, selectors, taints…),
   judged by the real scheduler on an empty template node;
2. every group that could host them is at max size (or out of domain slots);
3. the workload needs N GPUs in one domain of its required level and no
   domain reaches N even with every group at max size;
4. otherwise: what the scheduler said with the most nodes we could add.
"""

from __future__ import annotations

from recommender.engine.autoscaler.options import OptionSearch
from recommender.engine.autoscaler.plan import gpus_text, placement_text
from recommender.engine.autoscaler.refusals import no_group_can_host, unmatched
from recommender.engine.scheduler.placement import nodes_by_label, place_one, prepare
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import WHOLE_GPU_MILLI, NodeGroup, NodePlacement


def blocked_reasons(planner: OptionSearch, workload: Workload) -> tuple[str, ...]:
    rejections = {g.name: planner.compatible(g, workload) for g in planner.groups}
    usable = [g for g in planner.groups if rejections[g.name] is None]
    if not usable:
        return (_no_group_reason(planner, workload, rejections),)
    with_room = [g for g in usable if _group_room(planner, g, workload.namespace) > 0]
    if not with_room:
        return tuple(_full_reason(planner, g, workload.namespace) for g in usable)
    if (reason := _topology_reason(planner, workload, with_room)) is not None:
        return (reason,)
    return (_largest_try_reason(planner, workload, with_room),)


def _no_group_reason(
    planner: OptionSearch, workload: Workload, rejections: dict[str, str | None]
) -> str:
    wanted = {m for p in workload.pods if p.gpu for m in p.gpu.models}
    refusals = [reason for reason in rejections.values() if reason]
    missing = unmatched(workload.pods, planner.state, planner.cluster.nodes)
    return no_group_can_host(planner.groups, wanted, refusals, missing)


def _group_room(planner: OptionSearch, group: NodeGroup, namespace: str) -> int:
    return sum(
        planner.purchase_room(group, i, p, namespace)
        for i, p in enumerate(planner.placements(group))
    )


def _full_reason(planner: OptionSearch, group: NodeGroup, namespace: str) -> str:
    """Max size reached, or the room left is other teams' paid, unprovisioned nodes."""
    raw = sum(planner.room(group, i, p) for i, p in enumerate(planner.placements(group)))
    if raw > 0 and planner.held_for_others(group, namespace):
        owners = sorted(
            r.name
            for r in planner.active
            if r.node_group is not None
            and r.node_group.node_group == group.name
            and not r.may_use(namespace)
        )
        return (
            f"the room left in node group {group.name} (max size {group.max_size}) is "
            f"held for reservation(s) {', '.join(owners)}: paid, not yet provisioned "
            "nodes of other teams"
        )
    return f"max size {group.max_size} reached for node group {group.name}"


def _topology_reason(
    planner: OptionSearch, workload: Workload, groups: list[NodeGroup]
) -> str | None:
    """ "needs 16 GPUs in one block; the largest block reaches 12 at max size" (or None)."""
    if workload.required_topology is None:
        return None
    topology = planner.cluster.topology
    index = topology.index_of(workload.required_topology)
    if index is None:
        return None
    level = topology.levels[index]
    reach = _free_milli_per_domain(planner, level.key, workload)
    whole = _free_whole_per_domain(planner, level.key, workload)
    for group in groups:
        for domain, new_milli in _new_milli_per_domain(
            planner, group, level.key, workload.namespace
        ).items():
            reach[domain] = reach.get(domain, 0) + new_milli
            whole[domain] = whole.get(domain, 0) + new_milli // WHOLE_GPU_MILLI
    needed = workload.floor_gpu_milli
    if max(reach.values(), default=0) >= needed:
        return None
    # decided on free milli (a lower bound of what fits, shares included); said in whole
    # free GPUs, the figure of the scheduler's reason and the workload page's tables
    return (
        f"needs {gpus_text(needed)} GPUs in one {level.name}; "
        f"the largest {level.name} reaches {max(whole.values(), default=0)} at max size"
    )


def _free_milli_per_domain(
    planner: OptionSearch, level_key: str, workload: Workload
) -> dict[str, int]:
    """Free GPU milli of existing nodes per domain, on GPUs of a model the pods accept."""
    wanted = {m for p in workload.pods if p.gpu for m in p.gpu.models}
    state = planner.state
    per_domain: dict[str, int] = {}
    for domain, names in nodes_by_label(planner.cluster, state, level_key).items():
        free = 0
        for name in names:
            if not wanted or state.info(name).gpu_models <= wanted:
                free += state.alloc(name).free_gpu_milli  # every GPU counts: the cached total
            else:
                free += sum(
                    WHOLE_GPU_MILLI - cell.allocated_milli
                    for cell in state.gpu_cells(name)
                    if cell.model in wanted
                )
        per_domain[domain] = free
    return per_domain


def _free_whole_per_domain(
    planner: OptionSearch, level_key: str, workload: Workload
) -> dict[str, int]:
    """Whole free GPUs (nothing allocated) of existing nodes per domain, of a model the
    pods accept: the glossary's "free"."""
    wanted = {m for p in workload.pods if p.gpu for m in p.gpu.models}
    state = planner.state
    return {
        domain: sum(
            1
            for name in names
            for cell in state.gpu_cells(name)
            if cell.allocated_milli == 0 and (not wanted or cell.model in wanted)
        )
        for domain, names in nodes_by_label(planner.cluster, state, level_key).items()
    }


def _new_milli_per_domain(
    planner: OptionSearch, group: NodeGroup, level_key: str, namespace: str
) -> dict[str, int]:
    """GPU milli a group can still add per domain; nodes landing with no domain count nowhere."""
    group_room = group.max_size - group.current_size - planner.added_per_group.get(group.name, 0)
    per_domain: dict[str, int] = {}
    for index, placement in enumerate(planner.placements(group)):
        domain = placement.labels.get(level_key, group.template.labels.get(level_key))
        if domain is None:
            continue
        nodes = min(group_room, planner.purchase_room(group, index, placement, namespace))
        per_domain[domain] = per_domain.get(domain, 0) + nodes * group.template.gpu_count
    return {d: nodes * WHOLE_GPU_MILLI for d, nodes in per_domain.items()}


def _largest_try_reason(planner: OptionSearch, workload: Workload, groups: list[NodeGroup]) -> str:
    """What the scheduler says with the most nodes the first usable group can add."""
    group = groups[0]
    grants = planner.grants(workload.namespace)
    options = planner.options(grants)
    for index, placement in enumerate(planner.placements(group)):
        count = planner.purchase_room(group, index, placement, workload.namespace)
        if count < 1:
            continue
        # every node's reason, found on the plan's state: its copies (this one, and
        # those for the next blocked workloads of the same shape) start from them
        prepare(planner.cluster, [workload], planner.state, options, reasons=True)
        state = planner.state.copy()
        taken = set(planner.taken_names)
        for _ in range(count):
            state.add_node(planner.fresh_node(group, placement, taken, None))
        outcome = place_one(planner.cluster, workload, state, options)
        where = placement_text(placement.labels)
        diagnosis = outcome.diagnosis
        summary = (diagnosis.gang_reason or diagnosis.summary) if diagnosis else "fits"
        limit = _limit_text(planner, group, index, placement, count)
        return f"with {count} new node(s) of group {group.name}{where}{limit}: {summary}"
    return f"no room left in node group {group.name}"


def _limit_text(
    planner: OptionSearch, group: NodeGroup, index: int, placement: NodePlacement, count: int
) -> str:
    """What stops the group at ``count`` new nodes: its max size, or the domain's slots."""
    group_room = group.max_size - group.current_size - planner.added_per_group.get(group.name, 0)
    if count >= group_room:
        return f", all its max size {group.max_size} allows"
    if count >= planner.room(group, index, placement):
        return f", all the {placement.max_new_nodes} new-node slots of that domain"
    return ""
