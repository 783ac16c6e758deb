"""A group without a price reads "price unknown", never 0/h, and totals say what they
leave out (issue 30 item 2)."""

import copy

import pytest

from recommender.actions.report import report_json, report_text
from recommender.engine.evaluate.report import render_text
from tests.engine.test_actions import FIXTURES, evaluated, pending_pod, sourced
from topology.ingest.files import read_objects
from topology.kube.providers.prices import bundled_table

INSTANCE_TYPE = "node.kubernetes.io/instance-type"


def unpriced_gke_cluster() -> list:
    """The discovered GKE cluster with its a2 pool on a type the price table lacks."""
    objects = [copy.deepcopy(o) for _, o in read_objects(FIXTURES / "discovered-gke-cluster.yaml")]
    for obj in objects:
        if obj["kind"] == "Node" and "a2-pool" in obj["metadata"]["name"]:
            obj["metadata"]["labels"][INSTANCE_TYPE] = "z9-notlisted-8g"
    return sourced(*objects)


def test_a_card_of_an_unpriced_group_reads_price_unknown():
    snapshot, evaluation = evaluated(unpriced_gke_cluster())
    (rec,) = evaluation.recommendations
    text = report_text(evaluation, snapshot.cluster, snapshot.notices, "USD")
    assert "* add 2 x a2-pool (price unknown) for ml/train:" in text
    assert "$0.00/h) for ml/train" not in text


def test_the_total_names_the_nodes_it_leaves_unpriced():
    snapshot, evaluation = evaluated(unpriced_gke_cluster())
    text = report_text(evaluation, snapshot.cluster, snapshot.notices, "USD")
    assert "in all: $0.00/h + price unknown for 2 x a2-pool" in text
    engine_text = render_text(evaluation, snapshot.cluster.node_groups)
    assert "== What to do instead ($0.00/h + price unknown for 2 x a2-pool) ==" in engine_text


def test_the_json_report_flags_the_unpriced_card_and_counts_its_nodes():
    snapshot, evaluation = evaluated(unpriced_gke_cluster())
    payload = report_json(evaluation, snapshot.cluster, snapshot.notices, "USD")
    (rec,) = payload["recommendations"]
    assert rec["priceKnown"] is False
    assert payload["cost"]["unpricedNodes"]["joint"] == {"a2-pool": 2}
    groups = {g["name"]: g for g in payload["nodeGroups"]}
    assert groups["a2-pool"]["priceKnown"] is False


def test_a_project_group_without_a_price_costs_nothing_known_never_less_than_zero():
    group = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "h100"},
        "spec": {
            "nodeSelector": {"pool": "h100"},
            "minSize": 0,
            "maxSize": 3,
            "template": {
                "allocatable": {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"}
            },
        },
    }
    snapshot, evaluation = evaluated(sourced(group, pending_pod("job", 8)))
    (rec,) = evaluation.recommendations
    # no pricePerNodeHour: was -1.0/h (cheaper than free); now 0 in the arithmetic, unknown
    assert rec.cost_per_hour == 0.0
    (node_group,) = snapshot.cluster.node_groups
    assert node_group.price_known is False
    text = render_text(evaluation, snapshot.cluster.node_groups)
    assert "* add 1 x h100 for ml/job (price unknown)" in text


def test_a_row_with_its_own_source_is_cited_with_it() -> None:
    # prices.yaml g4dn.4xlarge: us-east-1 1.204 from the skypilot AWS catalogue row
    price = bundled_table().lookup("g4dn.4xlarge", "us-east-1")
    assert price is not None and price.per_node_hour == 1.204
    assert "skypilot-org/skypilot-catalog catalogs/v8/aws/vms.csv" in price.source
    # a row without its own keeps the cloud's date and source
    other = bundled_table().lookup("p4d.24xlarge", "us-east-1")
    assert other is not None and "not verified against the source" in other.source


def test_every_row_names_a_date_and_a_source() -> None:
    for cloud in bundled_table().clouds:
        for kind in cloud.by_type:
            as_of, source = cloud.row_sources.get(kind, (cloud.as_of, cloud.source))
            assert as_of and source, (cloud.cloud, kind)


def test_a_cluster_override_prices_a_type_the_table_lacks() -> None:
    table = bundled_table().with_overrides({"z9-notlisted-8g": 31.5}, "prod")
    price = table.lookup("z9-notlisted-8g", "us-central1")
    assert price is not None and price.per_node_hour == 31.5
    assert price.source == "price override of cluster prod, every region"
    # per region, and winning over the bundled row of the same type
    regional = bundled_table().with_overrides({"a2-highgpu-8g": {"us-central1": 20.0}}, "prod")
    assert regional.lookup("a2-highgpu-8g", "us-central1").per_node_hour == 20.0


def test_an_override_that_is_not_a_price_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="Cluster/prod: price_overrides.a3-highgpu-8g: must be"):
        bundled_table().with_overrides({"a3-highgpu-8g": "cheap"}, "prod")
    with pytest.raises(ValueError, match="must be a number >= 0"):
        bundled_table().with_overrides({"a3-highgpu-8g": -1}, "prod")
