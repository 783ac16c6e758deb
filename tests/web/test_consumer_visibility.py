"""The live socket follows the visibility policy (issue 28 item 3): a member of another
team gets "recommendations.update" with team-a's idle reservation as "reserved (another
team)", 8 idle GPUs and no cost, on connect and on every publish; its owners get it by
name. Groups stay per cluster: the consumer sends each socket what its user may read
(recommender.events.texts_for). Real capacityweb.asgi application and channel layer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from capacityweb.visibility import OTHER_TEAM

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

TIMEOUT_SECONDS = 5
NAME = "team-a-h100"


def session_of(client: Any, username: str, team: str) -> bytes:
    from django.contrib.auth.models import Group, User

    from capacityweb.teams import team_group_name

    user = User.objects.create_user(username, password="member-password-1")
    user.groups.add(Group.objects.get_or_create(name=team_group_name(team))[0])
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def open_socket(cluster_id: int, cookie: bytes) -> WebsocketCommunicator:
    from capacityweb.asgi import application

    headers = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1"), (b"cookie", cookie)]
    socket = WebsocketCommunicator(application, f"/ws/clusters/{cluster_id}/", headers=headers)
    connected, _ = await socket.connect(TIMEOUT_SECONDS)
    assert connected
    return socket


async def recommendations_update(socket: WebsocketCommunicator) -> tuple[str, dict[str, Any]]:
    """The next "recommendations.update" text and its data (the other two are skipped)."""
    while True:
        text = await socket.receive_from(TIMEOUT_SECONDS)
        message = json.loads(text)
        if message["type"] == "recommendations.update":
            return text, message["data"]


async def test_it_sends_another_team_the_reservation_as_reserved_on_connect(
    client: Any, evaluation: Any
) -> None:
    cookie = await sync_to_async(session_of)(client, "bob", "team-b")
    socket = await open_socket(evaluation.cluster_id, cookie)
    text, data = await recommendations_update(socket)
    await socket.disconnect()

    assert NAME not in text
    assert data["idleReservations"] == [
        {"name": OTHER_TEAM, "idleGpus": 8, "costPerHour": None, "reservations": 1}
    ]


async def test_it_sends_another_team_a_published_evaluation_redacted(
    client: Any, evaluation: Any
) -> None:
    from recommender import events

    cookie = await sync_to_async(session_of)(client, "bob", "team-b")
    socket = await open_socket(evaluation.cluster_id, cookie)
    await recommendations_update(socket)  # the snapshot on connect
    await sync_to_async(events.publish_evaluation)(evaluation)
    text, data = await recommendations_update(socket)
    await socket.disconnect()

    assert NAME not in text
    assert [item["name"] for item in data["idleReservations"]] == [OTHER_TEAM]


async def test_it_sends_the_owners_a_published_evaluation_by_name(
    client: Any, evaluation: Any
) -> None:
    from recommender import events

    cookie = await sync_to_async(session_of)(client, "alice", "team-a")
    socket = await open_socket(evaluation.cluster_id, cookie)
    await recommendations_update(socket)
    await sync_to_async(events.publish_evaluation)(evaluation)
    _text, data = await recommendations_update(socket)
    await socket.disconnect()

    assert data["idleReservations"] == [
        {"name": NAME, "idleGpus": 8, "unprovisionedGpus": 0, "costPerHour": 20.0}
    ]
