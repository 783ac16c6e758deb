"""FGD's equal scores go to the first node in cluster order, as in the FGD simulator.

Worked by hand on real openb rows: three P100 nodes (64 cores, 2 idle GPUs
each); the typical pod is openb-pod-0000 (12 cores, one whole GPU); the
arriving pods are cpu-only openb-pod-1366 (16 cores). While a node keeps
≥ 12 cores after the pod, the typical pod still fits, fragmentation stays 0
before and after, and every node scores int(sigmoid(0)·100) = 50. The fourth
pod would leave node-0000 with 0 cores: both its idle GPUs become fragment
(0 → 2000 milli), int(sigmoid(−2)·100) = 11 < 50, so it moves to node-0001.
A random tie-break (our old rule) spread the first three over the three nodes.
"""

import csv
from pathlib import Path

import pytest

from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.workloads import pod_workload
from topology.ingest.trace import trace_nodes, trace_pods
from topology.model.hardware import Cluster, Pod

CSV_DIR = Path(__file__).resolve().parents[2] / "data" / "alibaba-gpu-v2023" / "csv"


def _rows(name: str) -> list[dict[str, str]]:
    with (CSV_DIR / name).open() as handle:
        return list(csv.DictReader(handle))


def _pod(name: str) -> Pod:
    return next(p for p in trace_pods(_rows("openb_pod_list_default.csv")) if p.name == name)


def _placed_nodes(node_order: slice, seed: int) -> list[str]:
    nodes = trace_nodes(_rows("openb_node_list_gpu_node.csv"))[:3][node_order]
    cpu_pod = _pod("openb-pod-1366")
    arrivals = [
        pod_workload(Pod(**{**{s: getattr(cpu_pod, s) for s in Pod.__slots__}, "name": f"c{i}"}))
        for i in range(4)
    ]
    options = PlacementOptions(policy="fgd", seed=seed, workload_mix=(_pod("openb-pod-0000"),))
    result = place(Cluster("three-p100", nodes=nodes), arrivals, options=options)
    return [o.bindings[0].node for o in result.outcomes]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_it_packs_cpu_only_pods_on_the_first_node_that_stays_neutral(seed: int) -> None:
    assert _placed_nodes(slice(None), seed) == [
        "openb-node-0000",
        "openb-node-0000",
        "openb-node-0000",
        "openb-node-0001",
    ]


def test_it_breaks_fgd_ties_by_cluster_order_not_by_node_name() -> None:
    assert _placed_nodes(slice(None, None, -1), seed=0)[0] == "openb-node-0002"
