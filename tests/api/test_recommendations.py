"""/api/v1/recommendations/: what to add, with the YAML an operator applies."""

import pytest
import yaml

from tests.action_checks import assert_applies_as_is, provisioning_request_schema
from tests.web.fixtures import ingest_and_evaluate, scenario_objects

pytestmark = pytest.mark.django_db


def test_it_serves_the_node_group_patch_and_provisioning_request_to_apply(team_a_client, cluster):
    ingest_and_evaluate(cluster, scenario_objects("topology-block"))
    (item,) = team_a_client.get("/api/v1/recommendations/", {"cluster": cluster.pk}).json()[
        "results"
    ]
    assert (item["node_group"], item["count"], item["cost_per_hour"]) == ("h100", 2, 160.0)
    assert item["current_size"] == 4  # a1, a2, c1, c2 carry pool: h100
    actions = {(a["kind"], a["role"]): a["text"] for a in item["actions"]}
    # EITHER a ProvisioningRequest (with its PodTemplate) for the gang, OR the size
    documents = list(yaml.safe_load_all(actions["ProvisioningRequest", "either"]))
    (request,) = [d for d in documents if d["kind"] == "ProvisioningRequest"]
    assert request["apiVersion"] == "autoscaling.x-k8s.io/v1"
    assert request["metadata"] == {"name": "train", "namespace": "ml"}
    assert request["spec"]["podSets"] == [{"count": 2, "podTemplateRef": {"name": "train"}}]
    assert [d["metadata"]["name"] for d in documents if d["kind"] == "PodTemplate"] == ["train"]
    # 4 h100 nodes in the snapshot + 2 -> minSize 6; maxSize 8 needs no change
    assert yaml.safe_load(actions["NodeGroup", "or"])["spec"] == {"minSize": 6}
    assert "cloud.google.com/gce-topology-block=b1" in actions["Placement", "note"]


def test_it_serves_the_first_action_alone_as_yaml(team_a_client, cluster, shared_data_dir):
    ingest_and_evaluate(cluster, scenario_objects("topology-block"))
    (item,) = team_a_client.get("/api/v1/recommendations/", {"cluster": cluster.pk}).json()[
        "results"
    ]
    first = next(a for a in item["actions"] if a["role"] != "note")
    assert (first["kind"], first["role"]) == ("ProvisioningRequest", "either")
    assert item["yaml"] == first["text"]
    assert "NodeGroup" not in item["yaml"]  # not the OR alternative too
    assert_applies_as_is(first, provisioning_request_schema(shared_data_dir))


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
