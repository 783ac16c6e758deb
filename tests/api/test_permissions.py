"""Who may read what: token and session auth, team-scoped reservations, own subscriptions."""

import pytest
from builders import make_reservation, make_user, token_client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def test_it_refuses_anonymous_requests(cluster):
    response = APIClient().get("/api/v1/clusters/")

    assert response.status_code in (401, 403)


def test_it_authenticates_with_a_token(team_a_client, cluster):
    response = team_a_client.get("/api/v1/clusters/")

    assert response.status_code == 200
    assert [row["name"] for row in response.json()["results"]] == ["prod-gpu"]


def test_it_refuses_an_unknown_token(cluster):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token-of-anyone")

    response = client.get("/api/v1/clusters/")

    assert response.status_code in (401, 403)  # 403: session auth is listed first
    assert response.json()["detail"] == "Invalid token."


def test_it_refuses_the_token_of_a_deactivated_user(cluster):
    user = make_user("erin")
    client = token_client(user)
    user.is_active = False
    user.save()

    response = client.get("/api/v1/clusters/")

    assert response.status_code in (401, 403)
    assert response.json()["detail"] == "User inactive or deleted."


def test_it_refuses_a_deleted_token(team_a_client, cluster):
    from rest_framework.authtoken.models import Token

    Token.objects.all().delete()

    assert team_a_client.get("/api/v1/clusters/").status_code in (401, 403)


def test_it_authenticates_with_a_session(client, cluster):
    client.force_login(make_user("carol"))

    assert client.get("/api/v1/clusters/").status_code == 200


def test_it_exchanges_a_password_for_the_users_token(cluster):
    user = make_user("dave")

    response = APIClient().post(
        "/api/v1/auth-token/", {"username": "dave", "password": "unused-password-1"}
    )

    assert response.json()["token"] == user.auth_token.key


def test_it_hides_another_teams_reservation_details(team_a_client, cluster):
    theirs = make_reservation(cluster, "b-h100", "team-b")

    response = team_a_client.get(f"/api/v1/reservations/{theirs.id}/")

    assert response.status_code == 404


def test_it_shows_a_team_its_own_reservation(team_a_client, cluster):
    ours = make_reservation(cluster, "a-h100", "team-a")

    response = team_a_client.get(f"/api/v1/reservations/{ours.id}/")

    assert response.json()["spec"]["nodeNames"] == ["a-h100"]


def test_it_lists_only_the_teams_reservations(team_a_client, cluster):
    make_reservation(cluster, "a-h100", "team-a")
    make_reservation(cluster, "b-h100", "team-b")

    response = team_a_client.get("/api/v1/reservations/")

    assert [row["name"] for row in response.json()["results"]] == ["a-h100"]


def test_it_shows_staff_every_teams_reservation(staff_client, cluster):
    theirs = make_reservation(cluster, "b-h100", "team-b")

    assert staff_client.get(f"/api/v1/reservations/{theirs.id}/").status_code == 200


def test_it_keeps_a_subscription_private_to_its_owner(team_a_client, team_b_client, cluster):
    created = team_a_client.post(
        "/api/v1/subscriptions/",
        {"recipients": "alice@example.test", "clusters": [cluster.id], "timezone": "UTC"},
        format="json",
    )

    response = team_b_client.get(f"/api/v1/subscriptions/{created.json()['id']}/")

    assert response.status_code == 404
    assert team_b_client.get("/api/v1/subscriptions/").json()["count"] == 0


def test_it_refuses_a_reservation_for_a_team_the_user_is_not_on(team_a_client, cluster):
    from reservations.models import Reservation

    response = team_a_client.post(
        "/api/v1/reservations/",
        {
            "cluster": cluster.id,
            "name": "grab",
            "spec": {"owner": {"namespaces": ["team-b"]}, "nodeNames": ["n1"]},
        },
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {
        "spec": [
            "Reservation/grab: spec.owner.namespaces: team-b: not one of your teams "
            "(every owner must be)"
        ]
    }
    assert not Reservation.objects.exists()


def test_it_gives_each_user_their_own_token(cluster):
    first, second = make_user("erin"), make_user("frank")

    token_client(first)
    token_client(second)

    assert first.auth_token.key != second.auth_token.key
