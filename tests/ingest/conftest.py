"""Fixtures of the ingest tests: the local list/watch server, loaded with real objects."""

from __future__ import annotations

import csv
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.kubeserver import RESOURCE_PATHS, KubeServer
from topology.files import read_objects
from topology.hardware import ModelError
from topology.sources import Backoff, KubeSource, api_client_from

DATA_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
EXAMPLES_DIR = DATA_DIR / "k8s-examples"
OPENB_DIR = DATA_DIR / "alibaba-gpu-v2023" / "csv"


def example_objects() -> list[dict[str, Any]]:
    """Every object of a served kind in shared/data/k8s-examples (files that parse)."""
    objects = []
    for folder in ("nodes", "dra", "gangs"):
        for path in sorted((EXAMPLES_DIR / folder).glob("*.yaml")):
            try:
                pairs = read_objects(path)
            except ModelError:
                continue
            objects += [o for _s, o in pairs if o.get("kind") in RESOURCE_PATHS and _named(o)]
    return objects


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


@pytest.fixture
def kube_server() -> Iterator[KubeServer]:
    server = KubeServer().start()
    try:
        server.put_many(example_objects())
        server.put_many(
            trace_node_object(r) for r in openb_rows("openb_node_list_gpu_node.csv", 40)
        )
        server.put_many(trace_pod_object(r) for r in openb_rows("openb_pod_list_default.csv", 60))
        yield server
    finally:
        server.stop()


@pytest.fixture
def make_kube_source(kube_server: KubeServer, tmp_path: Path) -> Callable[..., KubeSource]:
    """A KubeSource on the real client, configured from a kubeconfig file for the server."""
    kubeconfig = kube_server.kubeconfig(tmp_path / "kubeconfig")

    def make(**options: Any) -> KubeSource:
        options.setdefault("request_timeout_seconds", 5.0)
        options.setdefault(
            "backoff", Backoff(base_seconds=0.05, cap_seconds=0.4, random=random.Random(7))
        )
        return KubeSource(api_client_from(kubeconfig=str(kubeconfig)), **options)

    return make
