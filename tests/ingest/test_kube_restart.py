"""The kube source through a control-plane restart (issue 45), against the local API
server doing what a restarted kube-apiserver does: 403 to everything while its RBAC
caches load, 410 for every resourceVersion from before, 429 while a custom kind's
storage initialises; and a slow shutdown refusing new requests while open watches go on.
"""

from __future__ import annotations

import contextlib
import time
from datetime import UTC, datetime

import pytest

from topology.ingest.kubekinds import DEFAULT_KINDS
from topology.ingest.kubewatch import Watchers
from topology.ingest.sourceread import SourceError, SourceUnreachable

NOW = datetime(2026, 12, 7, tzinfo=UTC)
NODE = next(k for k in DEFAULT_KINDS if k.kind == "Node")
POD = next(k for k in DEFAULT_KINDS if k.kind == "Pod")
PODGROUP = next(k for k in DEFAULT_KINDS if k.key == "PodGroup.scheduling.x-k8s.io")
HYPERNODE = next(k for k in DEFAULT_KINDS if k.key == "HyperNode.topology.volcano.sh")


def _node(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "96", "memory": "512Gi", "nvidia.com/gpu": "8"}},
    }


def _counted(read, kind: str) -> int:
    return sum(1 for _s, o in read.objects if o["kind"] == kind)


def _reads_for(source, seconds: float) -> list:
    """Every read that returned in ``seconds`` of reading every 0.1 s (refusals skipped)."""
    returned = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(SourceError):  # refused or unreachable: nothing stored
            returned.append(source.read(NOW, watch_seconds=1))
        time.sleep(0.1)
    return returned


@pytest.fixture
def watching(make_kube_source):
    """A followed source of Nodes, Pods and one custom kind: watches kept open."""
    sources = []

    def make(**options):
        source = make_kube_source(kinds=[NODE, POD, PODGROUP], **options)
        source.keep_watching(Watchers(source, min_watch_seconds=30))
        sources.append(source)
        return source

    yield make
    for source in sources:
        source.stop_watching()


def test_it_never_reads_fewer_nodes_or_pods_through_restarts_403s_and_410s(kube_server, watching):
    source = watching(forbidden_after_seconds=3.0)
    first = source.read(NOW, watch_seconds=1)
    nodes, pods = len(kube_server.state("Node")), len(kube_server.state("Pod"))
    assert (_counted(first, "Node"), _counted(first, "Pod")) == (nodes, pods)
    returned = []
    for _round in range(2):
        kube_server.restart(forbidden_seconds=1.5, initializing_seconds=2.0)
        returned += _reads_for(source, 3.0)
        kube_server.compact()  # 410 for every open watch's next resourceVersion
        kube_server.go_away()
        returned += _reads_for(source, 0.5)
        kube_server.come_back()
        returned += _reads_for(source, 1.5)
    assert returned, "no read went through after the restarts"
    assert {(_counted(r, "Node"), _counted(r, "Pod")) for r in returned} == {(nodes, pods)}
    assert source.status["Node"].state == source.status["Pod"].state == "served"


def test_it_retries_a_403_on_a_kind_it_read_before_rather_than_read_it_as_none(
    kube_server, make_kube_source
):
    source = make_kube_source(kinds=[NODE])
    source.sync(watch_seconds=1)
    kube_server.fail_next = [403]
    source.sync(watch_seconds=1)
    assert source.status["Node"].state == "served"
    assert source.store("Node") == kube_server.state("Node")
    assert len(source.stats.retry_delays_seconds) == 1


def test_it_reads_a_kind_as_forbidden_once_403_has_gone_on_past_the_window(
    kube_server, make_kube_source
):
    source = make_kube_source(kinds=[NODE, HYPERNODE], forbidden_after_seconds=1.0)
    source.sync(watch_seconds=1)
    kube_server.forbidden.add(HYPERNODE.key)  # the role loses it
    source.sync(watch_seconds=1)
    assert source.status[HYPERNODE.key].state == "failing"
    assert "403" in source.status[HYPERNODE.key].reason
    assert source.store(HYPERNODE.key) == kube_server.state(HYPERNODE.key)  # kept, not none
    time.sleep(1.1)
    source.sync(watch_seconds=1)
    assert source.status[HYPERNODE.key].state == "forbidden"
    assert HYPERNODE.key not in source.stores


def test_it_refuses_a_read_whose_nodes_a_watch_found_forbidden(kube_server, watching):
    source = watching(forbidden_after_seconds=0.5)
    source.read(NOW, watch_seconds=1)
    kube_server.forbidden.add("Node")
    kube_server.go_away()  # every open watch cut: each reconnects, Node's to a 403
    kube_server.come_back()
    deadline = time.monotonic() + 5.0
    while source.status["Node"].state == "served" and time.monotonic() < deadline:
        time.sleep(0.05)
    for _ in range(3):
        with pytest.raises(SourceError, match="Node: "):
            source.read(NOW, watch_seconds=1)
        time.sleep(0.4)


def test_it_relists_after_a_restart_and_loses_or_doubles_nothing(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE])
    source.sync(watch_seconds=1)
    kube_server.go_away()
    kube_server.put(_node("gpu-added-while-away"))
    kube_server.delete("Node", "openb-node-0003")
    kube_server.restart(forbidden_seconds=0.0, initializing_seconds=0.0)
    source.sync(watch_seconds=1)
    assert source.stats.relists_after_gone == 1
    assert source.stats.lists == 2
    assert source.store("Node") == kube_server.state("Node")


def test_it_retries_a_custom_kind_whose_storage_initialises_quietly(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE, PODGROUP])
    source.sync(watch_seconds=1)
    kube_server.restart(forbidden_seconds=0.0, initializing_seconds=0.5)
    source.sync(watch_seconds=1)
    assert source.status[PODGROUP.key].state == "served"
    assert source.store(PODGROUP.key) == kube_server.state(PODGROUP.key)
    assert source.stats.errors == 0
    assert min(source.stats.retry_delays_seconds) >= 1.0  # the retryAfterSeconds it asked


def test_it_keeps_a_custom_kind_still_initialising_after_its_retries(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE, PODGROUP])
    source.sync(watch_seconds=1)
    source.backoff.max_attempts = 2
    kube_server.restart(forbidden_seconds=0.0, initializing_seconds=30.0)
    source.sync(watch_seconds=1)
    status = source.status[PODGROUP.key]
    assert status.state == "failing"
    assert "HTTP 429 Too Many Requests: storage is (re)initializing ×2 (2 attempts)" in (
        status.reason
    )
    assert source.store(PODGROUP.key) == kube_server.state(PODGROUP.key)  # never read as none


def test_it_names_each_failure_as_it_was(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE, PODGROUP])
    source.sync(watch_seconds=1)
    kube_server.fail_next = [410, 503, 503, 503, 503, 503]
    source.catch_up(PODGROUP, watch_seconds=1)
    assert source.status[PODGROUP.key].reason == (
        "410 Gone (resourceVersion too old: relisted), then HTTP 503 Service Unavailable: "
        "scripted failure ×5 (6 attempts)"
    )


def test_it_says_unreachable_at_once_when_new_requests_fail_while_watches_stay_open(
    kube_server, watching
):
    source = watching()
    source.read(NOW, watch_seconds=1)
    _wait_for_a_long_node_watch(kube_server)  # the watch that must go on delivering
    kube_server.shut_down_slowly()
    started = time.monotonic()
    with pytest.raises(SourceUnreachable, match="does not answer new requests") as raised:
        source.read(NOW, watch_seconds=1)
    assert time.monotonic() - started < 1.0
    assert "Connection" in str(raised.value)
    kube_server.put(_node("gpu-through-an-open-watch"))  # the open watches still deliver
    deadline = time.monotonic() + 5.0
    while "gpu-through-an-open-watch" not in str(source.store("Node")):
        assert time.monotonic() < deadline, "the open watch stopped delivering"
        time.sleep(0.05)


def _wait_for_a_long_node_watch(kube_server) -> None:
    """Until a watch thread's Node watch (30 s and more) is open: on a loaded machine the
    threads may still be between their first short watches when the read returns."""
    deadline = time.monotonic() + 10.0
    while not any(
        path == "/api/v1/nodes"
        and query.get("watch") in ("true", "1")
        and float(query.get("timeoutSeconds") or 0) >= 30
        for _method, path, query in list(kube_server.requests)
    ):
        assert time.monotonic() < deadline, "no long Node watch was opened"
        time.sleep(0.05)


def test_it_wakes_a_waiting_follower_when_new_requests_fail(kube_server, watching):
    source = watching(probe_every_seconds=0.3)
    source.read(NOW, watch_seconds=1)
    kube_server.shut_down_slowly()
    started = time.monotonic()
    assert source.wait_for_change(30.0) is True
    assert time.monotonic() - started < 2.0


def test_a_kind_not_served_stays_not_served_through_a_restarts_403s(kube_server, make_kube_source):
    """A restarted kube-apiserver authorizes before it routes, so a CRD not installed
    answers 403 too while the RBAC caches load; that is no news about the kind (the CI
    run of stop 47 stored a third snapshot: the kind turned forbidden, then back)."""
    kube_server.unserved.add(HYPERNODE.key)
    source = make_kube_source(
        kinds=[NODE, HYPERNODE], forbidden_after_seconds=5.0, recheck_every_passes=1
    )
    source.sync(watch_seconds=1)
    assert source.status[HYPERNODE.key].state == "not served"
    kube_server.restart(forbidden_seconds=1.0, initializing_seconds=0.0)
    with contextlib.suppress(SourceUnreachable):  # Node's retries may outlast the window
        source.sync(watch_seconds=1)  # asks the kind again, inside the 403 window
    assert source.status[HYPERNODE.key].state != "forbidden"
    time.sleep(1.0)
    source.sync(watch_seconds=1)
    assert source.status[HYPERNODE.key].state == "not served"
    assert source.status["Node"].state == "served"
