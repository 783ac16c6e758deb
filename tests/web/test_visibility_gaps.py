"""The visibility policy on the paths it first missed (capacityweb.visibility).

The reservation scenario (tests/scenarios/reservation-idle-nodes.yaml, evaluated now):
team-a's reservation team-a-h100 holds node r1, 8 idle GPUs at $2.5 per GPU-hour, so
$20.00/h idle. team-a also stores reservation team-a-spare on node group "gone", which
no longer exists: the ingest records the error "Reservation/team-a-spare:
spec.nodeGroup.name: no NodeGroup named 'gone'".

- a snapshot's errors name the stored object that failed: another team's reservation
  reads "reserved (another team)" (API and overview);
- cluster-wide idle money: with one other team holding reservations, the cluster's
  idle $/h minus a user's own is that team's; a user who is not staff sees only the
  idle cost of the reservations they see, staff the cluster's (overview card and its
  waste sparkline).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.utils import timezone

from capacityweb.visibility import OTHER_TEAM
from tests.web.fixtures import ingest_and_evaluate, scenario_objects
from tests.web.test_visibility import member_of

pytestmark = pytest.mark.django_db

SPARE = "team-a-spare"


@pytest.fixture
def broken(cluster: Any) -> Any:
    """The scenario evaluated now, with team-a's stored reservation on a deleted group."""
    from reservations.models import Reservation

    spec = {"owner": {"namespaces": ["team-a"]}, "nodeGroup": {"name": "gone", "count": 1}}
    Reservation.objects.create(
        cluster=cluster,
        name=SPARE,
        owner_namespaces=["team-a"],
        spec={**spec, "pricePerGpuHour": 1},
    )
    objects = scenario_objects("reservation-idle-nodes")
    return ingest_and_evaluate(cluster, objects, taken_at=timezone.now())


@pytest.fixture
def outsider(client: Any) -> Any:
    return member_of(client, "bob", "team-b")


@pytest.fixture
def owner(client: Any) -> Any:
    return member_of(client, "alice", "team-a")


def body(client: Any, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    return response.content.decode()


def test_the_fixture_records_the_error_naming_the_reservation(broken: Any) -> None:
    assert [e["object"] for e in broken.snapshot.errors] == [f"Reservation/{SPARE}"]


def test_it_names_another_teams_reservation_in_no_snapshot_error_of_the_api(
    outsider: Any, broken: Any
) -> None:
    content = body(outsider, f"/api/v1/snapshots/{broken.snapshot_id}/")

    assert SPARE not in content
    assert f"Reservation/{OTHER_TEAM}" in content


def test_it_names_the_reservation_in_the_snapshot_error_to_its_team(
    owner: Any, broken: Any
) -> None:
    assert f"Reservation/{SPARE}" in body(owner, f"/api/v1/snapshots/{broken.snapshot_id}/")


def test_it_names_another_teams_reservation_in_no_error_on_the_overview(
    outsider: Any, broken: Any
) -> None:
    content = body(outsider, "/")

    assert SPARE not in content
    assert f"<td>Reservation/{OTHER_TEAM}</td>" in content


def test_it_names_the_reservation_in_the_overview_error_to_its_team(
    owner: Any, broken: Any
) -> None:
    assert f"<td>Reservation/{SPARE}</td>" in body(owner, "/")


def idle_figure(content: str) -> str:
    found = re.search(r'data-counter="idleReservedPerHour">([^<]*)<', content)
    assert found is not None
    return found.group(1)


def waste_last(content: str) -> str:
    found = re.search(r'data-sparkline="waste" data-samples="\d+" data-last="([^"]*)"', content)
    assert found is not None
    return found.group(1)


def test_it_counts_no_other_teams_idle_cost_in_a_members_overview_figure(
    outsider: Any, broken: Any
) -> None:
    # team-b owns no reservation: its idle cost is 0, not team-a's 20.00
    assert idle_figure(body(outsider, "/")) == "$0.00/h"


def test_it_counts_no_other_teams_idle_cost_in_a_members_waste_sparkline(
    outsider: Any, broken: Any
) -> None:
    # nothing stranded here (cluster-autoscaler templates from r1): waste = idle only
    assert waste_last(body(outsider, "/")) == "0.0"


def test_it_counts_the_teams_own_idle_cost_in_its_overview_figure(owner: Any, broken: Any) -> None:
    content = body(owner, "/")

    assert (idle_figure(content), waste_last(content)) == ("$20.00/h", "20.0")


def test_it_counts_every_reservations_idle_cost_for_staff(signed_in: Any, broken: Any) -> None:
    assert idle_figure(body(signed_in, "/")) == "$20.00/h"


# --- node groups: the room held for paid, unprovisioned reservation nodes ------------------
# tests/scenarios/reservation-paid-unprovisioned.yaml: team-a paid for 1 node of group h100
# (max 4, 1 member o1: room 3) that nobody has started. The joint plan never buys that
# node for anyone else; the inventory says so per viewer: to team-a by name, to team-b
# as another team's, to neither its price.

PAID = "team-a-paid"


@pytest.fixture
def paid(cluster: Any) -> Any:
    return ingest_and_evaluate(cluster, scenario_objects("reservation-paid-unprovisioned"))


def test_it_tells_another_team_the_room_held_without_the_reservations_name_in_the_api(
    outsider: Any, paid: Any
) -> None:
    (row,) = outsider.get(f"/api/v1/node-group-inventory/?cluster={paid.cluster_id}").json()

    assert (row["room"], row["held_for_reservations"]) == (
        3,
        [{"reservation": OTHER_TEAM, "nodes": 1}],
    )


def test_it_names_the_reservation_holding_room_to_its_team_in_the_api(
    owner: Any, paid: Any
) -> None:
    (row,) = owner.get(f"/api/v1/node-group-inventory/?cluster={paid.cluster_id}").json()

    assert row["held_for_reservations"] == [{"reservation": PAID, "nodes": 1}]


def test_it_tells_another_team_the_room_held_without_the_reservations_name_on_the_page(
    outsider: Any, paid: Any
) -> None:
    content = body(outsider, f"/clusters/{paid.cluster_id}/node-groups/")

    assert PAID not in content
    assert f"1 held for {OTHER_TEAM} (paid, not yet provisioned)" in content


def test_it_names_the_reservation_holding_room_to_its_team_on_the_page(
    owner: Any, paid: Any
) -> None:
    content = body(owner, f"/clusters/{paid.cluster_id}/node-groups/")

    assert f"1 held for reservation {PAID} (paid, not yet provisioned)" in content


# --- queues, waiting per team, autoscaler events: nothing of a reservation reaches them -----
# They list queues, per-namespace waiting figures (as the pending page lists every team's
# workloads) and what the autoscaler reported per group: no reservation's name, owners or
# price. Read as another team on the reservation scenarios above.


@pytest.mark.parametrize(
    "path",
    [
        "/clusters/{cluster}/queues/",
        "/clusters/{cluster}/teams/",
        "/clusters/{cluster}/autoscaler-events/",
        "/api/v1/queue-usage/?cluster={cluster}",
        "/api/v1/team-waiting/?cluster={cluster}",
        "/api/v1/autoscaler-events/?cluster={cluster}",
    ],
)
def test_it_shows_another_team_no_reservation_detail_on_the_other_dashboards(
    outsider: Any, paid: Any, path: str
) -> None:
    content = body(outsider, path.format(cluster=paid.cluster_id))

    assert PAID not in content
