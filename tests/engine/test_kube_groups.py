"""capacityweb.io kinds: Topology, NodeGroup and Reservation, validated."""

from datetime import UTC, datetime

import pytest

from tests.builders.objects import (
    CAPACITYWEB,
    as_dicts,
    kube_object,
    node_group_object,
    reservation_object,
)
from topology.kube.parse import assign_node_groups, parse_objects

H100_POOL = (
    node_group_object("h100-pool")
    .selector({"cloud.google.com/gke-nodepool": "h100-pool"})
    .size(0, 16)
    .price(88.0)
    .template(
        {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        {"cpu": "208", "memory": "1800Gi", "pods": "110", "nvidia.com/gpu": "8"},
    )
    .placement({"topology.kubernetes.io/zone": "z1"}, 2)
)
TEAM_A = reservation_object("r").spec(
    owner={"namespaces": ["team-a"]},
    nodeNames=["gpu-a-1"],
    start="2026-12-01T00:00:00Z",
    end="2027-01-01T00:00:00Z",
    pricePerGpuHour=2.5,
)


def parse(*objects):
    return parse_objects([("groups.yaml", o) for o in as_dicts(*objects)], cluster_name="t")


def test_it_builds_the_template_node_with_gpus_like_a_real_node():
    (g,) = parse(H100_POOL).cluster.node_groups
    assert g.template.name == "h100-pool-template"
    assert g.template.gpu_count == 8
    assert g.template.gpus[0].model == "NVIDIA-H100-80GB-HBM3"
    assert g.template.labels["cloud.google.com/gke-nodepool"] == "h100-pool"
    assert g.placements[0].max_new_nodes == 2
    assert g.price_per_node_hour == 88.0


@pytest.mark.parametrize(
    ("spec", "field", "reason"),
    [
        ({"maxSize": 2, "minSize": 3}, "spec.maxSize", "must be >= minSize (3), got 2"),
        ({"minSize": -1}, "spec.minSize", "must be >= 0, got -1"),
        ({"pricePerNodeHour": -1}, "spec.pricePerNodeHour", "must be a finite number >= 0"),
        ({"template": None}, "spec.template", "required"),
    ],
)
def test_it_rejects_invalid_node_groups(spec, field, reason):
    (error,) = parse(H100_POOL.spec(**spec)).errors
    assert (error.object, error.field) == ("NodeGroup/h100-pool", field)
    assert error.reason.startswith(reason)


def test_it_reads_a_reservation_window_and_owner():
    (r,) = parse(TEAM_A).cluster.reservations
    assert r.owner_namespaces == ("team-a",)
    assert r.start == datetime(2026, 12, 1, tzinfo=UTC)
    assert r.active_at(datetime(2026, 12, 15, tzinfo=UTC))


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"end": "2026-11-01T00:00:00Z"}, "spec.end"),
        ({"owner": {}}, "spec.owner.namespaces"),
        ({"nodeSelector": {"a": "b"}}, "spec"),
        ({"nodeNames": []}, "spec"),
        ({"pricePerGpuHour": -2}, "spec.pricePerGpuHour"),
    ],
)
def test_it_rejects_invalid_reservations(spec, field):
    (error,) = parse(TEAM_A.spec(**spec)).errors
    assert error.field == field


def test_it_rejects_a_reservation_of_an_unknown_node_group():
    spec = {"nodeNames": None, "nodeGroup": {"name": "nope", "count": 4}}
    snapshot = parse(TEAM_A.spec(**spec))
    assert snapshot.errors[0].reason == "no NodeGroup named 'nope'"
    assert not snapshot.cluster.reservations


def test_it_accepts_a_reservation_of_node_group_capacity():
    spec = {"nodeNames": None, "nodeGroup": {"name": "h100-pool", "count": 4}}
    (r,) = parse(H100_POOL, TEAM_A.spec(**spec)).cluster.reservations
    assert (r.node_group.node_group, r.node_group.count) == ("h100-pool", 4)


def test_it_reads_topology_levels_outermost_first():
    levels = [{"nodeLabel": "topology.kubernetes.io/zone"}, {"nodeLabel": "example.com/rack"}]
    topology = kube_object(CAPACITYWEB, "Topology", "default").spec(levels=levels)
    cluster = parse(topology).cluster
    assert [(lv.key, lv.name) for lv in cluster.topology.levels] == [
        ("topology.kubernetes.io/zone", "zone"), ("example.com/rack", "rack"),
    ]  # fmt: skip


def test_it_uses_the_default_topology_without_a_topology_object():
    assert parse().cluster.topology.levels[1].name == "zone"


def test_it_reassigns_nodes_and_sizes_when_the_node_groups_change():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"p": "b"}}}
    cluster = parse(node, H100_POOL.named("a").spec(nodeSelector={"p": "a"})).cluster
    assert (cluster.nodes[0].node_group, cluster.node_groups[0].current_size) == (None, 0)
    replaced = parse(
        H100_POOL.named("a").spec(nodeSelector={"p": "b"}, pricePerNodeHour=3.0)
    ).cluster.node_groups
    nodes, groups = assign_node_groups(cluster.nodes, replaced)
    assert (nodes[0].node_group, nodes[0].price_per_node_hour) == ("a", 3.0)
    assert [(g.name, g.current_size) for g in groups] == [("a", 1)]
