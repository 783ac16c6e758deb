"""Reservations read from the clouds' own exports (AWS, GCP, Karpenter EC2NodeClass).

The export fixtures are written in the shape the CLIs print (the EC2 API's
CapacityReservation fields; gcloud's compute#reservation), with GPU types.
"""

from datetime import UTC, datetime
from pathlib import Path

from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

FIXTURES = Path(__file__).parent / "fixtures"


def eks_node(name, zone="us-east-1a", kind="p4d.24xlarge", **labels):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "eks.amazonaws.com/nodegroup": "p4d-ng",
                "node.kubernetes.io/instance-type": kind,
                "topology.kubernetes.io/region": zone[:-1],
                "topology.kubernetes.io/zone": zone,
                **labels,
            },
        },
        "status": {"allocatable": {"cpu": "95", "memory": "1000Gi", "nvidia.com/gpu": 8}},
    }


def gke_node(name):
    node = eks_node(name, zone="us-central1-a", kind="a2-highgpu-8g")
    labels = node["metadata"]["labels"]
    del labels["eks.amazonaws.com/nodegroup"]
    labels["cloud.google.com/gke-nodepool"] = "a2-pool"
    labels["topology.kubernetes.io/region"] = "us-central1"
    return node


def parse_with(export, *nodes):
    objects = read_objects(FIXTURES / export) + [("nodes.yaml", n) for n in nodes]
    return parse_objects(objects, cluster_name="t")


def test_it_reads_an_aws_export_into_objects():
    objects = read_objects(FIXTURES / "aws-describe-capacity-reservations.json")
    assert [o["kind"] for _, o in objects] == ["CapacityReservation"] * 3
    assert objects[0][1]["metadata"]["name"] == "cr-0a1b2c3d4e5f60001"


def test_an_on_demand_reservation_splits_into_used_and_unused_capacity():
    snapshot = parse_with("aws-describe-capacity-reservations.json", eks_node("a"), eks_node("b"))
    assert snapshot.errors == ()
    by_name = {r.name: r for r in snapshot.cluster.reservations}
    used = by_name["cr-0a1b2c3d4e5f60001"]
    # 4 reserved, 1 available: 3 in use, by the nodes of that type in that zone
    assert used.node_selector == {
        "node.kubernetes.io/instance-type": "p4d.24xlarge",
        "topology.kubernetes.io/zone": "us-east-1a",
    }
    assert used.owner_namespaces == ("team-a", "team-b")
    # billed at the on-demand rate: 32.7726 $/h for 8 GPUs
    assert used.price_per_gpu_hour == 4.096575
    assert used.start == datetime(2026, 11, 1, tzinfo=UTC) and used.end is None
    assert used.source == "aws ec2 describe-capacity-reservations"
    unused = by_name["cr-0a1b2c3d4e5f60001-unused"]
    assert (unused.node_group.node_group, unused.node_group.count) == ("p4d-ng", 1)
    assert unused.node_selector == {}


def test_a_capacity_block_without_a_matching_group_is_reported_not_invented():
    snapshot = parse_with("aws-describe-capacity-reservations.json", eks_node("a"))
    names = {r.name for r in snapshot.cluster.reservations}
    assert not any(n.startswith("cr-0a1b2c3d4e5f60002") for n in names)
    reasons = {(n.object, n.field): n.reason for n in snapshot.notices}
    block = "CapacityReservation/cr-0a1b2c3d4e5f60002"
    assert reasons[(block, "ReservationType")].startswith(
        "Capacity Block: its fee is paid up front"
    )
    assert reasons[(block, "owner")].startswith("unowned")
    assert reasons[(block, "AvailableInstanceCount")].startswith(
        "2 unused p5.48xlarge in us-east-1b: no node group"
    )


def test_an_expired_reservation_is_skipped_and_said():
    snapshot = parse_with("aws-describe-capacity-reservations.json", eks_node("a"))
    assert "cr-0a1b2c3d4e5f60003" not in {r.name for r in snapshot.cluster.reservations}
    (notice,) = [n for n in snapshot.notices if n.object.endswith("60003")]
    assert (notice.field, notice.reason) == ("State", "expired: skipped")


def test_a_gcp_reservation_list_maps_in_use_and_unused_capacity():
    snapshot = parse_with("gcloud-compute-reservations-list.json", gke_node("g1"))
    assert snapshot.errors == ()
    by_name = {r.name: r for r in snapshot.cluster.reservations}
    used = by_name["a2-reservation"]
    assert used.node_selector == {
        "node.kubernetes.io/instance-type": "a2-highgpu-8g",
        "topology.kubernetes.io/zone": "us-central1-a",
    }
    # 29.38708 $/h (us-central1) for 8 GPUs
    assert used.price_per_gpu_hour == 3.673385
    assert used.owner_namespaces == ()
    unused = by_name["a2-reservation-unused"]
    assert (unused.node_group.node_group, unused.node_group.count) == ("a2-pool", 1)


def test_karpenter_node_class_reservations_cover_the_nodes_launched_into_them():
    node_class = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu"},
        "spec": {"capacityReservationSelectorTerms": [{"id": "cr-0a1b2c3d4e5f69999"}]},
        "status": {
            "capacityReservations": [
                {
                    "id": "cr-0a1b2c3d4e5f69999",
                    "availabilityZone": "us-east-1a",
                    "instanceType": "p5.48xlarge",
                    "instanceMatchCriteria": "targeted",
                    "ownerID": "123456789012",
                    "reservationType": "default",
                    "state": "active",
                }
            ]
        },
    }
    snapshot = parse_objects([("nc.yaml", node_class)], cluster_name="t")
    (reservation,) = snapshot.cluster.reservations
    assert reservation.node_selector == {
        "karpenter.k8s.aws/capacity-reservation-id": reservation.name
    }
    # p5.48xlarge: 98.32 $/h for 8 GPUs (GPU count from the bundled catalogue)
    assert reservation.price_per_gpu_hour == 12.29
    assert reservation.source == "Karpenter EC2NodeClass status.capacityReservations"
