"""Blocked-heavy clusters through ``manage.py evaluate`` (issue #41): time and peak RSS.

``bench/diverse`` barely shows what answering *blocked* workloads costs: its pending
pods mostly fit. This writes a seeded ``kubectl get -o json`` List (the input
``manage.py evaluate`` reads) where about one workload in five is blocked:
``nodes`` nodes of 8 H100 each, no node group (nothing can be bought), one Running
pod bound to each node with a random shape (0.25–16 CPU, 1–256 GiB, GPUs from
{1, 1, 2, 4, 8}), and ``pending`` (default: nodes / 4) Pending single pods over
``shapes`` random shapes drawn alike. Every node holds at least one GPU, so a
pending 8-GPU pod fits nowhere (it is blocked; the relaxations, "what would change
the answer", then search preemption over every node for it).

    python -m bench.blocked --nodes 1000,2000 [--shapes 800] [--pending N] [--seed 1]
                            [--repeat 1] [--timings] [--count-blocked] [--keep DIR]
                            [--ref REF]

For each size it writes the export, runs ``python manage.py evaluate FILE --format
json --at 2026-12-02T00:00:00Z`` (``--timings`` too when asked, whose per-phase CPU
lines it passes on) and prints the child's CPU seconds (user + system), its peak
RSS and the SHA-256 of its output. ``--ref`` runs the same command, on the same
exports and in the same run, from a ``git worktree`` of REF (e.g. the commit before
a change) and prints the ratio of the best times: figures against a baseline that
a busy machine weighs on alike.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.diverse_export import node_object, pod_object  # noqa: E402
from bench.synth import MODELS  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
AT = "2026-12-02T00:00:00Z"
H100 = MODELS[0]
GPUS_PER_NODE = 8
GPU_CHOICES = (1, 1, 2, 4, 8)  # a node's running pod and every pending pod ask one of these

BlockedShape = tuple[int, int, int]  # cpu milli, memory MiB, whole GPUs


def random_shape(rng: random.Random) -> BlockedShape:
    """0.25–16 CPU (quarter steps), 1–256 GiB, GPUs from ``GPU_CHOICES``."""
    return rng.randrange(1, 65) * 250, rng.randrange(1, 257) * 1024, rng.choice(GPU_CHOICES)


def blocked_export(nodes: int, shapes: int, pending: int, seed: int) -> dict[str, Any]:
    """The List: the nodes, one seeded Running pod on each, the pending pods."""
    rng = random.Random(seed)
    # 8 H100 each, zone › block › rack labels, no node group
    items: list[dict[str, Any]] = [node_object(i, prefix="h100", model=H100) for i in range(nodes)]
    for i in range(nodes):
        cpu, memory, gpus = random_shape(rng)
        running = pod_object(f"running-{i:06d}", cpu, memory, gpus, 1000, None)
        running["spec"]["nodeName"] = f"h100-{i:05d}"
        running["status"]["phase"] = "Running"
        items.append(running)
    requests = [random_shape(rng) for _ in range(shapes)]
    for i in range(pending):
        cpu, memory, gpus = requests[rng.randrange(len(requests))]
        items.append(pod_object(f"blocked-{i:06d}", cpu, memory, gpus, 1000, None))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def timed_evaluate(
    path: Path, root: Path = REPO_ROOT, timings: bool = False
) -> tuple[float, float, str, str]:
    """CPU seconds and peak RSS (MiB) of one ``manage.py evaluate`` on the export (its
    own rusage, ``os.wait4``), its output's SHA-256 and its stderr."""
    command = [sys.executable, "manage.py", "evaluate", str(path), "--format", "json"]
    command += ["--at", AT, *(["--timings"] if timings else [])]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, cwd=root, stdout=out, stderr=err)
        _pid, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read().decode()
    if child.returncode:
        raise RuntimeError(f"manage.py evaluate exited {child.returncode}: {stderr}")
    cpu = usage.ru_utime + usage.ru_stime
    return cpu, usage.ru_maxrss / 1024, hashlib.sha256(stdout).hexdigest(), stderr


def blocked_count(path: Path, root: Path = REPO_ROOT) -> int:
    """Blocked workloads in one evaluation of the export (for the heading line)."""
    command = [sys.executable, "manage.py", "evaluate", str(path), "--format", "json"]
    done = subprocess.run(command + ["--at", AT], cwd=root, capture_output=True, check=True)
    return sum(1 for w in json.loads(done.stdout)["workloads"] if w["verdict"] == "blocked")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1000,2000", help="comma-separated node counts")
    parser.add_argument("--shapes", type=int, default=800)
    parser.add_argument("--pending", type=int, default=None, help="default: nodes / 4")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--timings", action="store_true", help="pass --timings on")
    parser.add_argument("--count-blocked", action="store_true", help="one more run to count")
    parser.add_argument("--keep", type=Path, help="write the exports here (kept)")
    parser.add_argument("--ref", help="also time a git worktree of this commit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        baseline = _worktree(args.ref, Path(scratch)) if args.ref else None
        try:
            for nodes in (int(n) for n in args.nodes.split(",") if n):
                _one_size(args, nodes, directory, baseline)
        finally:
            if baseline is not None:
                subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], check=False)


def _one_size(args: argparse.Namespace, nodes: int, directory: Path, baseline: Path | None) -> None:
    pending = nodes // 4 if args.pending is None else args.pending
    path = directory / f"blocked-{nodes}-{args.shapes}.json"
    path.write_text(json.dumps(blocked_export(nodes, args.shapes, pending, args.seed)))
    heading = f"blocked {nodes} nodes {args.shapes} shapes {pending} pending"
    if args.count_blocked:
        heading += f" ({blocked_count(path)} blocked)"
    print(heading, flush=True)
    roots = {"here": REPO_ROOT, **({args.ref: baseline} if baseline else {})}
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for label, root in roots.items():
            cpu, peak, digest, stderr = timed_evaluate(path, root, args.timings and label == "here")
            best[label] = min(cpu, best.get(label, cpu))
            print(
                f"blocked command {nodes} nodes {label}: manage.py evaluate {cpu:7.2f} s cpu  "
                f"peak {peak:6.0f} MiB  output {digest[:12]}",
                flush=True,
            )
            for line in stderr.splitlines():
                if line.startswith("timings "):
                    print(f"  {line}", flush=True)
    if baseline is not None:
        ratio = best[args.ref] / best["here"]
        print(f"blocked command {nodes} nodes {args.ref} / here: {ratio:.2f}")


def _worktree(ref: str, scratch: Path) -> Path:
    """A detached ``git worktree`` of REF, sharing this checkout's virtualenv."""
    path = scratch / "baseline"
    subprocess.run(["git", "worktree", "add", "--quiet", "--detach", str(path), ref], check=True)
    return path


if __name__ == "__main__":
    main()
