"""Fixtures of the ingest tests: the local list/watch server, loaded with real objects."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.kubeobjects import (
    example_objects,
    openb_rows,
    trace_node_object,
    trace_pod_object,
)
from tests.ingest.kubeserver import KubeServer
from topology.ingest.kubeapi import Backoff, api_client_from
from topology.ingest.kubesource import KubeSource


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
