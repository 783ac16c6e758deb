"""The score index (memo.ScoreIndex) changes no decision: same bindings as visiting every node."""

import csv
import random
from pathlib import Path

import pytest

from recommender.engine.placement import PlacementOptions, place, place_unindexed
from recommender.engine.workloads import Workload, pod_workload
from topology.hardware import Cluster
from topology.trace import trace_nodes, trace_pods

CSV_DIR = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "alibaba-gpu-v2023" / "csv"
)


def _rows(name: str) -> list[dict[str, str]]:
    with (CSV_DIR / name).open() as handle:
        return list(csv.DictReader(handle))


def _reduced_openb() -> tuple[Cluster, list[Workload]]:
    """76 openb nodes, pods drawn (seeded) until 130 % of their GPUs: many fail at the end."""
    nodes = trace_nodes(_rows("openb_node_list_gpu_node.csv"))[::16]
    pods = trace_pods(_rows("openb_pod_list_default.csv"))
    rng = random.Random(7)
    capacity_milli = sum(n.gpu_count for n in nodes) * 1000
    arrivals, requested = [], 0
    while requested < 1.3 * capacity_milli:
        pod = rng.choice(pods)
        requested += pod.gpu.total_milli if pod.gpu else 0
        arrivals.append(pod_workload(pod))
    return Cluster("openb-reduced", nodes=nodes), arrivals


@pytest.mark.parametrize("policy", ["bestfit", "random", "fgd", "most_allocated"])
def test_it_binds_exactly_as_the_unindexed_path(policy: str) -> None:
    cluster, workloads = _reduced_openb()
    options = PlacementOptions(policy=policy, seed=3)
    indexed = place(cluster, workloads, options=options)
    reference = place_unindexed(cluster, workloads, options=options)
    assert [o.bindings for o in indexed.outcomes] == [o.bindings for o in reference.outcomes]
    assert [o.diagnosis for o in indexed.outcomes] == [o.diagnosis for o in reference.outcomes]
    assert sum(not o.placed for o in indexed.outcomes) > 0  # the failure path is exercised too
