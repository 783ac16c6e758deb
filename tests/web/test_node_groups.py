"""The node groups page and ``/api/v1/node-group-inventory/`` (issue 34), on the discovered GKE
cluster of tests/scenarios/ca-upcoming-no-double-buy.yaml: pools a2-pool (2 nodes, CA
status: min 0, max 4, cloudProviderTarget 3, ScaleUp InProgress) and cpu-pool (1 node,
min 1, max 3, target 1; n2-standard-8 is not in the price table)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.web.fixtures import gpu_node, ingest_and_evaluate, scenario_objects


@pytest.fixture
def gke_evaluation(cluster: Any) -> Any:
    return ingest_and_evaluate(cluster, scenario_objects("ca-upcoming-no-double-buy"))


def page_text(signed_in: Any, cluster_id: int, query: str = "") -> str:
    response = signed_in.get(f"/clusters/{cluster_id}/node-groups/{query}")
    assert response.status_code == 200
    return response.content.decode()


def row_cells(content: str, group: str) -> list[str]:
    row = re.search(rf'<tr data-node-group="{group}">(.*?)</tr>', content, re.S)
    assert row is not None, group
    return [
        re.sub(r"<[^>]+>|\s+", " ", cell).strip()
        for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row.group(1), re.S)
    ]


def test_it_lists_where_a_group_was_found_and_its_min_max_current(
    signed_in: Any, gke_evaluation: Any
) -> None:
    cells = row_cells(page_text(signed_in, gke_evaluation.cluster_id), "a2-pool")
    assert cells[:6] == [
        "a2-pool",
        "cluster-autoscaler status ConfigMap + GKE node pool label",
        "0",
        "4",
        "2",
        "2",
    ]


def test_it_says_a_scale_up_in_progress_from_the_autoscalers_target_size(
    signed_in: Any, gke_evaluation: Any
) -> None:
    cells = row_cells(page_text(signed_in, gke_evaluation.cluster_id), "a2-pool")
    assert cells[-1] == "scale-up in progress: target 3, 2 nodes now"


def test_it_says_price_unknown_rather_than_zero(signed_in: Any, gke_evaluation: Any) -> None:
    cells = row_cells(page_text(signed_in, gke_evaluation.cluster_id), "cpu-pool")
    assert cells[6:8] == ["price unknown", "price unknown"]


def test_it_names_the_price_source_of_a_priced_group(signed_in: Any, gke_evaluation: Any) -> None:
    cells = row_cells(page_text(signed_in, gke_evaluation.cluster_id), "a2-pool")
    assert cells[7].startswith("gcp on-demand us-central1")


def test_it_narrows_the_page_to_one_autoscaler_kind(signed_in: Any, gke_evaluation: Any) -> None:
    content = page_text(signed_in, gke_evaluation.cluster_id, "?autoscaler=karpenter")
    assert "data-node-group=" not in content
    assert "No node group in this snapshot grown by karpenter." in content


def test_it_renders_the_page_in_six_queries(
    signed_in: Any, gke_evaluation: Any, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(6):  # session user + cluster_page's 4 + the groups' JSON
        page_text(signed_in, gke_evaluation.cluster_id)


def test_it_links_the_page_from_the_overview(signed_in: Any, gke_evaluation: Any) -> None:
    content = signed_in.get("/").content.decode()
    assert f'href="/clusters/{gke_evaluation.cluster_id}/node-groups/"' in content


def test_it_serves_the_same_rows_in_the_api(signed_in: Any, gke_evaluation: Any) -> None:
    response = signed_in.get(f"/api/v1/node-group-inventory/?cluster={gke_evaluation.cluster_id}")
    assert response.status_code == 200
    rows = {row["name"]: row for row in response.json()}
    assert sorted(rows) == ["a2-pool", "cpu-pool"]
    assert rows["a2-pool"]["last_activity"] == "scale-up in progress: target 3, 2 nodes now"
    assert rows["cpu-pool"]["price_per_node_hour"] is None


def test_it_filters_the_api_by_autoscaler_as_the_page_does(
    signed_in: Any, gke_evaluation: Any
) -> None:
    url = f"/api/v1/node-group-inventory/?cluster={gke_evaluation.cluster_id}&autoscaler=none"
    assert signed_in.get(url).json() == []


def test_it_answers_404_for_an_unknown_cluster(signed_in: Any, gke_evaluation: Any) -> None:
    """An id of no cluster is a missing object (404), as in every FilterSet (issue 28)."""
    response = signed_in.get("/api/v1/node-group-inventory/?cluster=999999")
    assert response.status_code == 404


def test_it_serves_the_api_in_three_queries(
    signed_in: Any, gke_evaluation: Any, django_assert_num_queries: Any
) -> None:
    url = f"/api/v1/node-group-inventory/?cluster={gke_evaluation.cluster_id}"
    with django_assert_num_queries(3):  # session user, the cluster choice, the snapshots
        assert signed_in.get(url).status_code == 200


def test_it_says_a_group_above_its_max_size_has_no_room(signed_in: Any, cluster: Any) -> None:
    # a real cluster may run more members than the group's max (max lowered since): the
    # room is 0, and the row says why rather than showing a bare 0
    group = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "l4"},
        "spec": {
            "nodeSelector": {"pool": "l4"},
            "minSize": 0,
            "maxSize": 1,
            "pricePerNodeHour": 1.0,
            "template": {"allocatable": {"cpu": "8", "pods": "110", "nvidia.com/gpu": "1"}},
        },
    }
    nodes = []
    for name in ("l4-a", "l4-b"):
        node = gpu_node(name, 1)
        node[1]["metadata"]["labels"]["pool"] = "l4"
        nodes.append(node)
    evaluation = ingest_and_evaluate(cluster, [("test", group), *nodes])
    cells = row_cells(page_text(signed_in, evaluation.cluster_id), "l4")
    (row,) = signed_in.get(f"/api/v1/node-group-inventory/?cluster={cluster.id}").json()

    assert cells[3:6] == ["1", "2", "0 (current size above max)"]
    assert (row["room"], row["above_max"]) == (0, True)
