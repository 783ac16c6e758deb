"""Benchmark the joint evaluation at production scale, naive and joint side by side.

The cluster is bench/synth.py's seeded fleet in issue #6's shape (zone › block
› rack › host, whole / MIG / shared GPUs, reservations, 40 node groups, every
pending pod in a gang of 10; 10,000 nodes give 80,000 GPUs and 5,000 pending
pods in 500 gangs). Prints wall and CPU time of naive and joint scale_up and of
the whole evaluate(), and peak RSS. ``--digest`` prints the SHA-256 of
evaluate().to_json() instead: equal digests before and after a change mean
the decisions did not change.

    .venv/bin/python -m bench.evaluate [--nodes 10000] [--gangs 500] [--seed 1] [--digest]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synth import AT, synthetic_cluster  # noqa: E402
from recommender.engine.autoscaler.scale_up import scale_up  # noqa: E402
from recommender.engine.evaluate.evaluation import evaluate  # noqa: E402
from recommender.engine.scheduler.state import ClusterState  # noqa: E402
from recommender.engine.scheduler.workloads import pending_workloads  # noqa: E402


def timed(label: str, action):  # type: ignore[no-untyped-def]
    """Run ``action`` once; print wall and CPU seconds (CPU is what a busy machine keeps)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    print(
        f"{label:<24} {time.perf_counter() - wall:8.2f} s wall "
        f"{time.process_time() - cpu:8.2f} s cpu"
    )
    return result


def digest(cluster) -> str:  # type: ignore[no-untyped-def]
    """SHA-256 of the published JSON (the CLI's serialisation): the decisions' fingerprint."""
    document = json.dumps(evaluate(cluster, at=AT).to_json(), sort_keys=True, indent=2)
    return hashlib.sha256(document.encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--gangs", type=int, default=None, help="default: nodes / 20")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-evaluate", action="store_true")
    parser.add_argument("--skip-modes", action="store_true", help="only the whole evaluate()")
    parser.add_argument("--digest", action="store_true", help="print the to_json() SHA-256")
    args = parser.parse_args()
    cluster = synthetic_cluster(args.nodes, seed=args.seed, gangs=args.gangs, issue_shape=True)
    if args.digest:
        print(f"evaluate digest {args.nodes} nodes {digest(cluster)}")
        return
    state = timed("state", lambda: ClusterState.from_cluster(cluster))
    pending = pending_workloads(cluster)
    print(
        f"{len(cluster.nodes)} nodes, {cluster.gpu_count} GPUs, "
        f"{sum(len(w.pods) for w in pending)} pending pods in {len(pending)} workloads "
        f"({len(cluster.gangs)} gangs), {len(cluster.node_groups)} node groups"
    )
    if not args.skip_modes:
        run_modes(cluster, pending, state)
    if not args.skip_evaluate:
        timed("evaluate (all)", lambda: evaluate(cluster, at=AT))
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mib:.0f} MiB")


def run_modes(cluster, pending, state) -> None:  # type: ignore[no-untyped-def]
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


if __name__ == "__main__":
    main()
