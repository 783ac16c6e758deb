"""Request-shape diversity: the same cluster and load with 5 or with hundreds of pod shapes.

Real clusters carry hundreds to thousands of distinct pod requests (issue #32);
the other benchmarks use a handful. ``diverse_cluster`` takes bench/synth.py's
seeded fleet (issue #6's shape, its bound pods) and replaces the pending work
with ``pending`` single pods (default: nodes / 4, so load grows with the
cluster) spread over ``shapes`` distinct requests. The requests are the openb
trace's own (data/alibaba-gpu-v2023: CPU, memory, GPU count, GPU share), then,
when more are asked for than the trace holds, the same requests with CPU and
memory scaled; one whole-GPU shape in three names a GPU model by nodeSelector.
The first ``k`` shapes of a shuffled list are the same for every ``shapes``
≥ ``k``, so 5 and 800 shapes differ only in how many requests are told apart.

    python -m bench.diverse [--nodes 2000] [--shapes 5,800] [--pending N] [--repeat 1]
                            [--profile] [--digest] [--curve 1000,2000,5000,10000]

Prints each run's process CPU and wall seconds of ``evaluate()`` and, per
shape count, the ratio to the first (the best of ``--repeat`` runs, which
alternate between shape counts so a busy machine weighs on each alike).
``--digest`` prints the SHA-256 of each evaluation's JSON (bench/evaluate.py's
fingerprint). ``--curve`` times instead one evaluation per cluster size with
the last shape count and pending ∝ nodes (nodes / 4, or ``--pending`` per
1,000 nodes), and the growth exponent of CPU time (bench/scaling.py's fit).
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import hashlib
import json
import pstats
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scaling import growth_exponent  # noqa: E402
from bench.synth import AT, MODELS, PRODUCT, TEAMS, synthetic_cluster  # noqa: E402
from recommender.engine.evaluate.evaluation import evaluate  # noqa: E402
from topology.model.hardware import Cluster, GpuRequest, Pod, Resources  # noqa: E402

CSV_DIR = Path(__file__).resolve().parents[1] / "data" / "alibaba-gpu-v2023" / "csv"
# what one synthetic node offers: requests above it fit nowhere and say little
MAX_CPU_MILLI, MAX_MEMORY_MIB, MAX_GPUS = 192_000, 1536 * 1024, 8
# how requests are varied past the trace's own (CPU and memory factors)
VARIANTS = tuple((c, m) for c in range(1, 6) for m in range(1, 6))

Shape = tuple[int, int, int, int, str | None]  # cpu milli, memory MiB, GPUs, milli/GPU, model


def trace_requests() -> list[tuple[int, int, int, int]]:
    """The distinct (cpu milli, memory MiB, GPUs, milli per GPU) of every openb pod list,
    sorted; GPU counts capped at a node's 8."""
    found: set[tuple[int, int, int, int]] = set()
    for path in sorted(CSV_DIR.glob("openb_pod_list_*.csv")):
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                gpus = min(int(row["num_gpu"]), MAX_GPUS)
                milli = int(row["gpu_milli"]) if gpus else 0
                found.add((int(row["cpu_milli"]), int(row["memory_mib"]), gpus, milli))
    return sorted(found)


def diverse_shapes(count: int, seed: int = 1) -> list[Shape]:
    """``count`` distinct requests: the trace's, then scaled variants, in a seeded order
    that does not depend on ``count`` (a longer list starts with a shorter one)."""
    shapes: list[Shape] = []
    seen: set[Shape] = set()
    for cpu_factor, memory_factor in VARIANTS:
        for n, (cpu, memory, gpus, milli) in enumerate(trace_requests()):
            model = MODELS[n % len(MODELS)] if milli == 1000 and n % 3 == 0 else None
            shape = (
                min(cpu * cpu_factor, MAX_CPU_MILLI),
                min(memory * memory_factor, MAX_MEMORY_MIB),
                gpus,
                milli,
                model,
            )
            if shape not in seen:
                seen.add(shape)
                shapes.append(shape)
    random.Random(seed).shuffle(shapes)
    if count > len(shapes):
        raise SystemExit(f"--shapes: at most {len(shapes)} distinct requests, not {count}")
    return shapes[:count]


def shape_pod(shape: Shape, index: int) -> Pod:
    """Pending pod ``index`` with the request ``shape``."""
    cpu, memory_mib, gpus, milli, model = shape
    gpu = None
    if gpus:
        gpu = GpuRequest(1, milli_per_gpu=milli) if milli < 1000 else GpuRequest(gpus)
    return Pod(
        f"team{index % TEAMS:02d}",
        f"diverse-{index:06d}",
        requests=Resources(cpu_milli=cpu, memory_bytes=memory_mib * 2**20, pods=1),
        gpu=gpu,
        node_selector={PRODUCT: model} if model else {},
        priority=index % 3,
        arrival=float(index),
    )


def diverse_cluster(nodes: int, shapes: int, pending: int | None = None, seed: int = 1) -> Cluster:
    """bench/synth.py's fleet (its bound pods, groups, reservations) with ``pending``
    single pods (default nodes / 4) over ``shapes`` distinct requests, in turn."""
    base = synthetic_cluster(nodes, seed=seed, gangs=0, issue_shape=True)
    count = max(1, nodes // 4) if pending is None else pending
    requests = diverse_shapes(shapes, seed)
    pods = [shape_pod(requests[i % len(requests)], i) for i in range(count)]
    bound = tuple(p for p in base.pods if p.node_name is not None)
    return Cluster(
        f"diverse-{nodes}-{shapes}",
        topology=base.topology,
        nodes=base.nodes,
        pods=bound + tuple(pods),
        gangs=(),
        node_groups=base.node_groups,
        reservations=base.reservations,
    )


def _digest(cluster: Cluster) -> str:
    document = json.dumps(evaluate(cluster, at=AT).to_json(), sort_keys=True, indent=2)
    return hashlib.sha256(document.encode()).hexdigest()


def _timed(cluster: Cluster, profile: bool) -> tuple[float, float]:
    """CPU and wall seconds of one ``evaluate()`` (profiled: the top functions printed)."""
    profiler = cProfile.Profile() if profile else None
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    evaluate(cluster, at=AT)
    if profiler is not None:
        profiler.disable()
    seconds = time.process_time() - cpu, time.perf_counter() - wall
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--shapes", default="5,800", help="comma-separated shape counts")
    parser.add_argument("--pending", type=int, default=None, help="default: nodes / 4")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--digest", action="store_true")
    parser.add_argument("--curve", default="", help="comma-separated node counts")
    args = parser.parse_args()
    counts = [int(s) for s in args.shapes.split(",") if s]
    if args.curve:
        curve([int(n) for n in args.curve.split(",") if n], counts[-1], args.pending, args.seed)
        return
    clusters = {c: diverse_cluster(args.nodes, c, args.pending, args.seed) for c in counts}
    if args.digest:
        for count, cluster in clusters.items():
            print(f"diverse digest {args.nodes} nodes {count} shapes {_digest(cluster)}")
        return
    best: dict[int, float] = {}
    for _ in range(args.repeat):
        for count, cluster in clusters.items():
            cpu, wall = _timed(cluster, args.profile)
            best[count] = min(best.get(count, cpu), cpu)
            pending = sum(1 for p in cluster.pods if p.node_name is None)
            print(
                f"diverse {args.nodes} nodes {count:>5} shapes {pending} pending: "
                f"evaluate {cpu:7.2f} s cpu {wall:7.2f} s wall",
                flush=True,
            )
    first = counts[0]
    for count in counts[1:]:
        ratio = best[count] / best[first]
        print(f"diverse {args.nodes} nodes {count} × {first} shapes: {ratio:.2f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


def curve(sizes: list[int], shapes: int, per_thousand: int | None, seed: int) -> None:
    """CPU seconds of one evaluation per size, pending growing with the nodes."""
    points = []
    for nodes in sizes:
        pending = None if per_thousand is None else per_thousand * nodes // 1000
        cluster = diverse_cluster(nodes, shapes, pending, seed)
        cpu, wall = _timed(cluster, profile=False)
        count = sum(1 for p in cluster.pods if p.node_name is None)
        print(
            f"diverse curve {nodes} nodes {shapes} shapes {count} pending: "
            f"evaluate {cpu:7.2f} s cpu {wall:7.2f} s wall",
            flush=True,
        )
        points.append((float(nodes), cpu))
    exponent = growth_exponent(points)
    if exponent is not None:
        print(f"diverse curve growth exponent (cpu, pending ∝ nodes): {exponent:.2f}")


if __name__ == "__main__":
    main()
