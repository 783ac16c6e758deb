"""List endpoints cost a fixed number of queries, whatever the page size or row count.

Each count = 1 token lookup + 1 COUNT + 1 page (+ the team groups and the
(id, owners) scan for reservations; + the team groups where rows name reservations,
relabelled by capacityweb.visibility: nodes, pending workloads, recommendations;
+ the subscription's clusters prefetch).
"""

import pytest
from builders import add_sample, at, make_evaluation, make_reservation

pytestmark = pytest.mark.django_db

LIST_QUERIES = {
    "/api/v1/clusters/": 3,
    "/api/v1/snapshots/": 3,
    "/api/v1/evaluations/": 3,
    "/api/v1/recommendations/": 4,
    "/api/v1/pending-workloads/": 4,
    "/api/v1/node-groups/": 3,
    "/api/v1/reservations/": 5,
    "/api/v1/subscriptions/": 4,
    "/api/v1/nodes/": 4,
}


@pytest.fixture
def rows(cluster, team_a_client):
    from recommender.models import Recommendation, WorkloadVerdict
    from reservations.models import Subscription
    from topology.models import NodeGroup

    heatmap = [{"node": f"n{i}", "gpu": "0", "model": "H100"} for i in range(6)]
    for hour in range(6):
        evaluation = make_evaluation(cluster, at(1, hour), result={"heatmap": heatmap})
        Recommendation.objects.create(evaluation=evaluation, node_group="g", count=1)
        WorkloadVerdict.objects.create(
            evaluation=evaluation,
            workload=f"team-a/w{hour}",
            namespace="team-a",
            kind="pod",
            verdict="blocked",
        )
        reservation = make_reservation(cluster, f"r{hour}", "team-a")
        add_sample(reservation, evaluation, reserved=1, idle=1, cost_per_hour=1.0)
        NodeGroup.objects.create(cluster=cluster, name=f"g{hour}", spec={})
    user = _token_user(team_a_client)
    for _ in range(6):
        subscription = Subscription.objects.create(user=user, recipients="a@example.test")
        subscription.clusters.add(cluster)


def _token_user(client):
    from rest_framework.authtoken.models import Token

    key = client._credentials["HTTP_AUTHORIZATION"].split()[1]
    return Token.objects.get(key=key).user


@pytest.mark.parametrize("path", sorted(LIST_QUERIES))
@pytest.mark.parametrize("page_size", [1, 50])
def test_it_lists_in_a_fixed_number_of_queries(
    path, page_size, rows, team_a_client, django_assert_num_queries
):
    with django_assert_num_queries(LIST_QUERIES[path]):
        response = team_a_client.get(path, {"page_size": page_size, "latest": "false"})

    assert response.status_code == 200
    assert len(response.json()["results"]) == min(page_size, response.json()["count"])
