"""Engine time and peak memory per cluster size, and the growth exponent.

For each size of ``bench.synth`` (default 1k, 10k, 50k nodes) a fresh
interpreter builds the seeded cluster and runs ``evaluate`` once; it reports
the wall time of ``evaluate`` alone and the child's peak RSS. The growth
exponent k of ``time ≈ c · nodes^k`` comes from a least-squares fit on
log(nodes), log(seconds); k ≈ 1 is linear. The pending load is held fixed
(``--gangs``) so the exponent measures growth in cluster size, not in demand.
Ratios are against the smallest size, measured in the same run.

    python -m bench.scaling [--sizes 1000,10000,50000] [--gangs 20] [--limit-seconds 900]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.synth import SIZES

REPO_ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, resource, sys, time
from bench.synth import AT, synthetic_cluster
from recommender.engine.evaluate.evaluation import evaluate
nodes, gangs, seed = (int(a) for a in sys.argv[1:4])
cluster = synthetic_cluster(nodes, seed=seed, gangs=gangs)
started = time.perf_counter()
result = evaluate(cluster, at=AT).to_json()
seconds = time.perf_counter() - started
print(json.dumps({"nodes": nodes, "pods": len(cluster.pods), "seconds": seconds,
    "workloads": len(result["workloads"]),
    "peakRssMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(nodes: int, *, gangs: int, seed: int, limit_seconds: float) -> dict[str, Any]:
    """One size in its own interpreter (clean peak RSS); ``timedOut`` past the limit."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(nodes), str(gangs), str(seed)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=limit_seconds,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return {"nodes": nodes, "timedOut": True, "limitSeconds": limit_seconds}
    return json.loads(done.stdout.strip().splitlines()[-1])


def growth_exponent(points: list[tuple[float, float]]) -> float | None:
    """Slope of the least-squares line through (log x, log y); None with fewer than 2 points."""
    if len(points) < 2:
        return None
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def run(sizes: list[int], *, gangs: int, seed: int, limit_seconds: float) -> dict[str, Any]:
    rows = []
    for nodes in sizes:
        row = measure(nodes, gangs=gangs, seed=seed, limit_seconds=limit_seconds)
        rows.append(row)
        print(json.dumps(row), flush=True)
    done = [r for r in rows if not r.get("timedOut")]
    if done:
        base = done[0]
        for row in done:
            row["nodesRatio"] = row["nodes"] / base["nodes"]
            row["timeRatio"] = row["seconds"] / base["seconds"]
            row["memoryRatio"] = row["peakRssMiB"] / base["peakRssMiB"]
    return {
        "rows": rows,
        "gangs": gangs,
        "timeExponent": growth_exponent([(r["nodes"], r["seconds"]) for r in done]),
        "memoryExponent": growth_exponent([(r["nodes"], r["peakRssMiB"]) for r in done]),
    }


def summary(result: dict[str, Any]) -> list[str]:
    lines = []
    for row in result["rows"]:
        if row.get("timedOut"):
            lines.append(f"scaling {row['nodes']:>6} nodes: over {row['limitSeconds']:.0f} s limit")
            continue
        lines.append(
            f"scaling {row['nodes']:>6} nodes: evaluate {row['seconds']:7.2f} s "
            f"(x{row['timeRatio']:.1f} for x{row['nodesRatio']:.0f} nodes), "
            f"peak RSS {row['peakRssMiB']:6.0f} MiB"
        )
    time_k, memory_k = result["timeExponent"], result["memoryExponent"]
    if time_k is not None:
        lines.append(f"scaling growth exponent: time {time_k:.2f}, memory {memory_k:.2f}")
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--gangs", type=int, default=20, help="pending gangs, same at every size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit-seconds", type=float, default=900.0)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    result = run(sizes, gangs=args.gangs, seed=args.seed, limit_seconds=args.limit_seconds)
    print("\n".join(summary(result)))
    return result


if __name__ == "__main__":
    main()
