"""The live socket /ws/clusters/<id>/, driven through the real capacityweb.asgi.application
(origin check, session auth, URL routing, the configured channel layer)."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from tests.web.fixtures import gpu_node, ingest_and_evaluate, scenario_objects

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

ALLOWED_ORIGIN = b"http://127.0.0.1"
TIMEOUT_SECONDS = 5
MESSAGE_TYPES = ["heatmap.update", "pending.update", "recommendations.update"]


@pytest.fixture
def session_cookie(client: Any, user: Any) -> bytes:
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def communicator(
    cluster_id: int, *, cookie: bytes = b"", origin: bytes = ALLOWED_ORIGIN
) -> WebsocketCommunicator:
    from capacityweb.asgi import application

    headers = [(b"host", b"127.0.0.1"), (b"origin", origin)]
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, f"/ws/clusters/{cluster_id}/", headers=headers)


async def receive_snapshot(socket: WebsocketCommunicator) -> list[dict[str, Any]]:
    return [await socket.receive_json_from(TIMEOUT_SECONDS) for _ in MESSAGE_TYPES]


async def test_it_sends_the_latest_evaluation_on_connect(
    session_cookie: bytes, evaluation: Any
) -> None:
    socket = communicator(evaluation.cluster_id, cookie=session_cookie)
    connected, _ = await socket.connect(TIMEOUT_SECONDS)
    assert connected
    messages = await receive_snapshot(socket)
    await socket.disconnect()
    assert [m["type"] for m in messages] == MESSAGE_TYPES
    assert {(m["version"], m["cluster"], m["evaluation"]) for m in messages} == {
        (1, evaluation.cluster_id, evaluation.id)
    }
    assert messages[0]["data"]["cells"] == evaluation.result["cluster"]["gpus"]


async def test_it_closes_an_anonymous_socket_with_4401(evaluation: Any) -> None:
    socket = communicator(evaluation.cluster_id)
    await socket.connect(TIMEOUT_SECONDS)
    output = await socket.receive_output(TIMEOUT_SECONDS)
    assert output == {"type": "websocket.close", "code": 4401}


async def test_it_closes_a_socket_for_an_unknown_cluster_with_4404(
    session_cookie: bytes, evaluation: Any
) -> None:
    socket = communicator(evaluation.cluster_id + 1000, cookie=session_cookie)
    await socket.connect(TIMEOUT_SECONDS)
    output = await socket.receive_output(TIMEOUT_SECONDS)
    assert output == {"type": "websocket.close", "code": 4404}


async def test_it_refuses_a_cross_origin_socket(session_cookie: bytes, evaluation: Any) -> None:
    socket = communicator(
        evaluation.cluster_id, cookie=session_cookie, origin=b"http://evil.example"
    )
    connected, _ = await socket.connect(TIMEOUT_SECONDS)
    assert not connected


async def test_it_resends_the_snapshot_on_resync(session_cookie: bytes, evaluation: Any) -> None:
    socket = communicator(evaluation.cluster_id, cookie=session_cookie)
    await socket.connect(TIMEOUT_SECONDS)
    first = await receive_snapshot(socket)
    await socket.send_json_to({"type": "resync"})
    again = await receive_snapshot(socket)
    await socket.disconnect()
    assert again == first


async def test_it_ignores_a_frame_that_is_not_json(session_cookie: bytes, evaluation: Any) -> None:
    socket = communicator(evaluation.cluster_id, cookie=session_cookie)
    await socket.connect(TIMEOUT_SECONDS)
    await receive_snapshot(socket)
    await socket.send_to(text_data="not json")
    await socket.send_json_to({"type": "resync"})
    messages = await receive_snapshot(socket)
    await socket.disconnect()
    assert [m["type"] for m in messages] == MESSAGE_TYPES


async def test_it_answers_a_poll_for_the_shown_evaluation_with_nothing(
    session_cookie: bytes, evaluation: Any
) -> None:
    socket = communicator(evaluation.cluster_id, cookie=session_cookie)
    await socket.connect(TIMEOUT_SECONDS)
    await receive_snapshot(socket)
    await socket.send_json_to({"type": "resync", "evaluation": str(evaluation.id)})
    quiet = await socket.receive_nothing(timeout=1.0)
    await socket.disconnect()
    assert quiet


async def test_it_answers_a_poll_with_an_evaluation_published_elsewhere(
    session_cookie: bytes, evaluation: Any
) -> None:
    # stored by another process (`manage.py ingest` beside `make run`): no message came
    socket = communicator(evaluation.cluster_id, cookie=session_cookie)
    await socket.connect(TIMEOUT_SECONDS)
    await receive_snapshot(socket)
    objects = [*scenario_objects("reservation-idle-nodes"), gpu_node("elsewhere-1", 4)]
    newer = await sync_to_async(evaluate_again)(evaluation, objects)
    await socket.send_json_to({"type": "resync", "evaluation": str(evaluation.id)})
    messages = await receive_snapshot(socket)
    await socket.disconnect()
    assert {m["evaluation"] for m in messages} == {newer.id}


def evaluate_again(evaluation: Any, objects: list[Any]) -> Any:
    from topology.models import Cluster

    return ingest_and_evaluate(Cluster.objects.get(pk=evaluation.cluster_id), objects)


async def test_it_forwards_a_newly_published_evaluation(
    session_cookie: bytes, evaluation: Any
) -> None:
    from recommender import events

    socket = communicator(evaluation.cluster_id, cookie=session_cookie)
    await socket.connect(TIMEOUT_SECONDS)
    await receive_snapshot(socket)
    objects = [*scenario_objects("reservation-idle-nodes"), gpu_node("new-1", 4)]
    newer = await sync_to_async(evaluate_again)(evaluation, objects)
    await sync_to_async(events.publish_evaluation)(newer)
    messages = await receive_snapshot(socket)
    await socket.disconnect()
    assert {m["evaluation"] for m in messages} == {newer.id}
    assert messages[0]["data"]["cluster"]["gpus"] == newer.result["cluster"]["gpus"]


async def test_it_publishes_an_evaluation_as_one_group_message_of_three_texts(
    evaluation: Any,
) -> None:
    import asyncio
    import json

    from channels.layers import get_channel_layer

    from recommender import events

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(events.cluster_group(evaluation.cluster_id), channel)
    await sync_to_async(events.publish_evaluation)(evaluation)
    event = await asyncio.wait_for(layer.receive(channel), TIMEOUT_SECONDS)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(channel), 0.5)
    await layer.group_discard(events.cluster_group(evaluation.cluster_id), channel)
    messages = [json.loads(text) for text in event["texts"]]
    assert [m["type"] for m in messages] == MESSAGE_TYPES
    assert {m["evaluation"] for m in messages} == {evaluation.id}


async def test_it_sends_a_summary_of_pending_work_with_the_url_of_its_rows(
    session_cookie: bytes, evaluation: Any
) -> None:
    socket = communicator(evaluation.cluster_id, cookie=session_cookie)
    await socket.connect(TIMEOUT_SECONDS)
    pending = (await receive_snapshot(socket))[1]["data"]
    await socket.disconnect()
    assert "workloads" not in pending and "diagnoses" not in pending
    assert pending["pending"] == evaluation.pending_count
    assert pending["verdicts"] == {
        verdict: sum(1 for w in evaluation.result["workloads"] if w["verdict"] == verdict)
        for verdict in pending["verdicts"]
    }
    assert pending["dataUrl"].endswith(f"?evaluation={evaluation.id}&latest=false")


def list_communicator(*, cookie: bytes = b"") -> WebsocketCommunicator:
    from capacityweb.asgi import application

    headers = [(b"host", b"127.0.0.1"), (b"origin", ALLOWED_ORIGIN)]
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, "/ws/clusters/", headers=headers)


async def test_it_sends_the_overview_every_cluster_id_on_connect_and_on_resync(
    session_cookie: bytes, evaluation: Any
) -> None:
    socket = list_communicator(cookie=session_cookie)
    connected, _ = await socket.connect(TIMEOUT_SECONDS)
    assert connected
    first = await socket.receive_json_from(TIMEOUT_SECONDS)
    await socket.send_json_to({"type": "resync", "evaluation": ""})
    again = await socket.receive_json_from(TIMEOUT_SECONDS)
    await socket.disconnect()
    assert (first["type"], first["version"]) == ("clusters.update", 1)
    assert first["data"] == {"clusters": [evaluation.cluster_id]}
    assert again == first


async def test_it_closes_an_anonymous_overview_socket_with_4401(evaluation: Any) -> None:
    socket = list_communicator()
    await socket.connect(TIMEOUT_SECONDS)
    output = await socket.receive_output(TIMEOUT_SECONDS)
    assert output == {"type": "websocket.close", "code": 4401}
