"""Benchmark (not a test): parse_objects on a 10,000-node / 80,000-GPU / 100,000-pod snapshot.

The snapshot is generated (seeded) as the API would serve it: GFD-labelled
8-GPU nodes in zones/blocks/racks, pods asking for 0–8 GPUs with node
selectors, tolerations and gang labels. Reports wall time and the peak
memory tracemalloc sees. Run: ``python -m bench.parse [--seed N]``.
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc
from typing import Any

from topology.kube.parse import parse_objects

NODES = 10_000
GPUS_PER_NODE = 8
PODS = 100_000


def node_object(index: int) -> dict[str, Any]:
    zone, block, rack = index // 2500, index // 250, index // 25
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"gpu-{index:05d}",
            "labels": {
                "kubernetes.io/hostname": f"gpu-{index:05d}",
                "topology.kubernetes.io/zone": f"z{zone}",
                "cloud.google.com/gce-topology-block": f"b{block}",
                "cloud.google.com/gce-topology-subblock": f"r{rack}",
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                "nvidia.com/gpu.memory": "81559",
                "nvidia.com/gpu.count": str(GPUS_PER_NODE),
            },
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {
            "allocatable": {
                "cpu": "207500m",
                "memory": "1800Gi",
                "pods": "110",
                "nvidia.com/gpu": str(GPUS_PER_NODE),
            },
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod_object(index: int, rng: random.Random) -> dict[str, Any]:
    gpus = rng.choice((0, 1, 1, 2, 4, 8))
    bound = rng.random() < 0.7
    labels = {"app": f"job-{index // 16}"}
    if gpus == 8:
        labels["kueue.x-k8s.io/pod-group-name"] = f"gang-{index // 4}"
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "resources": {
                    "requests": {
                        "cpu": f"{rng.randint(1, 32)}",
                        "memory": f"{rng.randint(1, 64)}Gi",
                    },
                    "limits": {"nvidia.com/gpu": str(gpus)} if gpus else {},
                },
            }
        ],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        "priority": rng.choice((0, 100, 1000)),
    }
    if bound:
        spec["nodeName"] = f"gpu-{rng.randrange(NODES):05d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"pod-{index:06d}",
            "namespace": f"team-{index % 20}",
            "labels": labels,
            "annotations": {"kueue.x-k8s.io/pod-group-total-count": "4"} if gpus == 8 else {},
            "creationTimestamp": f"2026-01-01T{index // 3600 % 24:02d}:{index // 60 % 60:02d}:00Z",
        },
        "spec": spec,
        "status": {"phase": "Running" if bound else "Pending"},
    }


def snapshot_objects(seed: int) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    objects = [("bench", node_object(i)) for i in range(NODES)]
    objects += [("bench", pod_object(i, rng)) for i in range(PODS)]
    return objects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    objects = snapshot_objects(args.seed)
    started = time.perf_counter()
    snapshot = parse_objects(objects, cluster_name="bench")
    elapsed = time.perf_counter() - started
    tracemalloc.start()
    parse_objects(objects, cluster_name="bench")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    cluster = snapshot.cluster
    print(
        f"parse_objects: {len(cluster.nodes)} nodes, {cluster.gpu_count} GPUs, "
        f"{len(cluster.pods)} pods, {len(cluster.gangs)} gangs, {len(snapshot.errors)} errors"
    )
    print(f"wall time {elapsed:.2f} s (untraced); peak traced memory {peak / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
