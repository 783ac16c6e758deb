"""Per-kind status of the kube source against the local API server: a kind the role may
not list (403), a CRD installed while the source runs, an API server that goes away."""

from __future__ import annotations

import pytest

from topology.ingest.kubekinds import DEFAULT_KINDS
from topology.ingest.sourceread import SourceError, SourceUnreachable

HYPERNODE = "HyperNode.topology.volcano.sh"
PODGROUP = "PodGroup.scheduling.x-k8s.io"
NODE = next(k for k in DEFAULT_KINDS if k.kind == "Node")
POD = next(k for k in DEFAULT_KINDS if k.kind == "Pod")


def _calls_to(kube_server, plural_path: str) -> int:
    return sum(1 for _m, path, _q in kube_server.requests if path.endswith(plural_path))


def test_it_reads_a_forbidden_kind_as_none_and_names_the_rule_to_add(kube_server, make_kube_source):
    kube_server.forbidden.add(HYPERNODE)
    source = make_kube_source()
    read = source.read(None, watch_seconds=1)
    status = source.status[HYPERNODE]
    assert status.state == "forbidden"
    assert 'cannot list resource "hypernodes" in API group "topology.volcano.sh"' in status.reason
    assert 'add ClusterRole: apiGroups: ["topology.volcano.sh"], resources: [hypernodes]' in (
        status.reason
    )
    assert read.kinds[HYPERNODE]["state"] == "forbidden"
    assert not any(o["kind"] == "HyperNode" for _s, o in read.objects or [])


def test_it_never_retries_a_403_as_transient(kube_server, make_kube_source):
    kube_server.forbidden.add(HYPERNODE)
    source = make_kube_source()
    source.sync(watch_seconds=1)
    assert _calls_to(kube_server, "topology.volcano.sh/v1alpha1/hypernodes") == 1
    assert source.stats.retry_delays_seconds == []


def test_it_reads_every_other_kind_when_one_is_forbidden(kube_server, make_kube_source):
    kube_server.forbidden.add(HYPERNODE)
    source = make_kube_source()
    source.sync(watch_seconds=1)
    served = {key for key, status in source.status.items() if status.state == "served"}
    assert served == set(source.status) - {HYPERNODE}
    assert source.store("Node") == kube_server.state("Node")


def test_it_refuses_a_read_without_nodes_rather_than_an_empty_cluster(
    kube_server, make_kube_source
):
    kube_server.forbidden.add("Node")
    source = make_kube_source(kinds=[NODE, POD])
    with pytest.raises(SourceError, match=r"Node: forbidden: nodes is forbidden"):
        source.sync(watch_seconds=1)


def test_it_picks_up_a_crd_installed_while_it_runs_on_the_next_pass(kube_server, make_kube_source):
    kube_server.unserved.add(PODGROUP)
    source = make_kube_source()  # the every-5-passes recheck would take 4 more passes
    source.sync(watch_seconds=1)
    assert source.status[PODGROUP].state == "not served"
    kube_server.unserved.discard(PODGROUP)  # the CRD is installed
    source.sync(watch_seconds=1)
    assert source.status[PODGROUP].state == "served"
    assert source.store(PODGROUP) == kube_server.state(PODGROUP)
    assert len(source.stores[PODGROUP]) >= 1


def test_it_does_not_list_a_kind_discovery_does_not_list(kube_server, make_kube_source):
    kube_server.unserved.add(PODGROUP)
    source = make_kube_source()
    source.sync(watch_seconds=1)
    before = _calls_to(kube_server, "scheduling.x-k8s.io/v1alpha1/podgroups")
    for _ in range(3):
        source.sync(watch_seconds=1)
    assert _calls_to(kube_server, "scheduling.x-k8s.io/v1alpha1/podgroups") == before
    assert source.status[PODGROUP].state == "not served"


def test_a_failing_discovery_leaves_the_recheck_every_few_passes(kube_server, make_kube_source):
    kube_server.unserved.add(PODGROUP)
    source = make_kube_source(recheck_every_passes=3)
    source.sync(watch_seconds=1)
    kube_server.unserved.discard(PODGROUP)
    kube_server.discovery_fails = True
    source.sync(watch_seconds=1)
    assert PODGROUP not in source.stores
    source.sync(watch_seconds=1)
    assert source.status[PODGROUP].state == "served"


def test_it_picks_up_a_kind_the_role_allows_later(kube_server, make_kube_source):
    kube_server.forbidden.add(HYPERNODE)
    source = make_kube_source(recheck_every_passes=2)
    source.sync(watch_seconds=1)
    kube_server.forbidden.discard(HYPERNODE)  # the ClusterRole is re-applied
    source.sync(watch_seconds=1)
    assert source.status[HYPERNODE].state == "served"


def test_it_keeps_its_state_while_the_api_server_is_away(kube_server, make_kube_source):
    source = make_kube_source(kinds=[NODE, POD])
    source.sync(watch_seconds=1)
    stores = {key: dict(store) for key, store in source.stores.items()}
    versions = dict(source.resource_versions)
    kube_server.go_away()
    with pytest.raises(SourceUnreachable, match="2 of 2 kinds unreachable") as raised:
        source.sync(watch_seconds=1)
    assert raised.value.kinds["Node"]["state"] == "failing"
    assert "Connection refused" in raised.value.kinds["Node"]["reason"]
    assert source.stores == stores
    assert source.resource_versions == versions


def test_it_resumes_from_its_resource_version_when_the_api_server_returns(
    kube_server, make_kube_source
):
    source = make_kube_source(kinds=[NODE])
    source.sync(watch_seconds=1)
    kube_server.go_away()
    with pytest.raises(SourceUnreachable):
        source.sync(watch_seconds=1)
    kube_server.come_back()
    kube_server.delete("Node", "openb-node-0003")
    source.sync(watch_seconds=1)
    assert source.stats.lists == 1  # watched on from where it was, no relist
    assert source.store("Node") == kube_server.state("Node")
    assert source.status["Node"].state == "served"
