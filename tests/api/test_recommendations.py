"""/api/v1/recommendations/: what to add, with the YAML an operator applies."""

import pytest
import yaml

from tests.web.fixtures import ingest_and_evaluate, scenario_objects

pytestmark = pytest.mark.django_db


def test_it_serves_the_node_group_patch_and_provisioning_request_to_apply(team_a_client, cluster):
    ingest_and_evaluate(cluster, scenario_objects("topology-block"))
    (item,) = team_a_client.get("/api/v1/recommendations/", {"cluster": cluster.pk}).json()[
        "results"
    ]
    assert (item["node_group"], item["count"], item["cost_per_hour"]) == ("h100", 2, 160.0)
    assert item["current_size"] == 4  # a1, a2, c1, c2 carry pool: h100
    patch, request = yaml.safe_load_all(item["yaml"])
    # 4 h100 nodes in the snapshot + 2 -> minSize 6; maxSize 8 needs no change
    assert patch["spec"] == {"minSize": 6}
    assert "# the new nodes must land in cloud.google.com/gce-topology-block=b1" in item["yaml"]
    assert (request["apiVersion"], request["kind"]) == (
        "autoscaling.x-k8s.io/v1",
        "ProvisioningRequest",
    )
    assert request["metadata"] == {"name": "train", "namespace": "ml"}
    assert request["spec"]["podSets"] == [{"count": 2, "podTemplateRef": {"name": "train"}}]


def test_it_starts_paid_reserved_nodes_in_the_reservation_not_by_a_size(team_a_client, cluster):
    ingest_and_evaluate(cluster, scenario_objects("reservation-paid-unprovisioned"))
    (item,) = team_a_client.get("/api/v1/recommendations/", {"cluster": cluster.pk}).json()[
        "results"
    ]
    # o1 is the h100 group's one node; the paid, unstarted node is the card's one node
    assert (item["current_size"], item["count"]) == (1, 1)
    # never a size change for reserved capacity (it would start an on-demand node): the
    # owner's pod template tolerates the paid nodes' taint instead
    (patch,) = yaml.safe_load_all(item["yaml"])
    assert patch == {
        "spec": {
            "tolerations": [
                {
                    "key": "capacityweb.io/reservation",
                    "operator": "Equal",
                    "value": "team-a-paid",
                    "effect": "NoSchedule",
                }
            ]
        }
    }
    assert "reservation team-a-paid already pays for these 1 node(s) of h100" in item["yaml"]
