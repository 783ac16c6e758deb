"""/api/v1/nodes/: the node rows stored with each evaluation, filtered and paged in the database.

The heatmap cells below (one per GPU) make two nodes:

    n1  zone z1, h100-pool, H100: gpu 0 reservation ra, pod team-a/p1, 1000 milli;
                                  gpu 1 no reservation, idle (0 milli)
    n2  zone z2, a100-pool, A100: gpu 0 pod team-b/p2, allocation unknown

and reservation ra is owned by team-c. The listing is read by staff, who see every
reservation; what a member of another team sees of ra is tests/test_visibility.py's.
"""

import pytest
from builders import at, make_evaluation

pytestmark = pytest.mark.django_db

H100 = {"zone": "z1", "block": "b1", "rack": "r1", "nodeGroup": "h100-pool", "model": "H100"}
CELLS = [
    {**H100, "node": "n1", "gpu": "0", "reservation": "ra", "pods": ["team-a/p1"],
     "allocatedMilli": 1000},
    {**H100, "node": "n1", "gpu": "1", "reservation": None, "pods": [], "allocatedMilli": 0},
    {"zone": "z2", "block": None, "rack": None, "nodeGroup": "a100-pool", "model": "A100",
     "node": "n2", "gpu": "0", "reservation": None, "pods": ["team-b/p2"],
     "allocatedMilli": None},
]  # fmt: skip
OWNERS = {"ra": ["team-c"]}


@pytest.fixture
def evaluations(cluster):
    """An older evaluation with one node n0, then the latest with n1 and n2."""
    older = make_evaluation(
        cluster, at(1, 0), result={"heatmap": [{"node": "n0", "gpu": "0", "model": "T4"}]}
    )
    latest = make_evaluation(
        cluster, at(1, 1), reservation_owners=OWNERS, result={"heatmap": CELLS}
    )
    return older, latest


def names(response):
    assert response.status_code == 200, response.content
    return [node["name"] for node in response.json()["results"]]


def test_it_lists_the_latest_evaluations_nodes_with_their_devices(
    evaluations, staff_client, cluster
):
    _older, latest = evaluations

    nodes = staff_client.get("/api/v1/nodes/", {"cluster": cluster.pk}).json()["results"]

    assert [node["name"] for node in nodes] == ["n1", "n2"]
    n1, n2 = nodes
    assert n1["evaluation"] == latest.pk
    assert n1["cluster"] == cluster.pk
    assert n1["topology_path"] == ["z1", "b1", "r1", "n1"]
    assert (n1["gpus"], n1["allocated_milli"], n1["gpu_model"]) == (2, 1000, "H100")
    assert n1["devices"][0] == {
        "gpu": "0",
        "model": "H100",
        "allocated_milli": 1000,
        "reservation": "ra",
        "pods": ["team-a/p1"],
    }
    assert n1["reservations"] == ["ra"]
    assert n1["teams"] == ["team-a", "team-c"]
    assert n2["topology_path"] == ["z2", None, None, "n2"]
    assert n2["allocated_milli"] is None  # one GPU's allocation unknown: the sum is too


def test_it_lists_an_older_evaluations_nodes_when_named(evaluations, team_a_client):
    older, _latest = evaluations

    assert names(team_a_client.get("/api/v1/nodes/", {"evaluation": older.pk})) == ["n0"]


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        ({"gpu_model": "A100"}, ["n2"]),
        ({"node_group": "h100-pool"}, ["n1"]),
        ({"zone": "z2"}, ["n2"]),
        ({"reservation": "ra"}, ["n1"]),
        ({"team": "team-b"}, ["n2"]),
        ({"team": "team-c"}, ["n1"]),  # through reservation ra's owner, no pod of its own
        ({"team": "team-z"}, []),
        ({"gpu_model": "H100", "zone": "z2"}, []),
    ],
)
def test_it_filters_nodes_by_the_page_and_api_parameters(
    evaluations, staff_client, parameters, expected
):
    assert names(staff_client.get("/api/v1/nodes/", parameters)) == expected


def test_it_pages_nodes_in_the_database(evaluations, team_a_client):
    first = team_a_client.get("/api/v1/nodes/", {"page_size": 1}).json()
    second = team_a_client.get("/api/v1/nodes/", {"page_size": 1, "page": 2}).json()

    assert first["count"] == 2
    assert [n["name"] for n in first["results"] + second["results"]] == ["n1", "n2"]
    assert second["next"] is None


def test_it_answers_404_for_an_unknown_cluster(evaluations, team_a_client):
    response = team_a_client.get("/api/v1/nodes/", {"cluster": 999999})

    assert response.status_code == 404
    assert response.json() == {"detail": "cluster 999999: no such object"}
