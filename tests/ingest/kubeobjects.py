"""Real Kubernetes objects for the ingest tests: k8s-examples files and openb trace rows."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from tests.ingest.kubeserver import resource_key
from topology.ingest.files import read_objects
from topology.model.hardware import ModelError

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
EXAMPLES_DIR = DATA_DIR / "k8s-examples"
OPENB_DIR = DATA_DIR / "alibaba-gpu-v2023" / "csv"


# The kinds of the example files the default server is loaded with.
EXAMPLE_KINDS = (
    "Node",
    "Pod",
    "ResourceSlice.resource.k8s.io",
    "ResourceClaim.resource.k8s.io",
    "DeviceClass.resource.k8s.io",
    "PodGroup.scheduling.x-k8s.io",
)


def example_objects() -> list[dict[str, Any]]:
    """Every object of an EXAMPLE_KINDS kind in data/k8s-examples (files that parse)."""
    objects = []
    for folder in ("nodes", "dra", "gangs"):
        for path in sorted((EXAMPLES_DIR / folder).glob("*.yaml")):
            try:
                pairs = read_objects(path)
            except ModelError:
                continue
            objects += [o for _s, o in pairs if _example(o) and _named(o)]
    return objects


def _example(obj: dict[str, Any]) -> bool:
    return bool(obj.get("kind")) and resource_key(obj) in EXAMPLE_KINDS


def _named(obj: dict[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("name"))


def trace_node_object(row: dict[str, str]) -> dict[str, Any]:
    """An openb node row as the Node object a device-plugin cluster would serve."""
    allocatable = {
        "cpu": f"{row['cpu_milli']}m",
        "memory": f"{row['memory_mib']}Mi",
        "pods": "110",
        "nvidia.com/gpu": row["gpu"],
    }
    labels = {"kubernetes.io/hostname": row["sn"], "nvidia.com/gpu.product": row["model"]}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": row["sn"], "labels": labels},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def trace_pod_object(row: dict[str, str]) -> dict[str, Any]:
    """An openb pod row as a pending Pod requesting whole GPUs."""
    requests = {"cpu": f"{row['cpu_milli']}m", "memory": f"{row['memory_mib']}Mi"}
    if int(row["num_gpu"]):
        requests["nvidia.com/gpu"] = row["num_gpu"]
    container = {"name": "main", "image": "trace", "resources": {"requests": requests}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": "openb", "name": row["name"]},
        "spec": {"containers": [container]},
        "status": {"phase": "Pending"},
    }


def openb_rows(name: str, limit: int) -> list[dict[str, str]]:
    with (OPENB_DIR / name).open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return rows[:limit]


# The DESIGN.md examples of the project kinds.
NODE_GROUP = {
    "apiVersion": "capacityweb.io/v1alpha1",
    "kind": "NodeGroup",
    "metadata": {"name": "h100-pool"},
    "spec": {
        "nodeSelector": {"cloud.google.com/gke-nodepool": "h100-pool"},
        "minSize": 0,
        "maxSize": 16,
        "pricePerNodeHour": 88.0,
        "template": {
            "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
            "taints": [],
            "allocatable": {"cpu": "208", "memory": "1800Gi", "pods": "110", "nvidia.com/gpu": "8"},
        },
        "placement": [
            {"labels": {"topology.kubernetes.io/zone": "z1"}, "maxNewNodes": 2},
        ],
    },
}
RESERVATION = {
    "apiVersion": "capacityweb.io/v1alpha1",
    "kind": "Reservation",
    "metadata": {"name": "team-a-h100"},
    "spec": {
        "owner": {"namespaces": ["team-a"]},
        "nodeNames": ["openb-node-0000"],
        "start": "2026-12-01T00:00:00Z",
        "end": "2027-01-01T00:00:00Z",
        "pricePerGpuHour": 2.5,
    },
}
