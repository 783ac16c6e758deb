"""One visibility policy for reservation details, on every path (issue 28 item 3).

The reservation scenario (tests/scenarios/reservation-idle-nodes.yaml): team-a pays for
node r1 (Reservation team-a-h100, 8 GPUs idle, $2.5 per GPU-hour) and its pending pod
team-a/finetune reuses it. A member of team-b sees those GPUs as "reserved (another
team)" with their count, never the name, the node it names as reserved, its owners or
its price; a member of team-a and staff see it all (capacityweb.visibility). Each test
reads one path as the outsider; the controls read the same paths as team-a.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from capacityweb.visibility import OTHER_TEAM

pytestmark = pytest.mark.django_db

NAME = "team-a-h100"
IDLE_COST = "20.00"  # 8 idle GPUs × $2.5: the price, were it shown


def member_of(client: Any, username: str, team: str) -> Any:
    from django.contrib.auth.models import Group, User

    from capacityweb.teams import team_group_name

    user = User.objects.create_user(username, password="member-password-1")
    user.groups.add(Group.objects.get_or_create(name=team_group_name(team))[0])
    client.force_login(user)
    return client


@pytest.fixture
def outsider(client: Any) -> Any:
    return member_of(client, "bob", "team-b")


@pytest.fixture
def owner(client: Any) -> Any:
    return member_of(client, "alice", "team-a")


def page_paths(evaluation: Any) -> dict[str, str]:
    cluster = evaluation.cluster_id
    return {
        "topology page": f"/clusters/{cluster}/topology/",
        "heatmap hover (node r1)": f"/clusters/{cluster}/topology/data.json?domain=~/~/~/r1",
        "pending page": f"/clusters/{cluster}/pending/",
        "workload page": f"/clusters/{cluster}/workloads/team-a/finetune/",
        "recommendations page": f"/clusters/{cluster}/recommendations/",
        "reservations page": f"/clusters/{cluster}/reservations/",
    }


def api_paths(evaluation: Any) -> dict[str, str]:
    return {
        "nodes": f"/api/v1/nodes/?cluster={evaluation.cluster_id}",
        "pending workloads": f"/api/v1/pending-workloads/?cluster={evaluation.cluster_id}",
        "evaluation result": f"/api/v1/evaluations/{evaluation.id}/",
        "idle report": "/api/v1/reports/idle-reservations/?start=2026-12-01T00:00:00Z",
    }


PAGES = list(page_paths(type("E", (), {"cluster_id": 0})()))
APIS = list(api_paths(type("E", (), {"cluster_id": 0, "id": 0})()))


def body(client: Any, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    return response.content.decode()


@pytest.mark.parametrize("page", PAGES)
def test_it_shows_another_teams_reservation_only_as_reserved_on_each_page(
    outsider: Any, evaluation: Any, page: str
) -> None:
    content = body(outsider, page_paths(evaluation)[page])

    assert NAME not in content
    assert OTHER_TEAM in content


@pytest.mark.parametrize("page", PAGES)
def test_it_names_the_reservation_to_its_own_team_on_each_page(
    owner: Any, evaluation: Any, page: str
) -> None:
    assert NAME in body(owner, page_paths(evaluation)[page])


@pytest.mark.parametrize("api", APIS)
def test_it_shows_another_teams_reservation_only_as_reserved_in_each_api(
    outsider: Any, evaluation: Any, api: str
) -> None:
    content = body(outsider, api_paths(evaluation)[api])

    assert NAME not in content
    assert OTHER_TEAM in content


@pytest.mark.parametrize("api", APIS)
def test_it_names_the_reservation_to_its_own_team_in_each_api(
    owner: Any, evaluation: Any, api: str
) -> None:
    assert NAME in body(owner, api_paths(evaluation)[api])


def test_it_finds_no_node_by_another_teams_reservation_name(outsider: Any, evaluation: Any) -> None:
    assert outsider.get(f"/api/v1/nodes/?reservation={NAME}").json()["results"] == []


def test_it_finds_the_reserved_node_by_its_own_reservation_name(
    owner: Any, evaluation: Any
) -> None:
    results = owner.get(f"/api/v1/nodes/?reservation={NAME}").json()["results"]

    assert [node["name"] for node in results] == ["r1"]


def test_it_does_not_tell_another_team_that_a_team_owns_a_reservation_on_a_node(
    outsider: Any, evaluation: Any
) -> None:
    """r1 runs no pod of team-a: only its reservation links it to team-a."""
    results = outsider.get("/api/v1/nodes/?team=team-a").json()["results"]
    listed = outsider.get(f"/api/v1/nodes/?cluster={evaluation.cluster_id}").json()["results"]

    assert results == []
    assert [n["teams"] for n in listed if n["name"] == "r1"] == [[]]


def test_it_gives_another_teams_reservations_gpu_hours_but_no_cost_in_the_csv(
    outsider: Any, evaluation: Any
) -> None:
    path = "/api/v1/reports/idle-reservations/?format=csv&start=2026-12-01T00:00:00Z"
    rows = list(csv.DictReader(io.StringIO(body(outsider, path))))

    assert [(row["group"], row["reservations"], row["idle_cost"]) for row in rows] == [
        (OTHER_TEAM, "1", "")
    ]
    assert float(rows[0]["reserved_gpu_hours"]) > 0


def test_it_gives_the_owner_its_reservations_cost_in_the_csv(owner: Any, evaluation: Any) -> None:
    path = "/api/v1/reports/idle-reservations/?format=csv&start=2026-12-01T00:00:00Z"
    rows = list(csv.DictReader(io.StringIO(body(owner, path))))

    assert [row["group"] for row in rows] == [f"web-test/{NAME}"]
    assert rows[0]["idle_cost"] != ""


def test_it_shows_another_teams_idle_gpus_without_their_price(
    outsider: Any, evaluation: Any
) -> None:
    content = body(outsider, f"/clusters/{evaluation.cluster_id}/recommendations/")

    assert f"{OTHER_TEAM}: 8 idle GPUs</li>" in content
    assert IDLE_COST not in content
