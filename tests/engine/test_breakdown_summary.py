"""A workload's breakdown summed up per node group and domain, with its first nodes.

The cluster is test_breakdown's: n1 (block b1, 8 free GPUs), n2 (b2, 4 of 8 free: a
running pod holds 4), n3 (b1, 8 free, tainted), cpu-1 (b1, no GPU), no node group. The
gang ml/g asks 2 × 8 GPUs and no topology level: g-0 takes n1, then g-1 fits nowhere;
the reasons are for g-1 with the nodes as before the gang (n1 back to 8 free).
"""

from __future__ import annotations

from recommender.engine.scheduler.breakdown import workload_breakdown
from recommender.engine.scheduler.breakdown_summary import (
    NO_NODE_GROUP,
    BreakdownSummary,
    Tally,
    summarise,
)
from tests.engine.test_breakdown import AT, cluster, gpu_pod

INSUFFICIENT = "Insufficient nvidia.com/gpu"
TAINT = "node(s) had untolerated taint {dedicated: infra}"


def gang_summary(limit: int) -> BreakdownSummary:
    found = workload_breakdown(cluster(), "ml/g", at=AT)
    assert found is not None
    return summarise(found, limit)


def test_it_tallies_the_nodes_per_group_and_per_block() -> None:
    summary = gang_summary(10)
    assert summary.level == "block"  # no level asked for: the first fallback there is
    # a domain is its path from the outermost level; the nodes lack the two levels above
    # block, shown "?"
    assert summary.groups == (
        Tally(NO_NODE_GROUP, 4, 24, 20, ((INSUFFICIENT, 3), (TAINT, 1)), "n1"),
    )
    assert summary.domains == (
        Tally("?/?/b1", 3, 16, 16, ((INSUFFICIENT, 2), (TAINT, 1)), "n1"),
        Tally("?/?/b2", 1, 8, 4, ((INSUFFICIENT, 1),), "n2"),
    )


def test_it_keeps_the_first_nodes_by_reason_and_counts_the_rest() -> None:
    summary = gang_summary(2)
    assert [n.node for n in summary.nodes] == ["cpu-1", "n1"]  # "Insufficient" < "node(s)"
    assert (summary.node_count, summary.nodes_more) == (4, 2)
    assert (summary.member, summary.placed, summary.held) == ("ml/g-1", False, None)


def test_a_placed_workload_has_no_tallies() -> None:
    placed = workload_breakdown(cluster(gpu_pod("small", 2)), "ml/small", at=AT)
    assert placed is not None
    summary = summarise(placed, 10)
    assert (summary.placed, summary.groups, summary.domains, summary.nodes) == (True, (), (), ())
    assert summary.level is None and summary.node_count == 0
