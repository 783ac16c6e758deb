"""The score index (memo.ScoreIndex) changes no decision: same bindings as visiting every node."""

import csv
import random
from pathlib import Path

import pytest

from recommender.engine.scheduler.placement import PlacementOptions, place, place_unindexed
from recommender.engine.scheduler.workloads import Workload, pending_workloads, pod_workload
from tests.builders import make_node
from topology.ingest.trace import trace_nodes, trace_pods
from topology.model.hardware import (
    Cluster,
    Gang,
    GpuRequest,
    Pod,
    Resources,
    Topology,
    TopologyLevel,
)

CSV_DIR = Path(__file__).resolve().parents[2] / "data" / "alibaba-gpu-v2023" / "csv"


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


@pytest.mark.parametrize(
    "policy", ["kube-default", "bestfit", "random", "fgd", "most_allocated", "first-fit"]
)
def test_it_binds_exactly_as_the_unindexed_path(policy: str) -> None:
    cluster, workloads = _reduced_openb()
    options = PlacementOptions(policy=policy, seed=3)
    indexed = place(cluster, workloads, options=options)
    reference = place_unindexed(cluster, workloads, options=options)
    assert [o.bindings for o in indexed.outcomes] == [o.bindings for o in reference.outcomes]
    assert [o.diagnosis for o in indexed.outcomes] == [o.diagnosis for o in reference.outcomes]
    assert sum(not o.placed for o in indexed.outcomes) > 0  # the failure path is exercised too


LEVELS = ("zone", "block", "rack", "kubernetes.io/hostname")


def _gang_fleet(nodes: int, gangs: int, seed: int) -> tuple[Cluster, list[Workload]]:
    """zone › block (16 nodes) › rack (4) › host, two GPU models, half the GPUs bound;
    gangs of 6 pods of 1–8 GPUs by nodeSelector, a third requiring a block, a third
    preferring one."""
    rng = random.Random(seed)
    node_list, pods = [], []
    for i in range(nodes):
        block = i // 16
        labels = {"zone": f"z{block % 2}", "block": f"b{block}", "rack": f"b{block}-r{i // 4 % 4}"}
        model = ("H100", "A100")[block % 2]
        node = (
            make_node(f"n{i:03d}")
            .labels({**labels, "kubernetes.io/hostname": f"n{i:03d}", "gpu": model})
            .allocatable(192, "2Ti", 110)
            .gpus(8, model)
            .build()
        )
        node_list.append(node)
        used = rng.choice((0, 4, 6, 8, 8))
        if used:
            pods.append(Pod("bound", f"p{i}", GANG_REQUESTS, GpuRequest(used), node_name=node.name))
    gang_list = []
    for g in range(gangs):
        level = ("block", None, None)[g % 3]
        preferred = "block" if g % 3 == 1 else None
        gang = Gang(f"team{g % 3}", f"job{g}", 6, level, preferred)
        gang_list.append(gang)
        gpu = GpuRequest(rng.choice((1, 2, 4, 8)))
        model = rng.choice(("H100", "A100"))
        pods.extend(
            Pod(
                gang.namespace,
                f"job{g}-{k}",
                GANG_REQUESTS,
                gpu,
                node_selector={"gpu": model},
                gang=gang.key,
                required_topology=level,
                preferred_topology=preferred,
                arrival=float(g),
            )
            for k in range(6)
        )
    topology = Topology(tuple(TopologyLevel(key, key) for key in LEVELS))
    cluster = Cluster(
        "fleet", topology=topology, nodes=tuple(node_list), pods=tuple(pods), gangs=tuple(gang_list)
    )
    return cluster, pending_workloads(cluster)


GANG_REQUESTS = Resources(cpu_milli=8000, memory_bytes=2**36, pods=1)


def _many_shapes(nodes: int, pods: int, seed: int) -> tuple[Cluster, list[Workload]]:
    """The gang fleet's nodes (half their GPUs bound) and lone pods of as many distinct
    requests as pods: cpu and memory vary, 0–8 whole GPUs or a share, a third naming
    a block by nodeSelector (nodes of other blocks share its nodes' memo keys)."""
    cluster, _ = _gang_fleet(nodes, 0, seed)
    rng = random.Random(seed)
    pending = []
    for k in range(pods):
        requests = Resources(cpu_milli=1000 + 7 * k, memory_bytes=(1 + k % 50) * 2**30, pods=1)
        gpu = rng.choice((None, GpuRequest(1, 250), GpuRequest(1), GpuRequest(2), GpuRequest(8)))
        selector = {"block": f"b{rng.randrange(nodes // 16)}"} if k % 3 == 0 else {}
        pod = Pod("team", f"p{k:03d}", requests, gpu, node_selector=selector, arrival=float(k))
        pending.append(pod_workload(pod))
    return cluster, pending


@pytest.mark.parametrize("policy", ["kube-default", "bestfit", "fgd", "first-fit"])
def test_it_places_hundreds_of_request_shapes_exactly_as_the_unindexed_path(policy: str) -> None:
    cluster, workloads = _many_shapes(64, 300, seed=4)
    options = PlacementOptions(policy=policy, seed=1)
    indexed = place(cluster, workloads, options=options)
    reference = place_unindexed(cluster, workloads, options=options)
    assert [o.bindings for o in indexed.outcomes] == [o.bindings for o in reference.outcomes]
    assert [o.diagnosis for o in indexed.outcomes] == [o.diagnosis for o in reference.outcomes]
    assert 0 < sum(o.placed for o in indexed.outcomes) < len(workloads)
