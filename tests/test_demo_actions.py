"""Every action the dashboard shows on the demo passes the checks of the CLI's actions
(tests/action_checks.py), and the demo's "apply all" figures add up (issue 43). The
demo's node groups are GKE node pools cluster-autoscaler grows (issue 43 item 5), found
as a kube ingest finds them: so their actions are the gcloud commands for those pools."""

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.action_checks import assert_applies_as_is, provisioning_request_schema

DEMO_AT = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def demo_result(db: None) -> dict[str, Any]:
    from capacityweb.demo import load_demo

    _cluster, evaluation = load_demo(now=DEMO_AT)
    return evaluation.result


def test_it_shows_only_actions_that_apply_as_they_are_on_the_demo(
    demo_result: dict[str, Any], shared_data_dir: Any
) -> None:
    schema = provisioning_request_schema(shared_data_dir)
    cards = demo_result["recommendations"]
    totals = [t for t in demo_result["nodeGroupTotals"] if t["cards"] > 1]
    assert cards and totals
    shown = [a for item in [*cards, *totals] for a in item["actions"]]
    # every group is a GKE pool cluster-autoscaler grows: EITHER the ProvisioningRequest OR
    # the pool's bounds with gcloud (report._pool_actions), never a capacityweb.io NodeGroup
    kinds = {a["kind"] for a in shown}
    assert kinds >= {"ProvisioningRequest", "gcloud", "Reservation"}
    assert "NodeGroup" not in kinds
    for action in shown:
        assert_applies_as_is(action, schema)
    for card in cards:
        roles = [a["role"] for a in card["actions"]]
        # at most one either/or per card, and an "or" size change comes with its undo
        assert roles.count("either") <= 1 and roles.count("or") == roles.count("either")
        assert ("or" in roles) <= ("afterwards" in roles)
        if card["reservation"]:
            assert [a["kind"] for a in card["actions"] if a["role"] != "note"] == ["Reservation"]


def test_it_prices_every_node_of_the_demo_apply_all(demo_result: dict[str, Any]) -> None:
    prices = {g["name"]: g["pricePerNodeHour"] for g in demo_result["nodeGroups"]}
    for total in demo_result["nodeGroupTotals"]:
        bought = [
            c
            for c in demo_result["recommendations"]
            if c["nodeGroup"] == total["nodeGroup"] and not c["reservation"]
        ]
        assert total["addNodes"] == sum(c["count"] for c in bought)
        assert total["costPerHour"] == pytest.approx(total["addNodes"] * prices[total["nodeGroup"]])


def test_it_keeps_the_size_warning_in_the_demo_apply_all(demo_result: dict[str, Any]) -> None:
    (g3,) = [t for t in demo_result["nodeGroupTotals"] if t["nodeGroup"] == "g3-8gpu-pool"]
    (note,) = [a for a in g3["actions"] if a["role"] == "note"]
    assert "a minSize raise does not choose which" in note["text"]


# the pools and their bounds as capacityweb/demo.py's autoscaled_pools give them to the
# status ConfigMap; sizes: the openb node list's 39 G3 and 404 T4 nodes, and no node of
# the partial-gang case's pool yet; prices: the demo's per-node-hour overrides
DEMO_POOLS = {
    "case-partial-pool": (0, 2, 0, 28.0),
    "g3-8gpu-pool": (0, 64, 39, 28.0),
    "t4-4gpu-pool": (0, 410, 404, 3.2),
}
MIG = re.compile(
    r"^https://www\.googleapis\.com/compute/v1/projects/openb-demo/zones/zone-[01]/"
    r"instanceGroups/gke-openb-demo-(?P<pool>[a-z0-9-]+)-[0-9a-f]{8}-grp$"
)


@pytest.mark.django_db
def test_the_demo_node_groups_are_gke_pools_cluster_autoscaler_grows(client: Any) -> None:
    from django.contrib.auth import get_user_model

    from capacityweb.demo import load_demo

    cluster, evaluation = load_demo(now=DEMO_AT)
    groups = {g["name"]: g for g in evaluation.result["nodeGroups"]}
    assert set(groups) == set(DEMO_POOLS)
    for name, (low, high, size, price) in DEMO_POOLS.items():
        group = groups[name]
        assert (group["minSize"], group["maxSize"], group["currentSize"]) == (low, high, size)
        assert group["autoscaler"]["kind"] == "cluster-autoscaler"
        found = MIG.match(group["autoscaler"]["name"])
        assert found and found["pool"] == name, group["autoscaler"]
        assert group["source"].startswith("cluster-autoscaler status ConfigMap + ")
        assert (group["pricePerNodeHour"], group["priceKnown"]) == (price, True)
        assert group["priceSource"] == "price override of cluster openb-demo, every region"
    commands = [
        line
        for card in evaluation.result["recommendations"]
        for action in card["actions"]
        if action["kind"] == "gcloud"
        for line in action["text"].splitlines()
        if not line.startswith("#")
    ]
    # each names its card's pool and the cluster and location to fill in
    assert commands and all(
        re.match(r"gcloud container node-pools update [a-z0-9-]+ --cluster \$CLUSTER ", c)
        for c in commands
    ), commands
    user = get_user_model().objects.create_user("viewer", password="x-password-123")
    client.force_login(user)
    response = client.get(f"/clusters/{cluster.id}/node-groups/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "no autoscaler grows this group" not in page
    for name in DEMO_POOLS:
        assert f'<tr data-node-group="{name}">' in page
