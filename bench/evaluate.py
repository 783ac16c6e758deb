"""Benchmark the joint evaluation at production scale, naive and joint side by side.

Seeded generator (``--seed``): NODES GPU nodes spread over zones › blocks ›
racks, about half their GPUs taken by bound pods; GANGS pending gangs of
PODS_PER_GANG pods (whole GPUs, some with a required block); GROUPS node
groups (several GPU models, placements per block). Prints wall time of
naive and joint scale_up and of the whole evaluate(), and peak RSS.

    .venv/bin/python bench/evaluate.py [--nodes 10000] [--gangs 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.engine.evaluate import evaluate  # noqa: E402
from recommender.engine.scaleup import scale_up  # noqa: E402
from recommender.engine.state import ClusterState  # noqa: E402
from recommender.engine.workloads import pending_workloads  # noqa: E402
from topology.hardware import (  # noqa: E402
    HOSTNAME_LABEL,
    Cluster,
    Device,
    Gang,
    Gpu,
    GpuRequest,
    Node,
    NodeGroup,
    NodePlacement,
    Pod,
    Resources,
    Topology,
    TopologyLevel,
)

ZONE, BLOCK, RACK = (
    "topology.kubernetes.io/zone",
    "cloud.google.com/gce-topology-block",
    "cloud.google.com/gce-topology-subblock",
)
MODELS = ("H100", "A100", "L40S", "H200")
AT = datetime(2026, 12, 2, tzinfo=UTC)
GIB = 2**30


def gpu_node(name: str, model: str, labels: dict[str, str], group: str | None) -> Node:
    return Node(
        name=name,
        labels={**labels, HOSTNAME_LABEL: name, "nvidia.com/gpu.product": model},
        allocatable=Resources(cpu_milli=192_000, memory_bytes=1536 * GIB, pods=110),
        gpus=tuple(Gpu(f"gpu-{i}", model=model) for i in range(8)),
        devices=tuple(
            Device(f"gpu-{i}", gpu=f"gpu-{i}", model=model, capacity={"gpu_milli": 1000})
            for i in range(8)
        ),
        node_group=group,
    )


def block_labels(index: int) -> dict[str, str]:
    return {ZONE: f"z{index % 4}", BLOCK: f"b{index}", RACK: f"b{index}-r0"}


def generate(nodes: int, gangs: int, pods_per_gang: int, groups: int, seed: int) -> Cluster:
    rng = random.Random(seed)
    blocks = max(1, nodes // 64)
    node_list, pods = [], []
    for i in range(nodes):
        block = i % blocks
        model = MODELS[block % len(MODELS)]
        group = f"g{(block % groups):02d}"
        node = gpu_node(f"n{i:05d}", model, block_labels(block), group)
        node_list.append(node)
        used = rng.choice((4, 6, 8, 8))
        if used:
            pods.append(
                Pod(
                    "bound",
                    f"b{i}",
                    requests=Resources(cpu_milli=8000, pods=1),
                    gpu=GpuRequest(used),
                    node_name=node.name,
                )
            )
    gang_list = []
    for g in range(gangs):
        model = MODELS[g % len(MODELS)]
        required = BLOCK if g % 3 == 0 else None
        gang = Gang(
            f"team{g % 20}",
            f"job{g:03d}",
            pods_per_gang,
            required_topology=required,
            priority=rng.randrange(3),
        )
        gang_list.append(gang)
        gpus = rng.choice((1, 2, 4, 8))
        for p in range(pods_per_gang):
            pods.append(
                Pod(
                    gang.namespace,
                    f"{gang.name}-{p}",
                    requests=Resources(cpu_milli=4000, memory_bytes=32 * GIB, pods=1),
                    gpu=GpuRequest(gpus),
                    node_selector={"nvidia.com/gpu.product": model},
                    gang=gang.key,
                    required_topology=required,
                    priority=gang.priority,
                    arrival=float(g),
                )
            )
    node_groups = []
    for k in range(groups):
        model = MODELS[k % len(MODELS)]
        placements = tuple(NodePlacement(block_labels(b), 4) for b in range(k, blocks, groups))[:4]
        template = gpu_node(f"g{k:02d}-template", model, {}, f"g{k:02d}")
        node_groups.append(
            NodeGroup(
                f"g{k:02d}",
                {},
                0,
                10_000,
                40.0 + 3 * k,
                template,
                placements,
                current_size=sum(1 for n in node_list if n.node_group == f"g{k:02d}"),
            )
        )
    topology = Topology(
        tuple(
            TopologyLevel(k, n)
            for k, n in ((ZONE, "zone"), (BLOCK, "block"), (RACK, "rack"), (HOSTNAME_LABEL, "host"))
        )
    )
    return Cluster(
        "bench",
        topology=topology,
        nodes=tuple(node_list),
        pods=tuple(pods),
        gangs=tuple(gang_list),
        node_groups=tuple(node_groups),
    )


def timed(label: str, action):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = action()
    print(f"{label:<24} {time.perf_counter() - start:8.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--gangs", type=int, default=500)
    parser.add_argument("--pods-per-gang", type=int, default=10)
    parser.add_argument("--groups", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-evaluate", action="store_true")
    args = parser.parse_args()
    cluster = timed(
        "generate",
        lambda: generate(args.nodes, args.gangs, args.pods_per_gang, args.groups, args.seed),
    )
    state = timed("state", lambda: ClusterState.from_cluster(cluster))
    pending = pending_workloads(cluster)
    print(
        f"{len(cluster.nodes)} nodes, {sum(len(w.pods) for w in pending)} pending pods "
        f"in {len(pending)} workloads, {len(cluster.node_groups)} node groups"
    )
    naive = timed(
        "scale_up naive", lambda: scale_up(cluster, pending, state=state, mode="naive", at=AT)
    )
    joint = timed(
        "scale_up joint", lambda: scale_up(cluster, pending, state=state, mode="joint", at=AT)
    )
    print(
        f"naive {naive.cost_per_hour:.0f}/h stranded {naive.stranded_per_hour:.0f}/h; "
        f"joint {joint.cost_per_hour:.0f}/h"
    )
    if not args.skip_evaluate:
        timed("evaluate (all)", lambda: evaluate(cluster, at=AT))
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
