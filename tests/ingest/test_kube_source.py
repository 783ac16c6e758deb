"""The kube source drives the real kubernetes client against a local list/watch server."""

from __future__ import annotations

import copy
import threading
import time
from datetime import UTC, datetime

import pytest

from tests.ingest.kubeserver import RESOURCE_PATHS
from topology.ingest.kubeapi import POOL_HEADROOM, api_client_from
from topology.ingest.kubekinds import DEFAULT_KINDS, WatchedKind
from topology.ingest.kubeslim import slimmed
from topology.ingest.kubesource import KubeSource
from topology.ingest.sourceread import SourceUnreachable

NODE = next(k for k in DEFAULT_KINDS if k.kind == "Node")
POD = next(k for k in DEFAULT_KINDS if k.kind == "Pod")


def _later(seconds: float, action) -> threading.Timer:
    timer = threading.Timer(seconds, action)
    timer.start()
    return timer


def _node(name: str, gpus: str = "8") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "96", "memory": "512Gi", "nvidia.com/gpu": gpus}},
    }


def test_it_lists_every_served_kind_into_the_store(kube_server, make_kube_source):
    source = make_kube_source()
    source.sync(watch_seconds=1)
    for kind in RESOURCE_PATHS:
        if kind == "Event":  # listed once per reporting component
            continue
        kept = {uid: slimmed(copy.deepcopy(o)) for uid, o in kube_server.state(kind).items()}
        assert source.store(kind) == kept, kind  # less what no parse reads
    events = source.store("Event[source=cluster-autoscaler]") | source.store(
        "Event[source=karpenter]"
    )
    assert events == {
        uid: o
        for uid, o in kube_server.state("Event").items()
        if o["source"]["component"] in ("cluster-autoscaler", "karpenter")
    }
    assert len(source.stores["Node"]) == 40
    assert len(source.stores["ResourceSlice.resource.k8s.io"]) >= 1
    assert len(source.stores["PodGroup.scheduling.x-k8s.io"]) >= 1
    assert source.unavailable == set()


def test_it_gives_list_items_their_kind_and_api_version(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE])
    source.sync(watch_seconds=1)
    kinds = {(o["kind"], o["apiVersion"]) for _s, o in source.objects()}
    assert kinds == {("Node", "v1")}


def test_it_pages_through_lists(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE], list_page_size=7)
    source.relist(NODE)
    list_calls = [q for _m, p, q in kube_server.requests if p == "/api/v1/nodes"]
    assert len(list_calls) > 5
    assert source.store("Node") == kube_server.state("Node")


def test_it_applies_added_modified_and_deleted_events(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE])
    source.relist(NODE)
    kube_server.put(_node("gpu-new-1"))
    kube_server.put(_node("openb-node-0000", gpus="4"))
    kube_server.delete("Node", "openb-node-0001")
    events = source.watch(NODE, watch_seconds=1)
    assert events == 3
    names = {o["metadata"]["name"]: o for o in source.store("Node").values()}
    assert "gpu-new-1" in names
    assert "openb-node-0001" not in names
    assert names["openb-node-0000"]["status"]["allocatable"]["nvidia.com/gpu"] == "4"
    assert source.store("Node") == kube_server.state("Node")


def test_it_applies_events_that_arrive_while_watching(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE])
    source.relist(NODE)
    _later(0.3, lambda: kube_server.put(_node("gpu-late")))
    source.watch(NODE, watch_seconds=2)
    assert any(o["metadata"]["name"] == "gpu-late" for o in source.store("Node").values())


def test_it_resumes_from_the_resource_version_a_bookmark_gave(kube_server, make_kube_source):
    source = make_kube_source(kinds=[POD])
    source.relist(POD)
    kube_server.put(_node("unrelated-change"))  # advances the cluster-wide resourceVersion
    source.watch(POD, watch_seconds=1)
    assert source.stats.bookmarks >= 1
    assert source.resource_versions["Pod"] == str(kube_server.resource_version)
    source.watch(POD, watch_seconds=1)
    watches = [q for _m, p, q in kube_server.requests if p == "/api/v1/pods" and "watch" in q]
    assert watches[-1]["resourceVersion"] == str(kube_server.resource_version)
    assert source.stats.lists == 1


def test_it_relists_after_410_gone_without_losing_or_duplicating_objects(
    kube_server, make_kube_source
):
    source = make_kube_source(kinds=[NODE])
    source.relist(NODE)
    kube_server.misbehave("Node", "gone", after_events=2)
    for index in range(5):
        kube_server.put(_node(f"gpu-burst-{index}"))
    kube_server.delete("Node", "openb-node-0002")
    source.catch_up(NODE, watch_seconds=1)
    assert source.stats.relists_after_gone == 1
    assert source.stats.lists == 2
    assert source.stats.retry_delays_seconds == []  # a relist is not an error to back off from
    assert source.store("Node") == kube_server.state("Node")
    names = [o["metadata"]["name"] for _s, o in source.objects()]
    assert len(names) == len(set(names))


def test_it_reconnects_within_the_backoff_bound_after_a_dropped_connection(
    kube_server, make_kube_source
):
    source = make_kube_source(kinds=[NODE])
    source.relist(NODE)
    kube_server.misbehave("Node", "drop", after_events=1)
    kube_server.put(_node("gpu-before-drop"))
    kube_server.put(_node("gpu-after-drop"))
    source.catch_up(NODE, watch_seconds=1)
    assert source.stats.errors == 1
    assert len(source.stats.retry_delays_seconds) == 1
    assert 0 <= source.stats.retry_delays_seconds[0] <= source.backoff.bound(1)
    assert source.stats.lists == 1  # resumed from its resourceVersion, no relist
    assert source.store("Node") == kube_server.state("Node")


def test_it_gives_up_a_read_when_a_slow_server_exceeds_the_request_timeout(
    kube_server, make_kube_source
):
    source = make_kube_source(kinds=[NODE], request_timeout_seconds=0.3)
    source.backoff.max_attempts = 2
    kube_server.stall_seconds = 5.0
    started = time.monotonic()
    with pytest.raises(SourceUnreachable, match=r"Node: .*ReadTimeoutError.*\(2 attempts\)"):
        source.sync(watch_seconds=1)
    assert time.monotonic() - started < 2.0
    assert source.status["Node"].state == "failing"


def test_it_retries_a_server_error_then_succeeds(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE])
    kube_server.fail_next = [500, 503]
    source.catch_up(NODE, watch_seconds=1)
    assert source.stats.errors == 2
    assert source.store("Node") == kube_server.state("Node")


def test_it_leaves_out_kinds_the_server_does_not_serve(kube_server, make_kube_source):
    kube_server.unserved.add("PodGroup.scheduling.x-k8s.io")
    source = make_kube_source()
    source.sync(watch_seconds=1)
    source.sync(watch_seconds=1)
    assert source.unavailable == {"PodGroup.scheduling.x-k8s.io"}
    read = source.read(datetime.now(UTC), watch_seconds=1)
    assert read.unavailable == ("PodGroup.scheduling.x-k8s.io",)
    groups = {o["apiVersion"] for _s, o in read.objects or [] if o["kind"] == "PodGroup"}
    assert not any(g.startswith("scheduling.x-k8s.io/") for g in groups)
    podgroup_calls = [
        p
        for _m, p, _q in kube_server.requests
        if p.endswith("scheduling.x-k8s.io/v1alpha1/podgroups")
    ]
    assert len(podgroup_calls) == 1


def test_it_only_reads_from_the_cluster(kube_server, make_kube_source):
    source = make_kube_source()
    source.sync(watch_seconds=1)
    assert {method for method, _p, _q in kube_server.requests} == {"GET"}


def test_it_sends_timeouts_on_every_call(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE, POD])
    source.sync(watch_seconds=1)
    assert all("timeoutSeconds" in query for _m, _p, query in kube_server.requests)


def test_it_watches_a_custom_resource_through_the_custom_objects_api(kube_server, make_kube_source):
    podgroups = next(k for k in DEFAULT_KINDS if k.key == "PodGroup.scheduling.x-k8s.io")
    source = make_kube_source(kinds=[podgroups])
    source.relist(podgroups)
    group = dict(next(iter(kube_server.state("PodGroup.scheduling.x-k8s.io").values())))
    group["metadata"] = {**group["metadata"], "name": "gang-new"}
    kube_server.put(group)
    assert source.watch(podgroups, watch_seconds=1) == 1
    assert isinstance(podgroups, WatchedKind)
    key = "PodGroup.scheduling.x-k8s.io"
    assert source.store(key) == kube_server.state(key)


def test_it_keeps_a_connection_per_watched_kind_instead_of_discarding_them(
    kube_server, make_kube_source, caplog
):
    source = make_kube_source()
    assert source.api_client.configuration.connection_pool_maxsize == (
        len(DEFAULT_KINDS) + POOL_HEADROOM
    )
    with caplog.at_level("WARNING", logger="urllib3.connectionpool"):
        source.sync(watch_seconds=1)
        source.sync(watch_seconds=1)
    assert not [r for r in caplog.records if "Connection pool is full" in r.getMessage()]


def test_it_trims_a_token_file_ending_in_a_newline_as_client_go_does(kube_server, tmp_path):
    """client-go transport/token_source.go: fileTokenSource.Token → strings.TrimSpace."""
    (tmp_path / "token").write_text("read-only-token\n")  # as `echo TOKEN > file` writes
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        kube_server.kubeconfig(tmp_path / "base")
        .read_text()
        .replace('"token": "read-only"', '"tokenFile": "token"')
    )
    source = KubeSource(api_client_from(kubeconfig=str(kubeconfig)), kinds=[NODE])
    source.sync(watch_seconds=1)
    assert kube_server.authorizations == {"Bearer read-only-token"}
    assert source.status["Node"].state == "served"


def test_it_keeps_its_generation_through_quiet_reads_and_moves_it_on_a_change(
    kube_server, make_kube_source
):
    source = make_kube_source(kinds=[NODE, POD])
    first = source.read(None, watch_seconds=1).generation
    assert source.read(None, watch_seconds=1).generation == first  # bookmarks only
    kube_server.put(_node("gpu-changed"))
    assert source.read(None, watch_seconds=1).generation != first


def test_it_keeps_pods_without_their_managed_fields(kube_server, make_kube_source):
    from bench.realpods import running_pod

    kube_server.put(running_pod(3, "openb-node-0001"))
    source = make_kube_source(kinds=[POD])
    source.sync(watch_seconds=1)
    (kept,) = [o for o in source.store("Pod").values() if o["metadata"]["name"].startswith("app-")]
    assert "managedFields" not in kept["metadata"]
    assert "containerStatuses" not in kept["status"]
    assert kept["spec"]["containers"][0]["resources"]["limits"] == {
        "cpu": "500m",
        "memory": "256Mi",
    }
