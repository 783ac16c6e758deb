"""Benchmark the scheduler simulation at fleet scale: 500 gangs onto 10,000 nodes.

The cluster is bench/synth.py's seeded fleet (zone › block › rack › host,
10,000 8-GPU nodes = 80,000 GPUs, about half taken by bound pods, MIG and
time-sliced nodes, reservations). Its pending demand is replaced by GANGS
gangs of PODS_PER_GANG pods (1, 2, 4 or 8 whole GPUs of the block's model;
one gang in three requires a single block, one in three prefers one), so the
figure is about ``place`` alone. Prints the placement wall and CPU time of
the indexed path (``place``) and, as the baseline measured in the same run,
of the unindexed path (``place_unindexed``), with the placed counts (equal:
the two paths decide the same).

    .venv/bin/python bench/placement.py [--nodes 10000] [--gangs 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synth import BLOCK, MODELS, PRODUCT, TEAMS, synthetic_cluster  # noqa: E402
from recommender.engine.scheduler.placement import (  # noqa: E402
    PlacementOptions,
    PlacementResult,
    place,
    place_unindexed,
)
from recommender.engine.scheduler.workloads import pending_workloads  # noqa: E402
from topology.model.hardware import Cluster, Gang, GpuRequest, Pod, Resources  # noqa: E402

PODS_PER_GANG = 10
GIB = 2**30


def with_gangs(cluster: Cluster, gangs: int, seed: int) -> Cluster:
    """The cluster's bound pods plus ``gangs`` seeded pending gangs."""
    rng = random.Random(seed)
    bound = [p for p in cluster.pods if p.node_name is not None]
    gang_list, pending = [], []
    requests = Resources(cpu_milli=8000, memory_bytes=64 * GIB, pods=1)
    for g in range(gangs):
        team = f"team{g % TEAMS:02d}"
        required = BLOCK if g % 3 == 0 else None
        preferred = BLOCK if g % 3 == 1 else None
        gang = Gang(team, f"job-{g:05d}", PODS_PER_GANG, required, preferred, priority=g % 3)
        gang_list.append(gang)
        gpus = rng.choice((1, 2, 4, 8))
        model = MODELS[rng.randrange(len(MODELS))]
        pending.extend(
            Pod(
                team,
                f"{gang.name}-{p}",
                requests=requests,
                gpu=GpuRequest(gpus),
                node_selector={PRODUCT: model},
                gang=gang.key,
                required_topology=required,
                preferred_topology=preferred,
                priority=gang.priority,
                arrival=float(g),
            )
            for p in range(PODS_PER_GANG)
        )
    return replace(cluster, pods=(*bound, *pending), gangs=tuple(gang_list))


def timed(label: str, run: object) -> PlacementResult:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()  # type: ignore[operator]
    placed = sum(o.placed for o in result.outcomes)
    print(
        f"{label:10s} wall {time.perf_counter() - wall:6.2f} s  "
        f"cpu {time.process_time() - cpu:6.2f} s  placed {placed}/{len(result.outcomes)}",
        flush=True,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--gangs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--policy", default="default")
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    cluster = with_gangs(synthetic_cluster(args.nodes, seed=args.seed), args.gangs, args.seed)
    workloads = pending_workloads(cluster)
    pods = sum(len(w.pods) for w in workloads)
    print(
        f"{len(cluster.nodes)} nodes, {cluster.gpu_count} GPUs, "
        f"{len(workloads)} workloads ({pods} pending pods), policy {args.policy}"
    )
    options = PlacementOptions(policy=args.policy, seed=args.seed)
    indexed = timed("indexed", lambda: place(cluster, workloads, options=options))
    if not args.no_baseline:
        reference = timed("unindexed", lambda: place_unindexed(cluster, workloads, options=options))
        same = [o.bindings for o in indexed.outcomes] == [o.bindings for o in reference.outcomes]
        print(f"same bindings: {same}")


if __name__ == "__main__":
    main()
