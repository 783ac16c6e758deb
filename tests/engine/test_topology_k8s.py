"""Topology levels from Kueue, KAI and Volcano objects; the project kind only as a fallback."""

from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import Topology

BLOCK = "cloud.provider.com/topology-block"
RACK = "cloud.provider.com/topology-rack"
HOST = "kubernetes.io/hostname"


def parse(*objects):
    snapshot = parse_objects([("test", o) for o in objects], cluster_name="t")
    assert snapshot.errors == ()
    return snapshot


def keys(snapshot):
    return [level.key for level in snapshot.cluster.topology.levels]


def levels_object(api_version, name, *labels):
    return {
        "apiVersion": api_version,
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": label} for label in labels]},
    }


def hypernode(name, tier, *members):
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "members": list(members)},
    }


def by_label(key, value):
    return {"type": "Node", "selector": {"labelMatch": {"matchLabels": {key: value}}}}


def test_it_takes_the_levels_of_the_kueue_topology_in_the_tas_sample(shared_data):
    path = shared_data / "k8s-examples" / "gangs" / "kueue-tas-sample-gpu-queues.yaml"
    snapshot = parse_objects(read_objects(path), cluster_name="t")
    assert keys(snapshot) == [BLOCK, RACK, HOST]
    assert snapshot.cluster.topology_source == "Topology/default (kueue.x-k8s.io)"


def test_it_takes_a_kai_topology():
    snapshot = parse(levels_object("kai.scheduler/v1alpha1", "kai", BLOCK, HOST))
    assert keys(snapshot) == [BLOCK, HOST]
    assert snapshot.cluster.topology_source == "Topology/kai (kai.scheduler)"


def test_it_prefers_the_clusters_topology_to_the_project_kind_and_says_so():
    project = levels_object("capacityweb.io/v1alpha1", "mine", "topology.kubernetes.io/zone")
    kueue = levels_object("kueue.x-k8s.io/v1beta1", "tas", BLOCK, RACK)
    snapshot = parse(project, kueue)
    assert keys(snapshot) == [BLOCK, RACK]
    assert (
        "Topology (capacityweb.io): not used, levels come from Topology/tas (kueue.x-k8s.io)"
        in snapshot.notes
    )


def test_it_uses_the_project_kind_where_the_cluster_defines_no_topology():
    snapshot = parse(levels_object("capacityweb.io/v1alpha1", "mine", RACK, HOST))
    assert keys(snapshot) == [RACK, HOST]
    assert snapshot.cluster.topology_source == "Topology (capacityweb.io)"


def test_it_falls_back_to_the_default_levels():
    snapshot = parse()
    assert snapshot.cluster.topology == Topology.default()
    assert snapshot.cluster.topology_source == "default"


def test_it_maps_label_based_hypernode_tiers_to_levels_outermost_first():
    snapshot = parse(
        hypernode("rack-a", 1, by_label(RACK, "a")),
        hypernode("rack-b", 1, by_label(RACK, "b")),
        hypernode("block-1", 2, by_label(BLOCK, "1")),
    )
    assert keys(snapshot) == [BLOCK, RACK]
    assert snapshot.cluster.topology_source == "HyperNode tiers (topology.volcano.sh)"


def test_it_reports_hypernodes_listing_nodes_by_name_or_hypernode_as_unsupported():
    by_name = {"type": "Node", "selector": {"exactMatch": {"name": "node1"}}}
    by_regex = {"type": "Node", "selector": {"regexMatch": {"pattern": "gpu-.*"}}}
    snapshot = parse(
        hypernode("nvl-0", 1, by_name),
        hypernode("nvl-1", 1, by_regex),
        hypernode("roce", 2, {"type": "HyperNode", "selector": {"exactMatch": {"name": "nvl-0"}}}),
    )
    assert snapshot.cluster.topology_source == "default"
    assert snapshot.notes == (
        "HyperNode/roce: tier 2 unsupported: members are HyperNodes"
        " (a domain of domains, not a node label)",
        "HyperNode/nvl-0: tier 1 unsupported: nodes listed by name (not a node label)",
        "HyperNode/nvl-1: tier 1 unsupported: nodes chosen by a name regex (not a node label)",
    )


def test_it_reports_the_design_doc_hypernodes_without_apiversion_as_ignored(shared_data):
    path = (
        shared_data / "k8s-examples" / "gangs" / "volcano-design-hypernode-roce-nvlink-tiers.yaml"
    )
    snapshot = parse_objects(read_objects(path), cluster_name="t")
    # `version:` instead of apiVersion, `name:` outside metadata: not an API object
    assert snapshot.ignored == {"HyperNode ()": 6}
    assert snapshot.cluster.topology_source == "default"
