"""A reduced FGD-simulator protocol on the real openb trace (full run: bench/validate_openb.py)."""

import csv
import random
from pathlib import Path

from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.workloads import pod_workload
from topology.ingest.trace import trace_nodes, trace_pods
from topology.model.hardware import Cluster

CSV_DIR = Path(__file__).resolve().parents[2] / "data" / "alibaba-gpu-v2023" / "csv"


def _rows(name: str) -> list[dict[str, str]]:
    with (CSV_DIR / name).open() as handle:
        return list(csv.DictReader(handle))


def _allocation_percent(policy: str) -> float:
    """150 nodes, pods drawn (seeded) until 130 % of their GPUs, shuffled, never leaving."""
    nodes = trace_nodes(_rows("openb_node_list_gpu_node.csv"))[::8]
    pods = trace_pods(_rows("openb_pod_list_default.csv"))
    rng = random.Random(42)
    capacity_milli = sum(n.gpu_count for n in nodes) * 1000
    arrivals, requested = [], 0
    while requested < 1.3 * capacity_milli:
        pod = rng.choice(pods)
        requested += pod.gpu.total_milli if pod.gpu else 0
        arrivals.append(pod_workload(pod))
    cluster = Cluster("openb-reduced", nodes=nodes)
    result = place(cluster, arrivals, options=PlacementOptions(policy=policy, seed=42))
    return 100 * result.state.total_allocated_gpu_milli() / capacity_milli


def test_it_allocates_more_gpus_with_bestfit_than_random_on_openb() -> None:
    assert _allocation_percent("bestfit") > _allocation_percent("random") + 1.0
