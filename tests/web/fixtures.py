"""Real evaluations for the dashboard tests: scenario files through ingest and evaluate.

A scenario (tests/scenarios/*.yaml) is loaded the way `ingest --source files`
loads it: configuration objects (NodeGroup, Reservation) stored, the snapshot
parsed and stored, then the real engine evaluates it.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT

SCENARIOS_DIR = REPO_ROOT / "tests" / "scenarios"
TAKEN_AT = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
SCRIPT_POD_NAME = "<script>alert(1)</script>"
CONFIGURATION_KINDS = {"NodeGroup", "Reservation", "Topology"}


def scenario_objects(name: str) -> list[tuple[str, dict[str, Any]]]:
    from topology.ingest.files import read_objects

    return read_objects(SCENARIOS_DIR / f"{name}.yaml")


def running_pod(name: str, namespace: str, node: str, gpus: int) -> tuple[str, dict[str, Any]]:
    """A bound pod, as `kubectl get pods -o json` shows one."""
    requests = {"cpu": "1", "nvidia.com/gpu": str(gpus)}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"requests": requests}}],
        },
        "status": {"phase": "Running"},
    }
    return ("test", pod)


def gpu_node(name: str, gpus: int) -> tuple[str, dict[str, Any]]:
    """A ready node with ``gpus`` whole GPUs and no topology labels."""
    allocatable = {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.product": "NVIDIA-L4"}},
        "status": {"allocatable": allocatable},
    }
    return ("test", node)


def ingest_and_evaluate(
    cluster: Any,
    objects: list[tuple[str, dict[str, Any]]],
    *,
    taken_at: datetime = TAKEN_AT,
) -> Any:
    """Store configuration, ingest the snapshot and store its evaluation (all real services)."""
    from recommender.services import store_evaluation
    from reservations import services as reservation_services
    from topology import services

    configuration = [o for o in objects if o[1].get("kind") in CONFIGURATION_KINDS]
    if configuration:
        reservation_services.load_configuration(cluster=cluster, objects=configuration)
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=taken_at, objects=copy.deepcopy(objects)
    )
    assert snapshot is not None, "the scenario's content was already ingested"
    return store_evaluation(snapshot=snapshot)


def make_cluster(name: str = "web-test") -> Any:
    from topology.models import Cluster

    return Cluster.objects.create(name=name, source_kind="files", source_settings={})


def path_of(name: str) -> Path:
    return SCENARIOS_DIR / f"{name}.yaml"
