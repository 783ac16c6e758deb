"""Benchmark the joint evaluation at production scale, naive and joint side by side.

The cluster is bench/synth.py's seeded fleet (zone › block › rack › host,
whole / MIG / shared GPUs, reservations, one node group per GPU model) with
GANGS pending gangs. Prints wall time of naive and joint scale_up and of the
whole evaluate(), and peak RSS.

    .venv/bin/python -m bench.evaluate [--nodes 10000] [--gangs 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synth import AT, synthetic_cluster  # noqa: E402
from recommender.engine.evaluate import evaluate  # noqa: E402
from recommender.engine.scaleup import scale_up  # noqa: E402
from recommender.engine.state import ClusterState  # noqa: E402
from recommender.engine.workloads import pending_workloads  # noqa: E402


def timed(label: str, action):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = action()
    print(f"{label:<24} {time.perf_counter() - start:8.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--gangs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-evaluate", action="store_true")
    args = parser.parse_args()
    cluster = timed(
        "generate",
        lambda: synthetic_cluster(args.nodes, seed=args.seed, gangs=args.gangs),
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
