"""Watches kept open between reads (``topology.ingest.kubewatch``): a change wakes a waiting
reader at once, a quiet cluster wakes nobody, and a watch the server ends resumes from
its resourceVersion without listing again."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from topology.ingest.kubewatch import Watchers

NOW = datetime(2026, 12, 5, tzinfo=UTC)


def _node(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "96", "memory": "512Gi", "nvidia.com/gpu": "8"}},
    }


@pytest.fixture
def watching(make_kube_source):
    """A source whose watches stay open (each re-opened after 1–2 s), read once."""
    source = make_kube_source()
    source.keep_watching(Watchers(source, min_watch_seconds=1))
    source.read(NOW)
    yield source
    source.stop_watching()


def _node_lists(kube_server) -> int:
    return sum(
        1
        for _m, path, query in kube_server.requests
        if path == "/api/v1/nodes" and "watch" not in query
    )


def test_it_wakes_a_reader_waiting_for_a_change_when_a_watched_object_changes(
    kube_server, watching
):
    kube_server.put(_node("gpu-new-1"))
    assert watching.wait_for_change(10.0) is True
    names = {o["metadata"]["name"] for _s, o in watching.read(NOW).objects if o["kind"] == "Node"}
    assert "gpu-new-1" in names


def test_it_lets_a_reader_wait_out_its_timeout_while_nothing_changes(watching):
    started = time.monotonic()
    assert watching.wait_for_change(1.5) is False
    assert time.monotonic() - started >= 1.5


def test_it_resumes_a_watch_the_server_ended_without_listing_again(kube_server, watching):
    time.sleep(4.5)  # every watch has ended (after 1-2 s) and been opened again
    kube_server.put(_node("gpu-new-2"))
    assert watching.wait_for_change(10.0) is True
    assert _node_lists(kube_server) == 1
    watch_requests = [
        q for _m, path, q in kube_server.requests if path == "/api/v1/nodes" and "watch" in q
    ]
    assert len(watch_requests) >= 3
