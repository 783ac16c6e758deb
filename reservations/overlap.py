"""Whether a reservation claims GPUs another team's reservation already holds. Pure.

Two reservations of different owners may not hold the same GPUs at the same time:
the same GPUs would be counted idle under each, and the joint plan would offer one
team's reservation to the other. A reservation holds:

    nodeNames / nodeSelector ─► nodes (named, or matched on the cluster's known nodes)
    nodeGroup {name, count}  ─► count nodes of the group not yet provisioned

Windows are [start, end); a missing end never ends, a missing start always was.
Nodes conflict when two such claims share a node; group capacity conflicts when the
counts of one group's overlapping claims add up past the group's ``maxSize`` (what
the group can ever have).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Claim:
    """One reservation as the check sees it (from its validated spec)."""

    name: str
    owners: frozenset[str]
    node_names: tuple[str, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_group: str | None = None
    node_group_count: int = 0
    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True)
class Conflict:
    """What a new claim overlaps: the field it is in, the other claim, and the reason."""

    field: str
    other: Claim
    reason: str


def windows_overlap(first: Claim, second: Claim) -> bool:
    starts_before_second_ends = (
        second.end is None or first.start is None or first.start < second.end
    )
    ends_after_second_starts = first.end is None or second.start is None or second.start < first.end
    return starts_before_second_ends and ends_after_second_starts


def held_nodes(claim: Claim, nodes: Mapping[str, Mapping[str, str]]) -> frozenset[str]:
    """Node names the claim holds: its named nodes and the known nodes its selector matches
    (an empty selector holds none, as ``reservations.idle.reserved_nodes``)."""
    selector = dict(claim.node_selector)
    selected = (
        {name for name, labels in nodes.items() if _matches(labels, selector)}
        if selector
        else set()
    )
    return frozenset(claim.node_names) | frozenset(selected)


def _matches(labels: Mapping[str, str], selector: Mapping[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def first_conflict(
    claim: Claim,
    others: Iterable[Claim],
    *,
    nodes: Mapping[str, Mapping[str, str]],
    group_sizes: Mapping[str, int],
) -> Conflict | None:
    """The first other claim of different owners whose GPUs ``claim`` would also hold."""
    rivals = [
        other
        for other in others
        if other.name != claim.name
        and other.owners != claim.owners
        and windows_overlap(claim, other)
    ]
    mine = held_nodes(claim, nodes)
    for other in rivals:
        shared = sorted(mine & held_nodes(other, nodes))
        if shared:
            spec_field = "spec.nodeNames" if claim.node_names else "spec.nodeSelector"
            return Conflict(spec_field, other, f"node(s) {', '.join(shared)} already reserved")
    if claim.node_group is None:
        return None
    same_group = [other for other in rivals if other.node_group == claim.node_group]
    size = group_sizes.get(claim.node_group)
    total = claim.node_group_count + sum(other.node_group_count for other in same_group)
    if same_group and size is not None and total > size:
        reason = (
            f"{total} nodes of group {claim.node_group} reserved at once, its maxSize is {size}"
        )
        return Conflict("spec.nodeGroup.count", same_group[0], reason)
    return None
