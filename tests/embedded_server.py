"""`make run` inside a test: `rundemo` on a SQLite database of its own, and the CLI beside it.

    test ──► migrate (SQLite file in tmp) ──► rundemo: Daphne + embedded worker + beat
      │                                           ▲  (in-memory broker and channel layer)
      └─► `manage.py ingest ...` in other processes, on the same SQLite file

No DATABASE_URL/REDIS_URL: the zero-config settings `make run` has, so what these
tests see is what a user of `make run` with a second shell sees.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

from tests.conftest import environment_without_services, run_manage
from tests.servers import free_port, manage_py_server

DEMO_PASSWORD = "embedded-demo-password-1"
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def sqlite_environment(directory: Path, **overrides: str) -> dict[str, str]:
    """The zero-config environment on a migrated SQLite file in ``directory``."""
    environment = environment_without_services(
        **{
            "DATABASE_URL": f"sqlite:///{directory / 'db.sqlite3'}",
            "DEMO_PASSWORD": DEMO_PASSWORD,
            **overrides,
        }
    )
    migrated = run_manage("migrate", "-v0", environment=environment, timeout_seconds=300)
    assert migrated.returncode == 0, migrated.stderr
    return environment


@contextmanager
def rundemo(environment: Mapping[str, str], log_path: Path) -> Iterator[str]:
    """`manage.py rundemo` (what `make run` ends in) on a free port; yields its base URL."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    arguments = ["rundemo", "--port", str(port)]
    with manage_py_server(arguments, environment, log_path, f"{base_url}/health/live"):
        yield base_url


def ingest(
    environment: Mapping[str, str], cluster: str, *arguments: str
) -> subprocess.CompletedProcess[str]:
    """`manage.py ingest CLUSTER ...` from a second shell."""
    return run_manage("ingest", cluster, *arguments, environment=environment, timeout_seconds=300)


def signed_in(base_url: str) -> requests.Session:
    """A session logged in as the demo user `rundemo` creates (through the login form)."""
    session = requests.Session()
    page = session.get(f"{base_url}/accounts/login/", timeout=30)
    match = CSRF_FIELD.search(page.text)
    assert match is not None, page.text[:500]
    response = session.post(
        f"{base_url}/accounts/login/",
        data={"username": "demo", "password": DEMO_PASSWORD, "csrfmiddlewaretoken": match[1]},
        headers={"Referer": f"{base_url}/accounts/login/"},
        allow_redirects=False,
        timeout=30,
    )
    assert response.status_code == 302, response.text[:500]
    return session


def gpu_cluster_objects(*, nodes: int, pending: int, tag: str) -> dict[str, Any]:
    """A kubectl List: ``nodes`` 8-GPU nodes, one 4-GPU pod running on each, ``pending``
    16-GPU pods that fit no node; ``tag`` labels every node (a new tag is new content)."""
    items: list[dict[str, Any]] = []
    for index in range(nodes):
        name = f"gpu-{index:04d}"
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "topology.kubernetes.io/zone": f"z{index % 3}",
                        "nvidia.com/gpu.product": "NVIDIA-L4",
                        "capacityweb.io/test-tag": tag,
                    },
                },
                "status": {
                    "allocatable": {
                        "cpu": "64",
                        "memory": "512Gi",
                        "pods": "110",
                        "nvidia.com/gpu": "8",
                    }
                },
            }
        )
        items.append(_pod(f"run-{index:04d}", gpus=4, node=name))
    items.extend(_pod(f"wait-{index:03d}", gpus=16, node=None) for index in range(pending))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _pod(name: str, *, gpus: int, node: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}]
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def write_cluster(path: Path, **shape: Any) -> None:
    path.write_text(json.dumps(gpu_cluster_objects(**shape)))
