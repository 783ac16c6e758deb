"""New nodes from several slots when no single slot can host the whole workload.

A slot (one group's placement domain) may have too little room for a gang,
or no group alone may carry every member, while nodes from two slots would:
naive buys one node here and one there and the gang runs. The joint plan
must then not call the gang blocked. Only when the single-slot search found
nothing, per domain of the required level (every slot, without one)::

    slots, cheapest node first ──► their room, node after node
    ──► probe with every node: fails → no mixed option in this domain
    ──► binary search for the shortest prefix under which the whole gang runs

Filling the cheapest slot first is a heuristic (it need not find the cheapest
mix), but each option is checked by the same ``place_one`` and confirmed on
the full state like any other.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from recommender.engine.autoscaler.options import (
    Option,
    OptionSearch,
    Slot,
    better,
    uniform_whole_gpus,
)
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import WHOLE_GPU_MILLI


def mixed_option(planner: OptionSearch, workload: Workload) -> Option | None:
    if len(workload.pods) < 2:
        return None  # one pod lands on one node: a single slot or nothing
    best: Option | None = None
    grants = planner.grants(workload.namespace)
    free = planner.free_milli_by_domain(workload)
    for domain, slots in _slots_per_domain(planner, workload).items():
        if len(slots) < 2:
            continue  # one slot: the single-slot search has tried it
        if not _enough_gpus(workload, free.get(domain, [0, 0]), slots):
            continue
        sequence = [slot for slot, room in slots for _ in range(room)]
        option = _shortest_prefix(planner, workload, sequence, grants)
        if option is not None and (best is None or better(option, best)):
            best = option
    return best


def _slots_per_domain(
    planner: OptionSearch, workload: Workload
) -> dict[str | None, list[tuple[Slot, int]]]:
    """Purchasable slots with room, cheapest node first, per domain of the required level."""
    key = workload.required_topology
    per_domain: dict[str | None, list[tuple[Slot, int]]] = {}
    for slot, room in planner.purchase_slots(workload):
        if room < 1:
            continue
        labels = slot.placement.labels
        domain = (labels.get(key) or slot.group.template.labels.get(key)) if key else None
        per_domain.setdefault(domain, []).append((slot, room))
    return per_domain


def _enough_gpus(workload: Workload, free: list[int], slots: list[tuple[Slot, int]]) -> bool:
    """GPU arithmetic before any probe: existing free GPU milli of the domain plus every
    new node's must cover the workload, and for members of g whole GPUs each, the
    members that fit (node by node, ⌊GPUs/g⌋) must reach ``min_member``."""
    free_milli, members_fitting = free
    new_gpus = sum(slot.group.template.gpu_count * room for slot, room in slots)
    if free_milli + new_gpus * WHOLE_GPU_MILLI < workload.floor_gpu_milli:
        return False
    per_pod = uniform_whole_gpus(workload)
    if not per_pod:
        return True
    new_members = sum(slot.group.template.gpu_count // per_pod * room for slot, room in slots)
    return members_fitting + new_members >= workload.min_member


def _shortest_prefix(
    planner: OptionSearch,
    workload: Workload,
    sequence: list[Slot],
    grants: dict[str, frozenset[str]],
) -> Option | None:
    """The shortest prefix of ``sequence`` (one slot per new node) that runs the workload."""
    found = planner.probe_parts(workload, _parts(sequence), grants)
    if found is None:
        return None
    failed, works = 0, len(sequence)  # no new node: the existing ones already failed
    while failed + 1 < works:
        middle = (failed + works) // 2
        trial = planner.probe_parts(workload, _parts(sequence[:middle]), grants)
        if trial is None:
            failed = middle
        else:
            found, works = trial, middle
    return found


def _parts(sequence: list[Slot]) -> tuple[tuple[Slot, int], ...]:
    """Consecutive new nodes of one slot as (slot, count)."""
    parts: list[tuple[Slot, int]] = []
    for slot in sequence:
        if parts and parts[-1][0] is slot:
            parts[-1] = (slot, parts[-1][1] + 1)
        else:
            parts.append((slot, 1))
    return tuple(parts)
