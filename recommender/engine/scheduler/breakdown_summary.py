"""One workload's breakdown, summed up for its page: per node group, per domain, and the
first nodes by reason, small enough to keep for every pending workload of an evaluation.

The full breakdown (``breakdown.Breakdown``) lists every node; the page shows the
counts per node group and per domain (at the level the workload needs, else a
fallback) and only the first ``limit`` nodes, refused ones first. Summing up when the
evaluation is stored lets the page read its workload's summary instead of running the
scheduler pass again (the breakdown of a workload depends on what was placed before it
in that pass, so it cannot be worked out for the workload alone).

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .breakdown import Asks, Breakdown, NodeReason

FALLBACK_LEVELS = ("block", "rack", "zone")  # the domains shown when the workload needs none
NO_NODE_GROUP = "(no node group)"


@dataclass(frozen=True, slots=True)
class Tally:
    """Nodes of one node group or domain: how many, their GPUs, and the reasons' counts."""

    name: str  # the node group, or the domain's path ("zone/block")
    nodes: int
    gpus: int
    free_gpus: int
    reasons: tuple[tuple[str, int], ...]  # reason ("fits" where none) → nodes, most first
    first_node: str  # a node of it (the heatmap link of a domain is its node's)


@dataclass(frozen=True, slots=True)
class BreakdownSummary:
    workload: str
    asks: Asks
    placed: bool
    held: str | None
    member: str | None
    level: str | None  # the topology level of ``domains``
    groups: tuple[Tally, ...]  # most free GPUs first
    domains: tuple[Tally, ...]  # most free GPUs first
    nodes: tuple[NodeReason, ...]  # the first ``limit`` nodes: refused first, by reason
    node_count: int  # all nodes of the breakdown

    @property
    def nodes_more(self) -> int:
        return self.node_count - len(self.nodes)


def summarise(breakdown: Breakdown, limit: int) -> BreakdownSummary:
    """``breakdown`` summed up per node group and domain, with its first ``limit`` nodes
    (refused ones first, by reason then name; those that fit last)."""
    level = domain_level(breakdown)
    depth = breakdown.levels.index(level) + 1 if level else 0
    by_group: dict[str, list[NodeReason]] = {}
    by_domain: dict[str, list[NodeReason]] = {}
    for node in breakdown.nodes:
        by_group.setdefault(node.node_group or NO_NODE_GROUP, []).append(node)
        if depth:
            path = "/".join(segment or "?" for segment in node.path[:depth])
            by_domain.setdefault(path, []).append(node)
    refused = sorted(breakdown.nodes, key=lambda n: (n.reason == "", n.reason, n.node))
    return BreakdownSummary(
        workload=breakdown.workload,
        asks=breakdown.asks,
        placed=breakdown.placed,
        held=breakdown.held,
        member=breakdown.member,
        level=level if breakdown.nodes else None,
        groups=_tallies(by_group.items()),
        domains=_tallies(by_domain.items()),
        nodes=tuple(refused[:limit]),
        node_count=len(breakdown.nodes),
    )


def domain_level(breakdown: Breakdown) -> str | None:
    asks = breakdown.asks
    for level in (asks.required_level, asks.preferred_level, *FALLBACK_LEVELS):
        if level in breakdown.levels:
            return level
    return None


def _tallies(items: Iterable[tuple[str, list[NodeReason]]]) -> tuple[Tally, ...]:
    tallies = []
    for name, nodes in items:
        reasons = Counter(node.reason or "fits" for node in nodes)
        tallies.append(
            Tally(
                name=name,
                nodes=len(nodes),
                gpus=sum(node.gpus for node in nodes),
                free_gpus=sum(node.free_gpus for node in nodes),
                reasons=tuple(sorted(reasons.items(), key=lambda item: (-item[1], item[0]))),
                first_node=nodes[0].node,
            )
        )
    return tuple(sorted(tallies, key=lambda tally: (-tally.free_gpus, tally.name)))
