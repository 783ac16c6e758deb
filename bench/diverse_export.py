"""Request-shape diversity through ``manage.py evaluate``: two exports of one cluster.

Issue #32 asks that ``manage.py evaluate`` on a 2,000-node export whose pending
pods carry 800 distinct requests take at most twice what the same export with 5
requests takes. This writes such exports as ``kubectl get -o json`` Lists (the
input the command reads): ``nodes`` GFD-labelled 8-GPU nodes in zone › block ›
rack (four models), one Running pod bound to each with a seeded cpu / memory /
GPU request (so nodes differ in what is free, as in a real cluster), one
NodeGroup per model, and ``pending`` Pending pods spread over the first
``shapes`` requests of ``bench.diverse.diverse_shapes`` (the openb trace's, then
scaled): whole GPUs as ``nvidia.com/gpu``, shares as KAI's ``gpu-fraction``
annotation, a GPU model as a nodeSelector.

    python -m bench.diverse_export --nodes 2000 --shapes 5,800 [--pending 500] [DIR]
                                   [--time] [--repeat 2]

writes DIR/diverse-2000-5.json and DIR/diverse-2000-800.json (a temporary
directory when DIR is left out). ``--time`` then runs ``python manage.py
evaluate FILE --format json --at 2026-12-02T00:00:00Z`` on each, alternating
``--repeat`` times, and prints each run's CPU seconds (the child's user + system
time), the SHA-256 of its output and, per shape count, the ratio of its best run
to the first count's (``make bench``'s ``diverse_command``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.diverse import Shape, diverse_shapes  # noqa: E402
from bench.synth import MODELS, PRODUCT  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]

GPUS_PER_NODE = 8
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def node_object(index: int, *, prefix: str = "gpu", model: str | None = None) -> dict[str, Any]:
    """Node ``index``: 8 GPUs of ``model`` (else one of four models by index), zone ›
    block › rack labels."""
    name = f"{prefix}-{index:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": f"z{index // 500}",
                "cloud.google.com/gce-topology-block": f"b{index // 100}",
                "cloud.google.com/gce-topology-subblock": f"r{index // 20}",
                PRODUCT: model or MODELS[index % len(MODELS)],
                "nvidia.com/gpu.count": str(GPUS_PER_NODE),
            },
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {
            "allocatable": {
                "cpu": "192",
                "memory": "1536Gi",
                "pods": "110",
                "nvidia.com/gpu": str(GPUS_PER_NODE),
            },
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod_object(
    name: str, cpu_milli: int, memory_mib: int, gpus: int, milli: int, model: str | None
) -> dict[str, Any]:
    """A pod with one container asking for the request (pending until bound)."""
    limits = {"nvidia.com/gpu": str(gpus)} if gpus and milli >= 1000 else {}
    annotations = {"gpu-fraction": f"{milli / 1000:g}"} if gpus and milli < 1000 else {}
    requests = {"cpu": f"{cpu_milli}m", "memory": f"{memory_mib}Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": f"team-{int(name.rsplit('-', 1)[1]) % 8}",
            "annotations": annotations,
            "creationTimestamp": "2026-12-01T00:00:00Z",
        },
        "spec": {
            "containers": [{"name": "main", "resources": {"requests": requests, "limits": limits}}],
            "tolerations": [TOLERATION],
            "nodeSelector": {PRODUCT: model} if model else {},
        },
        "status": {"phase": "Pending"},
    }


def node_group(model: str, index: int) -> dict[str, Any]:
    template = node_object(index)
    return {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": f"pool-{index}"},
        "spec": {
            "nodeSelector": {PRODUCT: model},
            "minSize": 0,
            "maxSize": 600,
            "pricePerNodeHour": 40.0 + 10 * index,
            "template": {
                "labels": {PRODUCT: model, "nvidia.com/gpu.count": str(GPUS_PER_NODE)},
                "taints": template["spec"]["taints"],
                "allocatable": template["status"]["allocatable"],
            },
        },
    }


def export(nodes: int, shapes: list[Shape], pending: int, seed: int) -> dict[str, Any]:
    """The List: nodes, one seeded Running pod on each, groups, the pending pods."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = [node_object(i) for i in range(nodes)]
    for i in range(nodes):
        gpus = rng.choice((0, 1, 2, 4))
        running = pod_object(
            f"running-{i:06d}",
            rng.randrange(1000, 96_000, 500),
            rng.randrange(1, 512) * 1024,
            gpus,
            1000,
            None,
        )
        running["spec"]["nodeName"] = f"gpu-{i:05d}"
        running["status"]["phase"] = "Running"
        items.append(running)
    items += [node_group(model, i) for i, model in enumerate(MODELS)]
    for i in range(pending):
        cpu, memory, gpus, milli, model = shapes[i % len(shapes)]
        items.append(pod_object(f"diverse-{i:06d}", cpu, memory, gpus, milli, model))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def timed_command(path: Path) -> tuple[float, str]:
    """CPU seconds of ``manage.py evaluate`` on the export, and its output's SHA-256."""
    command = [sys.executable, "manage.py", "evaluate", str(path), "--format", "json"]
    command += ["--at", "2026-12-02T00:00:00Z"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, hashlib.sha256(done.stdout).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--shapes", default="5,800", help="comma-separated shape counts")
    parser.add_argument("--pending", type=int, default=None, help="default: nodes / 4")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time", action="store_true", help="time manage.py evaluate on each")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("directory", type=Path, nargs="?")
    args = parser.parse_args()
    if args.directory is None and not args.time:
        parser.error("give DIR, or --time to write the exports to a temporary directory")
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.directory or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        pending = args.nodes // 4 if args.pending is None else args.pending
        paths = {}
        for count in (int(c) for c in args.shapes.split(",") if c):
            path = paths[count] = directory / f"diverse-{args.nodes}-{count}.json"
            document = export(args.nodes, diverse_shapes(count, args.seed), pending, args.seed)
            path.write_text(json.dumps(document))
            print(f"wrote {path.name} ({args.nodes} nodes, {count} shapes, {pending} pending)")
        if args.time:
            _time(paths, args.nodes, pending, args.repeat)


def _time(paths: dict[int, Path], nodes: int, pending: int, repeat: int) -> None:
    best: dict[int, float] = {}
    for _ in range(repeat):
        for count, path in paths.items():
            cpu, digest = timed_command(path)
            best[count] = min(cpu, best.get(count, cpu))
            print(
                f"diverse command {nodes} nodes {count:>5} shapes {pending} pending: "
                f"manage.py evaluate {cpu:7.2f} s cpu  output {digest[:12]}"
            )
    first = next(iter(best))
    for count, cpu in best.items():
        if count != first:
            ratio = cpu / best[first]
            print(f"diverse command {nodes} nodes {count} × {first} shapes: {ratio:.2f}")


if __name__ == "__main__":
    main()
