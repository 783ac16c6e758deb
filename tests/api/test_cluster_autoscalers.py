"""/api/v1/cluster-autoscalers/: a cluster's cluster-autoscaler command line, checked
as the evaluation reads it (recommender.engine.autoscaler.caflags)."""

import pytest


@pytest.mark.django_db
def test_it_stores_the_flags_an_operator_gives(staff_client, cluster):
    response = staff_client.patch(
        f"/api/v1/cluster-autoscalers/{cluster.id}/",
        {
            "autoscaler_args": "--expander=priority,least-waste --max-nodes-total=200",
            "autoscaler_priorities": "50:\n  - ^h100\n",
        },
        format="json",
    )

    assert response.status_code == 200, response.content
    cluster.refresh_from_db()
    assert cluster.autoscaler_args == "--expander=priority,least-waste --max-nodes-total=200"
    assert response.json()["autoscaler_priorities"] == "50:\n  - ^h100"  # trimmed


@pytest.mark.django_db
def test_it_refuses_a_flag_cluster_autoscaler_refuses_with_400_naming_it(staff_client, cluster):
    response = staff_client.patch(
        f"/api/v1/cluster-autoscalers/{cluster.id}/",
        {"autoscaler_args": "--max-nodes-total=ten"},
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {"autoscaler_args": ["--max-nodes-total: 'ten' is not an integer"]}
    cluster.refresh_from_db()
    assert cluster.autoscaler_args == ""


@pytest.mark.django_db
def test_it_refuses_a_bad_priority_configmap_with_400_naming_it(staff_client, cluster):
    response = staff_client.patch(
        f"/api/v1/cluster-autoscalers/{cluster.id}/",
        {"autoscaler_priorities": "50: h100"},
        format="json",
    )

    assert response.status_code == 400
    assert (
        "cluster-autoscaler-priority-expander: data.priorities: 50"
        in (response.json()["autoscaler_priorities"][0])
    )


@pytest.mark.django_db
def test_a_team_member_reads_but_may_not_change_them(team_a_client, cluster):
    assert team_a_client.get(f"/api/v1/cluster-autoscalers/{cluster.id}/").status_code == 200
    response = team_a_client.patch(
        f"/api/v1/cluster-autoscalers/{cluster.id}/",
        {"autoscaler_args": "--max-nodes-total=1"},
        format="json",
    )
    assert response.status_code == 403
